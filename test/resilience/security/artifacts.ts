/**
 * The suite-wide key scan: every API key a test hands to the CLI or the simulator is registered,
 * the stdout and stderr of every child process a test starts are kept (recorded where the child
 * is started: `child-output.ts`), and every temp dir is scanned before it is removed
 * (`tempDir()`). `global-setup.ts` creates the directory, exposes it in {@link ARTIFACTS_ENV},
 * and at the end scans everything for every registered key.
 *
 * Without the variable (a helper used outside vitest) every function here does nothing.
 */
import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeHit, keyId, needlesFor, scanPath, type KeyHit, type KeyNeedle } from './key-scan.js';

/** Directory of the suite-wide artifacts; set by `global-setup.ts`, inherited by workers. */
export const ARTIFACTS_ENV = 'KEY_SCAN_ARTIFACTS_DIR';

/**
 * Where a key came from. `simulator-default` is the simulator's built-in key, which is public:
 * `--help` and `simulate` print it as an example. Output of a CLI run is only searched for it
 * when that run was given it.
 */
export type KeySource = 'cli-env' | 'aws-env' | 'simulator' | 'simulator-default' | 'scenario';

/**
 * The AWS credentials' secret parts a child may be given (the AWS SDK's default chain reads them):
 * searched for like the API key. The access key id is an identifier, not a secret (it travels in
 * every signed request's `Authorization` header and the store's error bodies may repeat it).
 */
export const AWS_SECRET_ENV = ['AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'] as const;

interface KeyEntry {
  key: string;
  source: KeySource;
}

/** What is recorded about one CLI run next to its output (never the key). */
interface CliRunMeta {
  command: string;
  test: string;
  cwd: string;
  /** {@link keyId} of the `DOMAIN_SYNC_API_KEY` the run was given, if any. */
  givenKeyId: string | null;
  code: number | null;
}

/** One temp dir scanned before removal. */
interface DirRecord {
  dir: string;
  test: string;
  files: number;
  bytes: number;
  /** Time the scan took in the worker. */
  ms: number;
  hits: KeyHit[];
}

/** What the end-of-suite scan found. */
export interface SuiteScanReport {
  keys: number;
  keysTooShort: number;
  forms: number;
  cliRuns: number;
  cliFiles: number;
  cliBytes: number;
  dirs: number;
  dirFiles: number;
  dirBytes: number;
  /** Worker time spent scanning temp dirs, summed over workers. */
  dirScanMs: number;
  hits: string[];
}

const registered = new Set<string>();
let runCounter = 0;

/** The artifact directory, or undefined outside a suite run with the global setup. */
export function artifactsDir(): string | undefined {
  const dir = process.env[ARTIFACTS_ENV];
  return dir && existsSync(dir) ? dir : undefined;
}

/** Adds a key to the registry the end-of-suite scan searches for. */
export function registerKey(key: string | undefined, source: KeySource): void {
  const dir = artifactsDir();
  if (!dir || !key || registered.has(`${source}\0${key}`)) return;
  registered.add(`${source}\0${key}`);
  appendFileSync(join(dir, 'keys.jsonl'), `${JSON.stringify({ key, source } satisfies KeyEntry)}\n`);
}

/** Keeps one child process's stdout and stderr (raw bytes) for the end-of-suite scan. */
export function recordCliRun(
  test: string,
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
  code: number | null,
  stdout: Buffer,
  stderr: Buffer,
): void {
  const dir = artifactsDir();
  if (!dir) return;
  const givenKey = env.DOMAIN_SYNC_API_KEY;
  registerKey(givenKey, 'cli-env');
  // A PostgreSQL password given to `publish` gets the API key's protection (docs/destinations.md).
  registerKey(env.PGPASSWORD, 'cli-env');
  for (const name of AWS_SECRET_ENV) registerKey(env[name], 'aws-env');
  const cliDir = join(dir, 'cli');
  mkdirSync(cliDir, { recursive: true });
  // A worker may evaluate this module again for its next test file: the random part keeps names
  // unique when the counter starts over.
  const name = `${process.pid}-${++runCounter}-${randomBytes(4).toString('hex')}`;
  writeFileSync(join(cliDir, `${name}.stdout`), stdout);
  writeFileSync(join(cliDir, `${name}.stderr`), stderr);
  const meta: CliRunMeta = {
    // The command name only: an argument could be a key a test passes on purpose.
    command: args.find((a) => /^[a-z]+$/.test(a)) ?? '(none)',
    test,
    cwd,
    givenKeyId: givenKey ? keyId(givenKey) : null,
    code,
  };
  writeFileSync(join(cliDir, `${name}.meta.json`), JSON.stringify(meta));
}

