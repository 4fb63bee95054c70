/**
 * Export benchmark: an N-row export (default 1,000,000, then 200,000) of the simulator's catalogue with every
 * profile section (the default: no `fields`, about 1.9 KB per NDJSON row), as NDJSON and as CSV,
 * downloaded and loaded into a fresh mirror by the real `export` pipeline, and compared with a
 * bare better-sqlite3 loader of the same rows (the ceiling).
 *
 * - The simulator runs in this (parent) process; everything measured runs in child processes so
 *   each peak RSS (VmHWM: bench/peak-rss.ts) is the pipeline's own.
 * - Every section, because that is what users export. With them come the licences, payment
 *   methods, section rows and their history: most of the load's cost. The mirror is empty, so
 *   the load is its first load (pipelines/first-load.ts): the mirror's baseline, with no
 *   change_log rows, and the child tables' indexes built after the rows, as for a user who starts
 *   a mirror from an export.
 * - A download child runs `export --no-load` (create, poll, download: timed as `download`); a load
 *   child then runs `export`, which resumes the downloaded export: checksum check and batched load
 *   (timed as `load`), as a user's `export --no-load` followed by `export` does. `loadRowsPerSecond`
 *   is rows / load seconds. The ceiling runs right before the load child and right after it, and
 *   the ratio is against the mean of its two rates, so that the machine (shared) getting faster or
 *   slower during a format weighs on both sides alike.
 * - The ceiling child is the loader a user would write by hand instead, on plain `node` (Node's own
 *   heap settings, where the download and load children have the `domain-sync` bin's): it reads
 *   the same file, parses it (JSON.parse per line, or papaparse, a streaming CSV reader faster
 *   than the load's csv-parse, plus JSON.parse of the two list cells) and, into tables of its own (the three it fills, with the
 *   columns the product's contract names and their keys: contract-tables.ts), runs one prepared
 *   `INSERT … ON CONFLICT DO UPDATE` per domain, per licence and per payment method, in 2,000-row
 *   transactions. Until 2026-11-28 it wrote into the mirror's own schema (our migrations' tables
 *   and indexes), which made it about three times slower than such a loader, and the load's ratio
 *   to it three times too kind (docs/benchmarks.md "export").
 *
 * - At 200,000 rows the bench runs again with the simulator in its quirks mode, the service using
 *   the freedoms its spec leaves (fields of its own, other timestamp spellings, nulls), as the
 *   independent measurement's service does: its rows are larger and carry what the mirror keeps in
 *   profile_extra ({@link ExportBenchOptions.quirksRows}).
 * - At up to 200,000 rows ({@link AFTER_SYNC_MAX_ROWS}) the file is also loaded into a second
 *   mirror that a full sync of the same catalogue filled first (not timed), as for a user who syncs
 *   nightly and exports the whole catalogue; the ceiling runs once more after that load. No target.
 *
 * Run on its own after `npm run build`: `node dist/bench/export.js [rows] [json,csv]` prints the result as
 * JSON. `bench/run.ts` calls {@link runExportBench}.
 */
import { spawn } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import Papa from 'papaparse';
import { exportPipeline } from '../pipelines/export/index.js';
import { loadConfig } from '../src/config/load.js';
import { CLI_NODE_OPTIONS, applyCliHeapSettings } from '../src/util/heap-growth.js';
import { openRunContext } from '../src/runtime/run-context.js';
import { startSimulator } from '../src/simulator/index.js';
import type { RunningSimulator } from '../src/simulator/index.js';
import { CONTRACT_TABLE_SQL } from './contract-tables.js';
import { ownPeakRssMb } from './peak-rss.js';

