/**
 * Where an export's load spends its time: groups a V8 CPU profile of the export bench's load
 * child (`EXPORT_BENCH_CPU_PROF=DIR node dist/bench/export.js 200000 json`) by what the code does,
 * for the table in docs/benchmarks.md "export" (LOAD_PROFILE in bench/export-report.ts).
 *
 * Only the load is counted: the samples from the first to the last one with `loadExportFile` (or
 * the scan for the file's keys or the build of the indexes set aside, which run after an await) on
 * the stack (the run's start-up before it is left out; garbage collection in between is counted).
 * Each sample goes to the innermost frame of our own code above it (a better-sqlite3 statement is
 * a native call, so SQLite's time is the self time of the store function that runs it), grouped by
 * that code's file and function.
 *
 * `node dist/bench/export-load-profile.js FILE.cpuprofile` prints seconds and shares per group.
 */
import { pathToFileURL } from 'node:url';
import { groupSamples, OUR_CODE, readCpuProfile, samplesOf } from './cpu-profile-samples.js';
import type { CallFrame, CpuProfile } from './cpu-profile-samples.js';

/** One group of the load's time. */
export interface LoadShare {
  part: string;
  seconds: number;
  percent: number;
}

const JSON_FN = /^(parse|stringify|JSON\.parse|JSON\.stringify)$/;

const READING = 'reading and decoding the file, parsing each row (each pass)';

/** The scan for the file's keys and the reads of its rows in key order (key-order.ts is shared with the CSV scan). */
const KEY_ORDER_CODE = /pipelines\/export\/(ndjson-order|key-order)/;

/** The functions of {@link KEY_ORDER_CODE} that read rows for the load, not scan. */
const KEY_ORDER_READS = new Set(['readNdjsonInKeyOrder', 'readRow']);

/** The group of one sample, from its innermost frame and the innermost frame of our code above it. */
function groupOf(leaf: CallFrame, own: CallFrame | undefined): string {
  if (leaf.functionName === '(garbage collector)') return 'garbage collection';
  if (own === undefined) {
    // Node's own code with none of ours above it: the file streams and their UTF-8 decoding.
    if (/string_decoder|streams|node:fs|fs\/streams/.test(leaf.url) || leaf.functionName === 'write')
      return READING;
    return 'other';
  }
  const { url, functionName } = own;
  if (/mirror\/store\/deferred-indexes/.test(url))
    return 'SQLite: building the indexes set aside, after the rows';
  if (/mirror\/checkpointer|mirror\/database/.test(url))
    return 'SQLite: BEGIN/COMMIT, with a checkpoint every ~40 MB of WAL (includes waiting for fsync)';
  if (KEY_ORDER_CODE.test(url))
    return KEY_ORDER_READS.has(functionName)
      ? READING
      : "the NDJSON scan: each line's place and key, then their sort";
  if (/pipelines\/export\/format/.test(url)) return READING;
  if (/mirror\/store\/child-history/.test(url))
    return /log|change/i.test(functionName)
      ? 'SQLite: change_log inserts'
      : 'SQLite: licence and payment-method upserts';
  if (/mirror\/store\/profiles/.test(url)) {
    if (
      JSON_FN.test(leaf.functionName) ||
      /Hash|digest|update/.test(leaf.functionName) ||
      /crypto/.test(leaf.url)
    )
      return 'JSON of the profile (for its hash), profile_extra and sections, SHA-1';
    return 'SQLite: domain and section upserts, with the JS of upsertProfiles around them';
  }
  if (/mirror\/store\/values|util\/time|mirror\/store\/export-load/.test(url))
    return 'validation and conversion (timestamps, types; each pass)';
  return 'other';
}

/** Groups the load's samples of `profile` (see the file comment). */
export function loadShares(profile: CpuProfile): LoadShare[] {
  const samples = samplesOf(profile);
  // The scan for the file's keys at the start and the index builds at the end run after an await,
  // with loadExportFile no longer on the stack: their frames count as the load's too.
  const inLoad = samples.map((s) =>
    s.stack.some(
      (f) =>
        f.functionName === 'loadExportFile' ||
        /mirror\/store\/deferred-indexes/.test(f.url) ||
        KEY_ORDER_CODE.test(f.url),
    ),
  );
  const first = inLoad.indexOf(true);
  const last = inLoad.lastIndexOf(true);
  if (first < 0) throw new Error('no sample has loadExportFile on its stack: is this a profile of the load?');
  const groups = groupSamples(samples.slice(first, last + 1), (s) =>
    groupOf(
      s.stack[0]!,
      s.stack.find((f) => OUR_CODE.test(f.url)),
    ),
  );
  const total = groups.reduce((sum, [, us]) => sum + us, 0);
  return groups.map(([part, us]) => ({ part, seconds: us / 1e6, percent: (100 * us) / total }));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const file = process.argv[2];
  if (file === undefined) {
    console.error('usage: node dist/bench/export-load-profile.js FILE.cpuprofile');
    process.exit(2);
  }
  const shares = loadShares(await readCpuProfile(file));
  const total = shares.reduce((s, x) => s + x.seconds, 0);
  console.log(`load: ${total.toFixed(1)} s of samples`);
  for (const s of shares)
    console.log(`${s.seconds.toFixed(1).padStart(6)} s ${s.percent.toFixed(0).padStart(3)} %  ${s.part}`);
}