/**
 * Scans a temp dir for every key registered so far, before it is removed, and records the
 * result for the end-of-suite report. A key registered later by another test cannot be in this
 * dir: only processes given a key can write it, and a test registers its keys before using them.
 */
export function scanTempDirBeforeRemoval(test: string, path: string): void {
  const dir = artifactsDir();
  if (!dir || !existsSync(path)) return;
  const started = performance.now();
  const { needles } = needlesFor(readRegistry(dir).map((e) => e.key));
  const result = scanPath(path, needles);
  const record: DirRecord = { dir: path, test, ...result, ms: Math.round(performance.now() - started) };
  appendFileSync(join(dir, `dirs-${process.pid}.jsonl`), `${JSON.stringify(record)}\n`);
}

/**
 * The end-of-suite scan: every kept CLI output searched for every registered key (the public
 * simulator default only in runs given it), plus the temp dir records. Hits name file, offset,
 * key id and form, never the key.
 */
export function scanArtifacts(dir: string): SuiteScanReport {
  const entries = readRegistry(dir);
  const all = needlesFor(entries.map((e) => e.key));
  const publicIds = new Set(entries.filter((e) => e.source === 'simulator-default').map((e) => keyId(e.key)));
  const privateKeys = entries.filter((e) => !publicIds.has(keyId(e.key))).map((e) => e.key);
  const privateNeedles = needlesFor(privateKeys).needles;
  const report: SuiteScanReport = {
    keys: new Set(entries.map((e) => e.key)).size,
    keysTooShort: all.tooShort,
    forms: all.needles.length,
    cliRuns: 0,
    cliFiles: 0,
    cliBytes: 0,
    dirs: 0,
    dirFiles: 0,
    dirBytes: 0,
    dirScanMs: 0,
    hits: [],
  };
  const cliDir = join(dir, 'cli');
  if (existsSync(cliDir)) {
    for (const name of readdirSync(cliDir).filter((n) => n.endsWith('.meta.json'))) {
      const meta = JSON.parse(readFileSync(join(cliDir, name), 'utf8')) as CliRunMeta;
      const base = name.slice(0, -'.meta.json'.length);
      const needles: KeyNeedle[] = [
        ...privateNeedles,
        ...all.needles.filter((n) => publicIds.has(n.keyId) && n.keyId === meta.givenKeyId),
      ];
      report.cliRuns += 1;
      for (const stream of ['stdout', 'stderr']) {
        const file = join(cliDir, `${base}.${stream}`);
        const scanned = scanPath(file, needles);
        report.cliFiles += scanned.files;
        report.cliBytes += scanned.bytes;
        for (const hit of scanned.hits)
          report.hits.push(`${describeHit(hit)} — ${stream} of \`${meta.command}\` in "${meta.test}"`);
      }
    }
  }
  for (const name of readdirSync(dir).filter((n) => n.startsWith('dirs-'))) {
    for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
      if (!line) continue;
      const record = JSON.parse(line) as DirRecord;
      report.dirs += 1;
      report.dirFiles += record.files;
      report.dirBytes += record.bytes;
      report.dirScanMs += record.ms;
      for (const hit of record.hits) report.hits.push(`${describeHit(hit)} — temp dir of "${record.test}"`);
    }
  }
  return report;
}

function readRegistry(dir: string): KeyEntry[] {
  const file = join(dir, 'keys.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as KeyEntry);
}