/** Options of {@link runExportBench}. */
export interface ExportBenchOptions {
  /**
   * Catalogue sizes = rows exported, each measured on a simulator of its own: 1,000,000 rows, and
   * 200,000, the size of the independent measurement the targets came from, where the ceiling is
   * faster (its B-trees smaller) and the ratio was lower (docs/benchmarks.md "export").
   * @default [1_000_000, 200_000]
   */
  rows?: number | readonly number[];
  /**
   * Formats to run.
   * @default ['json', 'csv']
   */
  formats?: ReadonlyArray<'json' | 'csv'>;
  /**
   * Catalogue sizes measured again with the simulator in its quirks mode, the service using the
   * freedoms its spec leaves: fields of its own in the profile and in each licence and payment
   * method (kept in profile_extra), timestamps spelled `+00:00` or without milliseconds, nulls
   * (about 2.8 KB per NDJSON row against 2.2). The independent measurement runs against such a
   * service. Not loaded after a sync.
   * @default [200_000] when `rows` is not given, else []
   */
  quirksRows?: readonly number[];
}

/**
 * The largest catalogue at which the bench also loads the export into a mirror a full sync filled
 * first: the sync takes about 40 s at 200,000 domains on the machines this bench runs on, and would
 * take several minutes at 1,000,000.
 */
export const AFTER_SYNC_MAX_ROWS = 200_000;

/** Figures of one format. */
export interface ExportBenchFormatResult {
  format: 'json' | 'csv';
  rows: number;
  /** The simulator in its quirks mode (see {@link ExportBenchOptions.quirksRows}); runs before 2026-11-29T22:00Z had none. */
  quirks?: boolean;
  fileBytes: number;
  /** Create + poll + streamed download, seconds. */
  downloadSeconds: number;
  /** Resume + checksum + validation pass + batched load, seconds. */
  loadSeconds: number;
  loadRowsPerSecond: number;
  /** The higher peak RSS of the download child and the load child, MB. */
  peakRssMb: number;
  /** Peak RSS of each child: the download, the load. */
  downloadPeakRssMb: number;
  loadPeakRssMb: number;
  /**
   * The bare better-sqlite3 upsert of the same file (parse included), run before the load and
   * after it: the mean of the two runs' seconds and rates, each run's rate, the higher peak RSS.
   */
  ceiling: { seconds: number; rowsPerSecond: number; runs: [number, number]; peakRssMb: number };
  /** loadRowsPerSecond / ceiling.rowsPerSecond (the mean of its two runs); the target is ≥ 0.5. */
  ratioToCeiling: number;
  /** The targets: ratio ≥ 0.5 and peak RSS < 256 MB. */
  meetsTargets: boolean;
  /**
   * The same file loaded again, into a mirror that a full sync of the same catalogue filled first
   * (a user who syncs nightly and exports the whole catalogue): measured at sizes up to
   * {@link AFTER_SYNC_MAX_ROWS} (runs before that of 2026-11-29T08:12Z did not). No target: the ratio is
   * against the ceiling into its own empty tables, its run after the first load and one after this.
   */
  afterSync?: {
    loadSeconds: number;
    loadRowsPerSecond: number;
    loadPeakRssMb: number;
    ceilingRuns: [number, number];
    ratioToCeiling: number;
  };
}

/** What {@link runExportBench} returns. */
export interface ExportBenchResult {
  bench: 'export';
  /** The first catalogue size measured. */
  rows: number;
  /** Every catalogue size measured (runs before 2026-11-29T06:30Z measured one: `rows`). */
  sizes?: number[];
  /** The sections exported: every one (no `fields` sent). */
  fields: 'every section';
  node: string;
  formats: ExportBenchFormatResult[];
}

interface DownloadChildResult {
  downloadSeconds: number;
  filePath: string;
  fileBytes: number;
  peakRssMb: number;
  error?: string;
}

interface LoadChildResult {
  loadSeconds: number;
  rowsLoaded: number;
  peakRssMb: number;
  error?: string;
}

interface CeilingChildResult {
  seconds: number;
  rows: number;
  peakRssMb: number;
}

/**
 * Runs the export benchmark: starts a simulator with `rows` domains (no quota), then per format
 * a download child, the ceiling, a load child and the ceiling again. Temporary files are removed afterwards.
 */
