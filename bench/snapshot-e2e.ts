/**
 * End-to-end snapshot benchmark (part of `npm run bench -- snapshot`): what a user runs.
 *
 * A mirror is made the way users make one: the real CLI's `sync` (a child process) against an
 * in-process simulator catalogue of `domains` domains (about 11 rows per domain over all tables).
 * Then, alternately, in fresh child processes, timed from spawn to exit (process start-up and
 * imports included):
 *
 * - (a) `cli`: `node dist/src/cli/main.js snapshot --db … --out …` (every table, default options,
 *   with the bin's Node options);
 * - (b) `duckdb`: a bare DuckDB snapshot of the same tables ({@link duckdbChild}): better-sqlite3
 *   reads each table, the DuckDB Appender fills an in-memory table, and
 *   `COPY … TO '…parquet' (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1)` writes it: the
 *   same codec and level as ours and the same column types (timestamps `TIMESTAMP WITH TIME
 *   ZONE`, integers BIGINT, booleans BOOLEAN).
 *
 * Peak RSS of each child comes from a tiny `--import` module (`peak-rss-on-exit.ts`) that writes
 * its own peak RSS (bench/peak-rss.ts) to a file when the process exits; both sides load it.
 *
 * `node dist/bench/snapshot-e2e.js [domains] [rounds]` runs it alone.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { startSimulator } from '../src/simulator/index.js';
import { CLI_NODE_OPTIONS } from '../src/util/heap-growth.js';
import { profileBreakdown } from './cpu-profile-breakdown.js';
import type { PhaseShare } from './cpu-profile-breakdown.js';
import { median, round } from './stats.js';
import { SNAPSHOT_TABLES } from '../src/mirror/store/snapshot.js';

/** Options of {@link runSnapshotE2eBench}. */
export interface SnapshotE2eBenchOptions {
  /** Simulator catalogue size; the mirror gets about 11 rows per domain. @default 20_000 */
  domains?: number;
  /** Alternating rounds (duckdb, cli, duckdb, cli, …); figures are medians. @default 5 */
  rounds?: number;
}

/** One timed child. */
export interface E2eRun {
  wallSeconds: number;
  peakRssMb: number;
  bytes: number;
}

/** What {@link runSnapshotE2eBench} returns. */
export interface SnapshotE2eBenchResult {
  domains: number;
  rows: number;
  rowsByTable: Record<string, number>;
  /** Seconds of the CLI `sync` that made the mirror (not timed against anything). */
  syncSeconds: number;
  mirrorMb: number;
  cli: E2eRun & { runs: E2eRun[] };
  duckdb: E2eRun & { runs: E2eRun[] };
  /** cli median wall / duckdb median wall. Target ≤ 2. */
  ratio: number;
  /**
   * One more CLI run under `--cpu-prof` (slower than the timed runs by the profiler's cost):
   * its wall time, the part the profile covers, and that part split into phases.
   */
  profile: { wallSeconds: number; profiledMs: number; phases: PhaseShare[] };
  targets: { ratioMax: number; peakRssMbMax: number };
  meetsTargets: { ratio: boolean; peakRss: boolean };
}

const ROOT = resolve(import.meta.dirname, '..', '..');
const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');
const RSS_HOOK = pathToFileURL(join(import.meta.dirname, 'peak-rss-on-exit.js')).href;
const TARGET_RATIO = 2;
/** Our default codec and level (src/warehouse/parquet-writer.ts), given to DuckDB too. */
const ZSTD_LEVEL = 1;
const TARGET_PEAK_RSS_MB = 512;

