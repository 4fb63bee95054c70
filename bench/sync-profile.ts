/**
 * Where a sync spends its CPU: groups the V8 CPU profiles of one sync child (its main thread and
 * its mirror writer thread: `BENCH_CHILD_ARGS="--cpu-prof --cpu-prof-dir=DIR"` on a sync child of
 * bench/sync.ts) by what the code does, per profile fetched, for the table in docs/benchmarks.md
 * "sync" (SYNC_PROFILE in bench/sync-report.ts).
 *
 * Each sample goes to a group by its innermost frame, and for a call into better-sqlite3 (a native
 * call, so SQLite's own time is the self time of the store function that runs it) by the store
 * file that made it. Idle time is reported apart, not as a group.
 *
 * `node dist/bench/sync-profile.js DIR PROFILES` prints µs per profile per thread and group.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  groupSamples,
  inCompiledZodValidator,
  isHttpFrame,
  readCpuProfile,
  samplesOf,
} from './cpu-profile-samples.js';
import type { Sample } from './cpu-profile-samples.js';

/** One thread's share of the sync's CPU: µs per profile by group, and its idle time. */
export interface ThreadShares {
  thread: 'main' | 'writer';
  idleMicrosPerProfile: number;
  groups: Array<{ part: string; microsPerProfile: number }>;
}

const STARTUP =
  /modules\/|bootstrap\/realm|^compile|wrapSafe|readFileUtf8|internalModuleStat|realpathSync|package_json/;
const ASYNC = /runMicrotasks|nextTick|processTicksAndRejections|event_target|abort|timers|events|async_hooks/;

/** What the innermost frame does (the rules the table of 2026-11-27T03:00Z was grouped by). */
function kindOf(sample: Sample): string {
  const leaf = sample.stack[0]!;
  const { url, functionName: fn } = leaf;
  if (fn === '(idle)') return 'idle';
  if (fn === '(garbage collector)') return 'gc';
  if (fn === '(program)') return 'program';
  if (/better-sqlite3/.test(url) || (['exec', 'run', 'all', 'get', 'iterate'].includes(fn) && url === ''))
    return 'sqlite-call';
  if (isHttpFrame(leaf)) return 'http';
  if (/zod/.test(url) || /^RegExp/.test(fn) || inCompiledZodValidator(sample)) return 'validation';
  // JSON.parse of a body runs in these (inlined, it is their self time): on the main thread the
  // listing pages, on the writer thread the profile texts.
  if (
    (/api\/wire/.test(url) && fn === 'parseJsonText') ||
    (/profile-writer-apply/.test(url) && fn === 'memberOfText')
  )
    return 'parse-texts';
  if (/runtime\/queue/.test(url)) return 'queue';
  if (STARTUP.test(`${url} ${fn}`)) return 'startup';
  if (fn === 'postMessage' || /worker|internal\/per_context\/messageport/.test(url)) return 'messages';
  if (/http-transport|api\/|limiter/.test(url)) return 'client';
  if (fn === 'parse' || fn === 'JSON.parse' || fn === 'stringify') return 'json';
  if (ASYNC.test(`${fn} ${url}`)) return 'async';
  if (/mirror\/store\/child-history/.test(url)) return 'store:child-history';
  if (/mirror\/store\/profiles/.test(url)) return 'store:profiles';
  if (/mirror\/store\/values|util\/time/.test(url)) return 'store:values';
  if (/mirror\/store\/domains/.test(url)) return 'store:domains';
  if (/crypto/.test(url) || /Hash|digest/.test(fn)) return 'hash';
  if (/mirror\//.test(url)) return 'mirror-other';
  if (/pipelines\//.test(url)) return 'pipeline';
  return 'other';
}

/** The table's rows that more than one kind goes to. */
const CLIENT = 'our client: reading and parsing response bodies, retries, the request limiter';
const MAIN_SQLITE = "SQLite: building the indexes set aside, at the end; the listing's mirror reads";
const LISTING = 'listing: classifying pages, run bookkeeping';
const COMMITS = 'SQLite: BEGIN/COMMIT, checkpoints (includes waiting for fsync)';
const WRITER_VALUES = 'validation (zod, with its timestamp pattern), timestamps, JSON of the sections';

/** The table's rows, by thread, from the kinds above. */
const MAIN_ROWS: Record<string, string> = {
  http: 'HTTP (undici, sockets)',
  gc: 'garbage collection',
  client: CLIENT,
  json: CLIENT,
  'parse-texts': CLIENT,
  'sqlite-call': MAIN_SQLITE,
  'store:domains': MAIN_SQLITE,
  'mirror-other': MAIN_SQLITE,
  async: 'promises, events, abort signals, timers',
  startup: 'start-up (module loading)',
  validation: 'response validation (zod, with its timestamp pattern)',
  pipeline: LISTING,
  'store:values': LISTING,
  queue: 'task queue (src/runtime/queue.ts)',
  messages: 'handing batches to the writer thread',
};
const WRITER_ROWS: Record<string, string> = {
  'store:child-history': 'SQLite: licence and payment-method upserts',
  'store:profiles': 'SQLite: domain and section upserts',
  'sqlite-call': COMMITS,
  'mirror-other': COMMITS,
  'store:domains': 'SQLite: listing rows',
  'store:values': WRITER_VALUES,
  json: WRITER_VALUES,
  validation: WRITER_VALUES,
  'parse-texts': 'parsing the profile texts',
  gc: 'garbage collection',
  hash: 'SHA-1 of each profile',
  startup: 'start-up (module loading)',
};

function rowOf(thread: 'main' | 'writer', sample: Sample): string {
  const kind = kindOf(sample);
  if (kind === 'idle') return 'idle';
  const rows = thread === 'main' ? MAIN_ROWS : WRITER_ROWS;
  return (
    rows[kind] ??
    (thread === 'main' ? 'other (program, V8, Node internals)' : 'program, message passing, other')
  );
}

/** Groups the profiles in `dir` (one sync child's) per thread; `profiles` is how many it fetched. */
export async function syncShares(dir: string, profiles: number): Promise<ThreadShares[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile'));
  const out: ThreadShares[] = [];
  for (const file of files) {
    const samples = samplesOf(await readCpuProfile(join(dir, file)));
    const thread = samples.some((s) => s.stack.some((f) => /profile-writer-worker/.test(f.url)))
      ? 'writer'
      : 'main';
    const groups = groupSamples(samples, (s) => rowOf(thread, s));
    const per = (us: number): number => Math.round(us / profiles);
    out.push({
      thread,
      idleMicrosPerProfile: per(groups.find(([part]) => part === 'idle')?.[1] ?? 0),
      groups: groups
        .filter(([part]) => part !== 'idle')
        .map(([part, us]) => ({ part, microsPerProfile: per(us) })),
    });
  }
  if (!out.some((t) => t.thread === 'main') || !out.some((t) => t.thread === 'writer'))
    throw new Error(`${dir}: expected the profiles of a main thread and a writer thread`);
  return out.sort((a, b) => a.thread.localeCompare(b.thread));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [dir, count] = process.argv.slice(2);
  if (dir === undefined || !(Number(count) > 0)) {
    console.error('usage: node dist/bench/sync-profile.js DIR PROFILES');
    process.exit(2);
  }
  for (const t of await syncShares(dir, Number(count))) {
    const busy = t.groups.reduce((s, g) => s + g.microsPerProfile, 0);
    console.log(`${t.thread}: ${busy} µs per profile busy, ${t.idleMicrosPerProfile} idle`);
    for (const g of t.groups) console.log(`${String(g.microsPerProfile).padStart(6)}  ${g.part}`);
  }
}