export async function runExportBench(options: ExportBenchOptions = {}): Promise<ExportBenchResult> {
  const sizes = [options.rows ?? [1_000_000, 200_000]].flat();
  const formats = options.formats ?? ['json', 'csv'];
  const quirksRows = options.quirksRows ?? (options.rows === undefined ? [200_000] : []);
  const results: ExportBenchFormatResult[] = [];
  for (const rows of sizes) results.push(...(await runExportSize(rows, formats, false)));
  for (const rows of quirksRows) results.push(...(await runExportSize(rows, formats, true)));
  return {
    bench: 'export',
    rows: sizes[0]!,
    sizes,
    fields: 'every section',
    node: process.version,
    formats: results,
  };
}

/** The export benchmark at one catalogue size, every format, canonical or in quirks mode (see runExportBench). */
async function runExportSize(
  rows: number,
  formats: ReadonlyArray<'json' | 'csv'>,
  quirks: boolean,
): Promise<ExportBenchFormatResult[]> {
  const sim = await startSimulator({ domains: rows, timeScale: 0.0001, credits: null, seed: 11, quirks });
  const results: ExportBenchFormatResult[] = [];
  try {
    for (const format of formats) {
      const dir = await mkdtemp(join(tmpdir(), `domain-sync-bench-export-${format}-`));
      try {
        const download = (await runChild([
          '--download',
          dir,
          format,
          sim.baseUrl,
          sim.apiKey,
        ])) as DownloadChildResult;
        if (download.error) throw new Error(`export bench (${format}) download: ${download.error}`);
        // The downloaded export, for a second mirror that a sync fills before it loads the file.
        const syncedDir = rows <= AFTER_SYNC_MAX_ROWS && !quirks ? `${dir}-synced` : undefined;
        if (syncedDir !== undefined) await cp(dir, syncedDir, { recursive: true });
        const ceilingArgs = ['--ceiling', dir, format, download.filePath];
        const before = (await runChild(ceilingArgs)) as CeilingChildResult;
        const load = (await runChild(['--load', dir, format, sim.baseUrl, sim.apiKey])) as LoadChildResult;
        if (load.error) throw new Error(`export bench (${format}) load: ${load.error}`);
        const after = (await runChild(ceilingArgs)) as CeilingChildResult;
        const loadRowsPerSecond = load.rowsLoaded / load.loadSeconds;
        const ceilingRuns: [number, number] = [before.rows / before.seconds, after.rows / after.seconds];
        const ceilingRowsPerSecond = (ceilingRuns[0] + ceilingRuns[1]) / 2;
        const ratio = loadRowsPerSecond / ceilingRowsPerSecond;
        const peakRssMb = Math.max(download.peakRssMb, load.peakRssMb);
        const afterSync =
          syncedDir === undefined
            ? undefined
            : await loadAfterSync(sim, syncedDir, format, ceilingArgs, ceilingRuns[1]);
        results.push({
          format,
          rows: load.rowsLoaded,
          ...(quirks ? { quirks } : {}),
          fileBytes: download.fileBytes,
          downloadSeconds: round(download.downloadSeconds),
          loadSeconds: round(load.loadSeconds),
          loadRowsPerSecond: Math.round(loadRowsPerSecond),
          peakRssMb: round(peakRssMb),
          downloadPeakRssMb: round(download.peakRssMb),
          loadPeakRssMb: round(load.peakRssMb),
          ceiling: {
            seconds: round((before.seconds + after.seconds) / 2),
            rowsPerSecond: Math.round(ceilingRowsPerSecond),
            runs: [Math.round(ceilingRuns[0]), Math.round(ceilingRuns[1])],
            peakRssMb: round(Math.max(before.peakRssMb, after.peakRssMb)),
          },
          ratioToCeiling: round(ratio),
          meetsTargets: ratio >= 0.5 && peakRssMb < 256,
          ...(afterSync === undefined ? {} : { afterSync }),
        });
      } finally {
        await rm(dir, { recursive: true, force: true });
        await rm(`${dir}-synced`, { recursive: true, force: true });
      }
    }
  } finally {
    await sim.close();
  }
  return results;
}

/**
 * Fills the mirror in `dir` (which holds the downloaded export, not loaded) with a full sync of
 * the simulator's catalogue (bench/sync-child.ts, not timed), then loads the export into it with a
 * load child, and runs the ceiling once more: `ceilingBefore` is the ceiling's run before this.
 */