/** Runs the benchmark (see the file comment). Needs the compiled files (`npm run build`). */
export async function runSnapshotE2eBench(
  options: SnapshotE2eBenchOptions = {},
): Promise<SnapshotE2eBenchResult> {
  const domains = options.domains ?? 20_000;
  const rounds = options.rounds ?? 5;
  const dir = await mkdtemp(join(tmpdir(), 'domain-sync-bench-snapshot-e2e-'));
  try {
    const db = join(dir, 'mirror.sqlite');
    const syncSeconds = await syncMirror(dir, db, domains);
    const rowsByTable = countRows(db);
    const mirrorMb = (await stat(db)).size / 1e6;
    const cliRuns: E2eRun[] = [];
    const duckRuns: E2eRun[] = [];
    for (let i = 0; i < rounds; i++) {
      duckRuns.push(
        await timeChild(dir, [fileURLToPath(import.meta.url), '--duckdb-child', db, join(dir, 'duck')], []),
      );
      cliRuns.push(
        await timeChild(dir, [CLI, 'snapshot', '--db', db, '--out', join(dir, 'cli')], CLI_NODE_OPTIONS),
      );
    }
    const profDir = join(dir, 'prof');
    const profiled = await timeChild(
      dir,
      [CLI, 'snapshot', '--db', db, '--out', join(dir, 'cli')],
      [...CLI_NODE_OPTIONS, '--cpu-prof', `--cpu-prof-dir=${profDir}`],
    );
    const [profFile] = await readdir(profDir);
    const breakdown = await profileBreakdown(join(profDir, profFile!));
    const cli = summarise(cliRuns);
    const duckdb = summarise(duckRuns);
    const ratio = round(cli.wallSeconds / duckdb.wallSeconds, 2);
    return {
      domains,
      rows: Object.values(rowsByTable).reduce((a, b) => a + b, 0),
      rowsByTable,
      syncSeconds: round(syncSeconds, 1),
      mirrorMb: round(mirrorMb, 1),
      cli,
      duckdb,
      ratio,
      profile: { wallSeconds: round(profiled.wallSeconds, 2), ...breakdown },
      targets: { ratioMax: TARGET_RATIO, peakRssMbMax: TARGET_PEAK_RSS_MB },
      meetsTargets: { ratio: ratio <= TARGET_RATIO, peakRss: cli.peakRssMb < TARGET_PEAK_RSS_MB },
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A full `sync` by the CLI against a fresh simulator catalogue; returns its seconds. */
async function syncMirror(dir: string, db: string, domains: number): Promise<number> {
  const sim = await startSimulator({ domains, seed: 1 });
  try {
    const config = join(dir, 'config.json');
    // No request-rate limit: the service's own default (10/s) would make this take minutes.
    await writeFile(
      config,
      JSON.stringify({ api: { baseUrl: sim.baseUrl, concurrency: 8, requestsPerSecond: 1_000_000 } }),
    );
    const started = performance.now();
    const { code, stderr } = await runNode([CLI, '--config', config, 'sync', '--db', db], dir, {
      DOMAIN_SYNC_API_KEY: sim.apiKey,
    });
    if (code !== 0) throw new Error(`sync failed (exit ${code}): ${stderr.slice(-2000)}`);
    return (performance.now() - started) / 1000;
  } finally {
    await sim.close();
  }
}

function countRows(path: string): Record<string, number> {
  const db = new Database(path, { readonly: true });
  try {
    return Object.fromEntries(
      SNAPSHOT_TABLES.map((t) => [
        t,
        (db.prepare(`SELECT count(*) AS n FROM "${t}"`).get() as { n: number }).n,
      ]),
    );
  } finally {
    db.close();
  }
}

async function timeChild(dir: string, args: string[], nodeOptions: readonly string[]): Promise<E2eRun> {
  const out = args.at(-1)!;
  await rm(out, { recursive: true, force: true });
  const rssFile = join(dir, 'rss.txt');
  await rm(rssFile, { force: true });
  const started = performance.now();
  const { code, stderr } = await runNode([...nodeOptions, '--import', RSS_HOOK, ...args], dir, {
    BENCH_RSS_FILE: rssFile,
  });
  const wallSeconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`${args.join(' ')} failed (exit ${code}): ${stderr.slice(-2000)}`);
  const peakRssMb = Number(await readFile(rssFile, 'utf8'));
  return { wallSeconds, peakRssMb, bytes: await parquetBytes(out) };
}

/** Total size of the `.parquet` files under `dir`. */
async function parquetBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile() && entry.name.endsWith('.parquet'))
      total += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return total;
}