async function loadAfterSync(
  sim: RunningSimulator,
  dir: string,
  format: 'json' | 'csv',
  ceilingArgs: string[],
  ceilingBefore: number,
): Promise<ExportBenchFormatResult['afterSync']> {
  const job = { mode: 'sync-full', baseUrl: sim.baseUrl, apiKey: sim.apiKey, dir, concurrency: 8 };
  await runChild([], {
    script: join(import.meta.dirname, 'sync-child.js'),
    env: { BENCH_JOB: JSON.stringify(job) },
  });
  const load = (await runChild(['--load', dir, format, sim.baseUrl, sim.apiKey])) as LoadChildResult;
  if (load.error) throw new Error(`export bench (${format}) load after a sync: ${load.error}`);
  const after = (await runChild(ceilingArgs)) as CeilingChildResult;
  const ceilingRuns: [number, number] = [ceilingBefore, after.rows / after.seconds];
  const loadRowsPerSecond = load.rowsLoaded / load.loadSeconds;
  return {
    loadSeconds: round(load.loadSeconds),
    loadRowsPerSecond: Math.round(loadRowsPerSecond),
    loadPeakRssMb: round(load.peakRssMb),
    ceilingRuns: [Math.round(ceilingRuns[0]), Math.round(ceilingRuns[1])],
    ratioToCeiling: round(loadRowsPerSecond / ((ceilingRuns[0] + ceilingRuns[1]) / 2)),
  };
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}

/**
 * Runs a child of this bench: this module with `args` (`--download`, `--load`, `--ceiling`), or
 * another bench child (`script`, with `env`), and returns the JSON of its last output line.
 */
function runChild(args: string[], other?: { script: string; env: Record<string, string> }): Promise<unknown> {
  const script = other?.script ?? fileURLToPath(import.meta.url);
  // EXPORT_BENCH_CPU_PROF=DIR writes a CPU profile of each load child into DIR (docs/benchmarks.md).
  const profile = process.env.EXPORT_BENCH_CPU_PROF;
  const profiling =
    profile !== undefined && args[0] === '--load' ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [];
  // The download and load children stand for `domain-sync export`, so they run with the bin's Node
  // options; the ceiling stands for a loader written by hand, so it runs on plain `node`, with
  // Node's own heap settings (until 2026-11-28 it had the bin's options too).
  const nodeOptions = args[0] === '--ceiling' ? [] : CLI_NODE_OPTIONS;
  const child = spawn(process.execPath, [...nodeOptions, ...profiling, script, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...other?.env },
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`bench child ${args[0]} exited ${code}`));
      else resolve(JSON.parse(out.trim().split('\n').pop()!) as unknown);
    });
  });
}

/**
 * The download and load children, each `domain-sync export` in a process of its own on the same
 * mirror: `--download` runs `export --no-load` (create, poll, download), `--load` runs `export`,
 * which resumes the export downloaded before and loads it. Each is timed and prints its peak RSS.
 */
async function pipelineChild(
  step: 'download' | 'load',
  dir: string,
  format: 'json' | 'csv',
  baseUrl: string,
  apiKey: string,
): Promise<void> {
  const configPath = join(dir, 'config.json');
  await writeFile(
    configPath,
    JSON.stringify({
      api: { pollIntervalMs: 50 },
      database: { path: join(dir, 'mirror.sqlite') },
      exports: { dir: join(dir, 'exports') },
      log: { level: 'warn' },
    }),
  );
  // The CLI's process setting (src/cli/main.ts): this child stands for `domain-sync export`.
  applyCliHeapSettings();
  const { config, errors } = loadConfig({ env: {}, cwd: dir, configPath });
  if (config === null) throw new Error(errors.join('; '));
  const ctx = await openRunContext({ config, apiKey, baseUrl });
  try {
    const t = performance.now();
    const result = await exportPipeline(ctx, step === 'download' ? { format, load: false } : { format });
    const seconds = (performance.now() - t) / 1000;
    const error = result.status === 'done' ? {} : { error: JSON.stringify(result.error) };
    const output: DownloadChildResult | LoadChildResult =
      step === 'download'
        ? {
            downloadSeconds: seconds,
            filePath: result.stats.filePath!,
            fileBytes: result.stats.bytes ?? 0,
            peakRssMb: ownPeakRssMb(),
            ...error,
          }
        : { loadSeconds: seconds, rowsLoaded: result.stats.rowsLoaded, peakRssMb: ownPeakRssMb(), ...error };
    process.stdout.write(JSON.stringify(output));
  } finally {
    await ctx.close();
  }
}

const CEILING_DOMAIN = `
  INSERT INTO domains (domain_normalized, domain, company_name, status, last_enriched_at, operator_name,
                       operator_legal_entity_name, operator_country, brand_name, brand_slug,
                       first_synced_at, last_synced_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (domain_normalized) DO UPDATE SET
    domain = excluded.domain, company_name = excluded.company_name, status = excluded.status,
    last_enriched_at = excluded.last_enriched_at, operator_name = excluded.operator_name,
    operator_legal_entity_name = excluded.operator_legal_entity_name,
    operator_country = excluded.operator_country, brand_name = excluded.brand_name,
    brand_slug = excluded.brand_slug, last_synced_at = excluded.last_synced_at`;

const CEILING_LICENCE = `
  INSERT INTO licenses (domain_normalized, jurisdiction, license_number, status, source_url,
                        first_seen_at, last_confirmed_at)
  VALUES (?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (domain_normalized, jurisdiction, license_number) DO UPDATE SET
    status = excluded.status, source_url = excluded.source_url, first_seen_at = excluded.first_seen_at,
    last_confirmed_at = excluded.last_confirmed_at`;

const CEILING_PAYMENT_METHOD = `
  INSERT INTO payment_methods (domain_normalized, normalized_name, category, confidence,
                               first_seen_at, last_confirmed_at)
  VALUES (?, ?, ?, ?, ?, ?)
  ON CONFLICT (domain_normalized, normalized_name) DO UPDATE SET
    category = excluded.category, confidence = excluded.confidence, first_seen_at = excluded.first_seen_at,
    last_confirmed_at = excluded.last_confirmed_at`;

/** One row of the file as the ceiling loader sees it. */
interface CeilingRow {
  domain: unknown[];
  licenses: unknown;
  paymentMethods: unknown;
}

type Item = Record<string, unknown>;

function listOf(value: unknown): Item[] {
  return Array.isArray(value) ? (value as Item[]) : [];
}

/**
 * The ceiling child: parse the same file and upsert each domain, licence and payment method with
 * one bare prepared statement each, into the contract's tables (contract-tables.ts).
 */