function runNode(
  args: string[],
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number | null; stderr: string }> {
  // No DOMAIN_SYNC_* variable of the caller's shell leaks in; no config file in `cwd`.
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('DOMAIN_SYNC_')));
  const child = spawn(process.execPath, args, {
    cwd,
    env: { ...base, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
}

function summarise(runs: E2eRun[]): E2eRun & { runs: E2eRun[] } {
  return {
    wallSeconds: round(median(runs.map((r) => r.wallSeconds)), 2),
    peakRssMb: round(median(runs.map((r) => r.peakRssMb)), 0),
    bytes: median(runs.map((r) => r.bytes)),
    runs: runs.map((r) => ({ ...r, wallSeconds: round(r.wallSeconds, 3), peakRssMb: round(r.peakRssMb, 0) })),
  };
}

/** DuckDB type of a mirror column, the same mapping as `logicalType` in src/mirror/store/snapshot.ts. */
function duckType(
  name: string,
  declared: string,
): 'TIMESTAMPTZ' | 'BIGINT' | 'DOUBLE' | 'BOOLEAN' | 'VARCHAR' {
  if (name === 'at' || name.endsWith('_at')) return 'TIMESTAMPTZ';
  if (['served_from_cache', 'billable'].includes(name)) return 'BOOLEAN';
  const upper = declared.toUpperCase();
  if (upper === 'INTEGER') return 'BIGINT';
  if (upper === 'REAL') return 'DOUBLE';
  return 'VARCHAR';
}

/**
 * The bare DuckDB snapshot (child side): every table read with better-sqlite3 (`.raw()`, exact
 * integers), appended into an in-memory DuckDB table (timestamps as VARCHAR, cast on COPY), then
 * `COPY (SELECT …) TO 'x.parquet' (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1)`.
 */
async function duckdbChild(sqlitePath: string, outDir: string): Promise<void> {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const { mkdirSync } = await import('node:fs');
  mkdirSync(outDir, { recursive: true });
  const sqlite = new Database(sqlitePath, { readonly: true });
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    await connection.run("SET TimeZone = 'UTC'");
    for (const table of SNAPSHOT_TABLES) {
      const info = sqlite
        .prepare(`SELECT name, type FROM pragma_table_info(?) ORDER BY cid`)
        .all(table) as Array<{
        name: string;
        type: string;
      }>;
      const types = info.map((c) => duckType(c.name, c.type));
      const stored = types.map((t) => (t === 'TIMESTAMPTZ' ? 'VARCHAR' : t === 'BOOLEAN' ? 'BIGINT' : t));
      await connection.run(
        `CREATE TABLE "${table}" (${info.map((c, i) => `"${c.name}" ${stored[i]}`).join(', ')})`,
      );
      const appender = await connection.createAppender(table);
      const select = sqlite
        .prepare(`SELECT ${info.map((c) => `"${c.name}"`).join(', ')} FROM "${table}"`)
        .raw(true)
        .safeIntegers(true);
      for (const row of select.iterate() as IterableIterator<unknown[]>) {
        for (let i = 0; i < row.length; i++) {
          const v = row[i];
          if (v === null) appender.appendNull();
          else if (stored[i] === 'BIGINT') appender.appendBigInt(v as bigint);
          else if (stored[i] === 'DOUBLE') appender.appendDouble(Number(v));
          else appender.appendVarchar(String(v));
        }
        appender.endRow();
      }
      appender.closeSync();
      const columns = info
        .map((c, i) =>
          types[i] === 'TIMESTAMPTZ'
            ? `CAST("${c.name}" AS TIMESTAMPTZ) AS "${c.name}"`
            : types[i] === 'BOOLEAN'
              ? `("${c.name}" <> 0) AS "${c.name}"`
              : `"${c.name}"`,
        )
        .join(', ');
      const out = join(outDir, `${table}.parquet`).replaceAll("'", "''");
      await connection.run(
        `COPY (SELECT ${columns} FROM "${table}") TO '${out}' (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL ${ZSTD_LEVEL})`,
      );
      await connection.run(`DROP TABLE "${table}"`);
    }
  } finally {
    connection.closeSync();
    instance.closeSync();
    sqlite.close();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [flag, a, b] = process.argv.slice(2);
  if (flag === '--duckdb-child' && a !== undefined && b !== undefined) {
    await duckdbChild(a, b);
  } else {
    const domains = flag === undefined ? undefined : Number(flag);
    const rounds = a === undefined ? undefined : Number(a);
    console.log(JSON.stringify(await runSnapshotE2eBench({ domains, rounds }), null, 2));
  }
}