async function ceilingChild(dir: string, format: 'json' | 'csv', filePath: string): Promise<void> {
  const dbPath = join(dir, 'ceiling.sqlite');
  // A fresh file for each run (the ceiling runs twice per format): every run inserts every row.
  for (const suffix of ['', '-wal', '-shm']) await rm(`${dbPath}${suffix}`, { force: true });
  const db = new Database(dbPath);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  // The three tables it fills, as a tool keeping only the contract's tables makes them.
  for (const table of ['domains', 'licenses', 'payment_methods'] as const) db.exec(CONTRACT_TABLE_SQL[table]);
  const upsertDomain = db.prepare(CEILING_DOMAIN);
  const upsertLicence = db.prepare(CEILING_LICENCE);
  const upsertPaymentMethod = db.prepare(CEILING_PAYMENT_METHOD);
  const now = new Date().toISOString();
  let batch: CeilingRow[] = [];
  const flush = db.transaction((items: CeilingRow[]) => {
    for (const item of items) {
      const key = item.domain[0];
      upsertDomain.run(...item.domain, now, now);
      for (const l of listOf(item.licenses)) {
        upsertLicence.run(
          key,
          l.jurisdiction,
          l.license_number,
          l.status ?? null,
          l.source_url ?? null,
          l.first_seen_at ?? null,
          l.last_confirmed_at ?? null,
        );
      }
      for (const m of listOf(item.paymentMethods)) {
        upsertPaymentMethod.run(
          key,
          m.normalized_name,
          m.category ?? null,
          m.confidence ?? null,
          m.first_seen_at ?? null,
          m.last_confirmed_at ?? null,
        );
      }
    }
  });
  let rows = 0;
  const t = performance.now();
  const push = (item: CeilingRow): void => {
    batch.push(item);
    rows += 1;
    if (batch.length >= 2000) {
      flush(batch);
      batch = [];
    }
  };
  if (format === 'json') {
    let rest = '';
    for await (const chunk of createReadStream(filePath, { encoding: 'utf8', highWaterMark: 1 << 20 })) {
      const lines = (rest + (chunk as string)).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        if (!line) continue;
        const p = JSON.parse(line) as {
          domain_normalized: string;
          domain?: string;
          company_name?: string;
          status?: string;
          last_enriched_at?: string;
          operator?: { name?: string; legal_entity_name?: string; country_of_incorporation?: string };
          brand?: { name?: string; slug?: string };
          licenses?: unknown;
          payment_methods?: unknown;
        };
        push({
          domain: [
            p.domain_normalized,
            p.domain ?? null,
            p.company_name ?? null,
            p.status ?? null,
            p.last_enriched_at ?? null,
            p.operator?.name ?? null,
            p.operator?.legal_entity_name ?? null,
            p.operator?.country_of_incorporation ?? null,
            p.brand?.name ?? null,
            p.brand?.slug ?? null,
          ],
          licenses: p.licenses,
          paymentMethods: p.payment_methods,
        });
      }
    }
  } else {
    let licences = -1;
    let paymentMethods = -1;
    let header = true;
    const cell = (text: string | undefined): unknown =>
      text === undefined || text === '' ? null : (JSON.parse(text) as unknown);
    // papaparse, the faster of the two well-kept streaming CSV readers measured (docs/benchmarks.md
    // "export"): a loader written by hand has no reason to pick the slower one.
    const records = createReadStream(filePath).pipe(
      Papa.parse(Papa.NODE_STREAM_INPUT, { skipEmptyLines: true }),
    );
    for await (const record of records as AsyncIterable<string[]>) {
      if (header) {
        header = false;
        licences = record.indexOf('licenses');
        paymentMethods = record.indexOf('payment_methods');
        continue;
      }
      push({
        domain: record.slice(0, 10).map((v) => (v === '' ? null : v)),
        licenses: cell(record[licences]),
        paymentMethods: cell(record[paymentMethods]),
      });
    }
  }
  if (batch.length > 0) flush(batch);
  const seconds = (performance.now() - t) / 1000;
  const written = (db.prepare('SELECT count(*) AS n FROM domains').get() as { n: number }).n;
  db.close();
  // The file's domains are distinct: a loader that wrote fewer rows than it read measured nothing.
  if (written !== rows) throw new Error(`export ceiling: ${written} domains written of ${rows} rows read`);
  const result: CeilingChildResult = { seconds, rows, peakRssMb: ownPeakRssMb() };
  process.stdout.write(JSON.stringify(result));
}

// Executed directly: `node dist/bench/export.js [rows]` runs the bench; `--download`, `--load` and
// `--ceiling` are its children.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [flag, a, b, c, d] = process.argv.slice(2);
  if (flag === '--download' || flag === '--load')
    await pipelineChild(flag === '--download' ? 'download' : 'load', a!, b as 'json' | 'csv', c!, d!);
  else if (flag === '--ceiling') await ceilingChild(a!, b as 'json' | 'csv', c!);
  else {
    const rows = flag === undefined ? undefined : Number(flag);
    const formats = a === undefined ? undefined : (a.split(',') as Array<'json' | 'csv'>);
    process.stdout.write(
      `${JSON.stringify(await runExportBench({ ...(rows === undefined ? {} : { rows }), ...(formats ? { formats } : {}) }), null, 2)}\n`,
    );
  }
}

// bench/run.ts reads the figures and notes from this module.
export { benchFigures, benchNotes } from './export-report.js';
