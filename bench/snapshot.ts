/**
 * Snapshot benchmark: 1,000,000 licence rows from a SQLite file to Parquet, written by
 *
 * - (a) `ours`: `writeParquetFile` (hyparquet-writer) streaming from better-sqlite3 `.iterate()`;
 * - (b) `duckdb`: @duckdb/node-api. Its `sqlite` extension cannot be downloaded here, so the
 *   timed work is "read the rows from SQLite with better-sqlite3 + append them into an in-memory
 *   DuckDB table through the Appender + `COPY (SELECT … casts …) TO 'x.parquet' (FORMAT parquet)`";
 *   the append and COPY phases are also reported separately;
 * - (c) `parquetjs-lite`: `appendRow` per row (the baseline the issue replaced: it has no logical
 *   timestamp type with UTC, and silently corrupts INT64 values above 2^53, which licence rows do
 *   not contain, so its file here is correct).
 *
 * Every writer uses SNAPPY, 100,000-row row groups, and runs in its own child process so that its
 * peak RSS (VmHWM: bench/peak-rss.ts) is its own. Wall time is measured inside the child
 * from opening the SQLite file to the closed Parquet file (process start and imports excluded).
 *
 * Then the upload of a large snapshot to S3-compatible storage against a bare SDK upload of the
 * same files (bench/snapshot-upload.ts), in `upload`.
 *
 * Run on its own after `npm run build`: `node dist/bench/snapshot.js [rows]` prints the
 * {@link BenchResult} as JSON. `bench/run.ts` calls {@link runSnapshotBench}.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { CLI_NODE_OPTIONS, applyCliHeapSettings, raiseYoungGenerationCap } from '../src/util/heap-growth.js';
import { writeParquetFile } from '../src/warehouse/index.js';
import { Prng } from '../src/simulator/prng.js';
import type { ColumnSpec } from '../src/warehouse/index.js';
import { runSnapshotE2eBench } from './snapshot-e2e.js';
import type { SnapshotE2eBenchResult } from './snapshot-e2e.js';
import { runSnapshotUploadBench } from './snapshot-upload.js';
import type { SnapshotUploadBenchResult } from './snapshot-upload.js';
import { median, round } from './stats.js';
import { ownPeakRssMb } from './peak-rss.js';

/** Writers compared by the benchmark. */
export type SnapshotBenchWriter = 'ours' | 'duckdb' | 'parquetjs-lite';

/** Options of {@link runSnapshotBench}. */
export interface SnapshotBenchOptions {
  /**
   * Licence rows to generate and write.
   * @default 1_000_000
   */
  rows?: number;
  /**
   * Runs per writer; the reported figures are the medians (all runs are kept in `runs`).
   * @default 1
   */
  runs?: number;
  /**
   * Writers to run. The ratios need both `ours` and `duckdb`.
   * @default ['ours', 'duckdb', 'parquetjs-lite']
   */
  writers?: readonly SnapshotBenchWriter[];
  /**
   * Folder for the SQLite file and the Parquet outputs; a fresh temp folder (removed afterwards)
   * when omitted. A given folder is left in place.
   */
  workDir?: string;
  /**
   * Also measure the upload to S3-compatible storage (bench/snapshot-upload.ts).
   * @default true
   */
  upload?: boolean;
  /**
   * Also measure the end-to-end figure (bench/snapshot-e2e.ts): the CLI's `snapshot` of a mirror
   * made by a full `sync`, against a bare DuckDB snapshot, spawn to exit.
   * @default true
   */
  e2e?: boolean;
  /** Simulator catalogue size of the end-to-end figure (about 11 mirror rows per domain). @default 20_000 */
  e2eDomains?: number;
  /** Alternating rounds of the end-to-end figure. @default 5 */
  e2eRounds?: number;
}

/** One child-process run of one writer. */
export interface SnapshotBenchRun {
  wallSeconds: number;
  peakRssMb: number;
  fileBytes: number;
  rows: number;
  /** Sub-timings, in seconds (DuckDB: `appendSeconds`, `copySeconds`). */
  phases: Record<string, number>;
}

/** Median figures of one writer plus what exactly was timed. */
export interface SnapshotBenchWriterResult {
  writer: SnapshotBenchWriter;
  /** Library and version. */
  library: string;
  /** What the wall time covers. */
  timed: string;
  codec: 'SNAPPY';
  rowGroupSize: number;
  wallSeconds: number;
  peakRssMb: number;
  fileBytes: number;
  fileMb: number;
  rows: number;
  phases: Record<string, number>;
  runs: SnapshotBenchRun[];
  notes: string;
}

/** What {@link runSnapshotBench} returns; plain data, JSON-serialisable. */
export interface BenchResult {
  name: 'snapshot';
  rows: number;
  node: string;
  platform: string;
  /** Seconds spent generating the SQLite source table (not part of any writer's time). */
  setupSeconds: number;
  writers: SnapshotBenchWriterResult[];
  /** ours wall / DuckDB wall (null when either did not run). Target ≤ 3. */
  wallRatioOursToDuckdb: number | null;
  /** ours file size / DuckDB file size (null when either did not run). */
  sizeRatioOursToDuckdb: number | null;
  targets: { wallRatioMax: number; peakRssMbMax: number };
  /** Whether ours met each target (null when not measured). */
  meetsTargets: { wallRatio: boolean | null; peakRss: boolean | null };
  /** The upload to S3-compatible storage, or null when not measured. */
  upload: SnapshotUploadBenchResult | null;
  /** CLI `snapshot` vs a bare DuckDB snapshot, spawn to exit, or null when not measured. */
  e2e: SnapshotE2eBenchResult | null;
}

const DEFAULT_ROWS = 1_000_000;
const ROW_GROUP_SIZE = 100_000;
const TARGET_WALL_RATIO = 3;
const TARGET_PEAK_RSS_MB = 512;

const LICENSE_COLUMNS: ColumnSpec[] = [
  { name: 'domain_normalized', type: 'text', nullable: false },
  { name: 'jurisdiction', type: 'text', nullable: false },
  { name: 'license_number', type: 'text', nullable: false },
  { name: 'status', type: 'text' },
  { name: 'source_url', type: 'text' },
  { name: 'first_seen_at', type: 'timestamp', nullable: false },
  { name: 'last_confirmed_at', type: 'timestamp' },
  { name: 'removed_at', type: 'timestamp' },
];
const COLUMN_NAMES = LICENSE_COLUMNS.map((c) => c.name);
const SELECT_LICENSES = `SELECT ${COLUMN_NAMES.join(', ')} FROM licenses`;

const DESCRIPTIONS: Record<SnapshotBenchWriter, { library: string; timed: string; notes: string }> = {
  ours: {
    library: 'hyparquet-writer 0.17.0 via src/warehouse writeParquetFile',
    timed:
      'better-sqlite3 .iterate() over the licences table → type conversion (ISO text → TIMESTAMP micros) → Parquet, temp file + fsync + rename',
    notes: 'Built-in pure-JS SNAPPY. Timestamps are INT64 TIMESTAMP(isAdjustedToUTC=true, MICROS).',
  },
  duckdb: {
    library: '@duckdb/node-api 1.5.5-r.5',
    timed:
      "better-sqlite3 .iterate() → DuckDB Appender into an in-memory VARCHAR table → COPY (SELECT …, CAST(ts AS TIMESTAMPTZ)) TO 'x.parquet' (FORMAT parquet, COMPRESSION snappy, ROW_GROUP_SIZE 100000)",
    notes:
      "DuckDB's sqlite extension cannot be downloaded offline, so rows reach DuckDB through its Appender; phases.appendSeconds and phases.copySeconds split the time. The whole table is held in DuckDB's memory before COPY.",
  },
  'parquetjs-lite': {
    library: 'parquetjs-lite 0.8.7',
    timed: 'better-sqlite3 .iterate() → appendRow per row (UTF8, TIMESTAMP_MILLIS from Date) → close',
    notes:
      'Baseline only: writes INT64 values above 2^53 wrongly (it goes through JS numbers), has no dictionary encoding and only the legacy TIMESTAMP_MILLIS converted type. Licence rows have no INT64 column, so this file is correct.',
  },
};

/**
 * Runs the snapshot benchmark and returns its figures as data.
 *
 * Generates `rows` deterministic licence rows into a SQLite file (not timed), then runs each
 * writer in its own child process, sequentially, `runs` times. Needs the compiled file
 * (`dist/bench/snapshot.js`) because the children execute it.
 */
export async function runSnapshotBench(options: SnapshotBenchOptions = {}): Promise<BenchResult> {
  const rows = options.rows ?? DEFAULT_ROWS;
  const runs = options.runs ?? 1;
  const writers = options.writers ?? (['ours', 'duckdb', 'parquetjs-lite'] as const);
  const workDir = options.workDir ?? (await mkdtemp(join(tmpdir(), 'domain-sync-bench-snapshot-')));
  try {
    const sqlitePath = join(workDir, 'licenses.sqlite');
    await rm(sqlitePath, { force: true });
    const setupStart = performance.now();
    createLicenceDatabase(sqlitePath, rows);
    const setupSeconds = (performance.now() - setupStart) / 1000;

    const results: SnapshotBenchWriterResult[] = [];
    for (const writer of writers) {
      const all: SnapshotBenchRun[] = [];
      for (let i = 0; i < runs; i++) {
        const out = join(workDir, `${writer}-${i}.parquet`);
        all.push(await runChild(writer, sqlitePath, out));
        await rm(out, { force: true });
      }
      const med = (pick: (r: SnapshotBenchRun) => number): number => median(all.map(pick));
      const phaseNames = Object.keys(all[0]?.phases ?? {});
      results.push({
        writer,
        ...DESCRIPTIONS[writer],
        codec: 'SNAPPY',
        rowGroupSize: ROW_GROUP_SIZE,
        wallSeconds: round(
          med((r) => r.wallSeconds),
          2,
        ),
        peakRssMb: round(
          med((r) => r.peakRssMb),
          0,
        ),
        fileBytes: med((r) => r.fileBytes),
        fileMb: round(med((r) => r.fileBytes) / 1e6, 1),
        rows: all[0]?.rows ?? 0,
        phases: Object.fromEntries(
          phaseNames.map((p) => [
            p,
            round(
              med((r) => r.phases[p] ?? 0),
              2,
            ),
          ]),
        ),
        runs: all,
      });
    }

    const upload = options.upload === false ? null : await runSnapshotUploadBench();
    const e2e =
      options.e2e === false
        ? null
        : await runSnapshotE2eBench({ domains: options.e2eDomains, rounds: options.e2eRounds });
    const ours = results.find((r) => r.writer === 'ours');
    const duck = results.find((r) => r.writer === 'duckdb');
    const wallRatio = ours && duck ? round(ours.wallSeconds / duck.wallSeconds, 2) : null;
    return {
      name: 'snapshot',
      rows,
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
      setupSeconds: round(setupSeconds, 2),
      writers: results,
      wallRatioOursToDuckdb: wallRatio,
      sizeRatioOursToDuckdb: ours && duck ? round(ours.fileBytes / duck.fileBytes, 2) : null,
      targets: { wallRatioMax: TARGET_WALL_RATIO, peakRssMbMax: TARGET_PEAK_RSS_MB },
      meetsTargets: {
        wallRatio: wallRatio === null ? null : wallRatio <= TARGET_WALL_RATIO,
        peakRss: ours ? ours.peakRssMb < TARGET_PEAK_RSS_MB : null,
      },
      upload,
      e2e,
    };
  } finally {
    if (options.workDir === undefined) await rm(workDir, { recursive: true, force: true });
  }
}

const JURISDICTIONS = ['mga', 'ukgc', 'curacao', 'anjouan'];
const STATUSES = ['active', 'active', 'active', 'active', 'expired', 'suspended', 'revoked'];
const WORDS = ['lucky', 'royal', 'spin', 'jackpot', 'casino', 'bet', 'vegas', 'slots', 'ace', 'golden'];
const TLDS = ['com', 'net', 'io', 'de', 'co.uk', 'bet', 'casino'];
const UNICODE = ['казино', 'spielbank-für', 'カジノ', 'kasyno-żółw', 'ставки'];
const UNICODE_TLDS = ['рф', 'de', 'jp', 'pl', 'com'];

/** Fills `licenses` with `rows` licence-like rows (about 3 licences per domain), in one file. */
function createLicenceDatabase(path: string, rows: number): void {
  const db = new Database(path);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec(`CREATE TABLE licenses (
      domain_normalized TEXT NOT NULL, jurisdiction TEXT NOT NULL, license_number TEXT NOT NULL,
      status TEXT, source_url TEXT, first_seen_at TEXT NOT NULL, last_confirmed_at TEXT, removed_at TEXT,
      PRIMARY KEY (domain_normalized, jurisdiction, license_number)) STRICT`);
    const insert = db.prepare(`INSERT INTO licenses VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
    const prng = new Prng(20240501);
    const random = (): number => prng.next();
    const base = Date.UTC(2020, 0, 1);
    const span = Date.UTC(2025, 0, 1) - base;
    const insertBatch = db.transaction((from: number, to: number) => {
      for (let i = from; i < to; i++) {
        const d = Math.floor(i / 3);
        const unicode = d % 20 === 7;
        const domain = unicode
          ? `${UNICODE[d % UNICODE.length]}${d}.${UNICODE_TLDS[d % UNICODE_TLDS.length]}`
          : `${WORDS[d % WORDS.length]}-${WORDS[(d >> 3) % WORDS.length]}${d}.${TLDS[d % TLDS.length]}`;
        const jurisdiction = JURISDICTIONS[i % 3 === 0 ? d % 4 : (d + (i % 3)) % 4]!;
        const licence = `${jurisdiction.toUpperCase()}/B2C/${100000 + Math.floor(random() * 900000)}/${2015 + (i % 10)}`;
        const first = base + Math.floor(random() * span);
        const confirmed = first + Math.floor(random() * 90 * 86_400_000);
        const removed = random() < 0.15 ? confirmed + Math.floor(random() * 30 * 86_400_000) : null;
        insert.run(
          domain,
          jurisdiction,
          `${licence}-${i}`,
          STATUSES[Math.floor(random() * STATUSES.length)]!,
          `https://registry.${jurisdiction}.example/licences/${encodeURIComponent(licence)}`,
          new Date(first).toISOString(),
          random() < 0.05 ? null : new Date(confirmed).toISOString(),
          removed === null ? null : new Date(removed).toISOString(),
        );
      }
    });
    for (let from = 0; from < rows; from += 50_000) insertBatch(from, Math.min(rows, from + 50_000));
  } finally {
    db.close();
  }
}

async function runChild(
  writer: SnapshotBenchWriter,
  sqlitePath: string,
  out: string,
): Promise<SnapshotBenchRun> {
  const script = fileURLToPath(import.meta.url);
  const child = spawn(process.execPath, [...CLI_NODE_OPTIONS, script, '--child', writer, sqlitePath, out], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`bench child "${writer}" failed (exit ${code}): ${stderr.trim()}`);
  const run = JSON.parse(stdout.trim().split('\n').at(-1)!) as Omit<SnapshotBenchRun, 'fileBytes'>;
  return { ...run, fileBytes: (await stat(out)).size };
}

/** Child side: runs one writer and prints `{ wallSeconds, peakRssMb, rows, phases }`. */
async function childMain(writer: string, sqlitePath: string, out: string): Promise<void> {
  const start = performance.now();
  const db = new Database(sqlitePath, { readonly: true });
  let rows: number;
  const phases: Record<string, number> = {};
  try {
    const select = db.prepare(SELECT_LICENSES);
    if (writer === 'ours') {
      // The CLI's process setting (src/cli/main.ts): this child stands for `domain-sync snapshot`.
      applyCliHeapSettings();
      raiseYoungGenerationCap();
      const result = await writeParquetFile({
        path: out,
        table: 'licenses',
        columns: LICENSE_COLUMNS,
        rows: select.iterate() as IterableIterator<Record<string, unknown>>,
        rowGroupSize: ROW_GROUP_SIZE,
        compression: 'SNAPPY',
      });
      rows = result.rows;
    } else if (writer === 'duckdb') {
      rows = await writeWithDuckdb(
        select.iterate() as IterableIterator<Record<string, unknown>>,
        out,
        phases,
      );
    } else if (writer === 'parquetjs-lite') {
      rows = await writeWithParquetjs(select.iterate() as IterableIterator<Record<string, unknown>>, out);
    } else {
      throw new Error(`unknown writer ${writer}`);
    }
  } finally {
    db.close();
  }
  const wallSeconds = (performance.now() - start) / 1000;
  const peakRssMb = ownPeakRssMb();
  process.stdout.write(`${JSON.stringify({ wallSeconds, peakRssMb, rows, phases })}\n`);
}

async function writeWithDuckdb(
  source: IterableIterator<Record<string, unknown>>,
  out: string,
  phases: Record<string, number>,
): Promise<number> {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    await connection.run(
      `CREATE TABLE licenses_raw (${COLUMN_NAMES.map((name) => `${name} VARCHAR`).join(', ')})`,
    );
    const appendStart = performance.now();
    const appender = await connection.createAppender('licenses_raw');
    let rows = 0;
    for (const row of source) {
      for (const name of COLUMN_NAMES) {
        const value = row[name];
        if (value === null || value === undefined) appender.appendNull();
        else appender.appendVarchar(value as string);
      }
      appender.endRow();
      rows++;
    }
    appender.closeSync();
    phases.appendSeconds = (performance.now() - appendStart) / 1000;
    const copyStart = performance.now();
    const select = COLUMN_NAMES.map((name) =>
      LICENSE_COLUMNS.find((c) => c.name === name)?.type === 'timestamp'
        ? `CAST(${name} AS TIMESTAMPTZ) AS ${name}`
        : name,
    ).join(', ');
    await connection.run(
      `COPY (SELECT ${select} FROM licenses_raw) TO '${out.replaceAll("'", "''")}' (FORMAT parquet, COMPRESSION snappy, ROW_GROUP_SIZE ${ROW_GROUP_SIZE})`,
    );
    phases.copySeconds = (performance.now() - copyStart) / 1000;
    return rows;
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** The slice of parquetjs-lite's (untyped, CommonJS) API the baseline uses. */
interface ParquetjsLite {
  ParquetSchema: new (
    fields: Record<string, { type: string; optional?: boolean; compression?: string }>,
  ) => unknown;
  ParquetWriter: {
    openFile(
      schema: unknown,
      path: string,
      options?: { rowGroupSize?: number },
    ): Promise<{ appendRow(row: Record<string, unknown>): Promise<void>; close(): Promise<void> }>;
  };
}

async function writeWithParquetjs(
  source: IterableIterator<Record<string, unknown>>,
  out: string,
): Promise<number> {
  const parquet = createRequire(import.meta.url)('parquetjs-lite') as ParquetjsLite;
  const fields = Object.fromEntries(
    LICENSE_COLUMNS.map((c) => [
      c.name,
      {
        type: c.type === 'timestamp' ? 'TIMESTAMP_MILLIS' : 'UTF8',
        optional: c.nullable !== false,
        compression: 'SNAPPY',
      },
    ]),
  );
  const writer = await parquet.ParquetWriter.openFile(new parquet.ParquetSchema(fields), out, {
    rowGroupSize: ROW_GROUP_SIZE,
  });
  let rows = 0;
  for (const row of source) {
    const converted: Record<string, unknown> = {};
    for (const c of LICENSE_COLUMNS) {
      const value = row[c.name];
      // parquetjs-lite skips optional fields that are absent; null is not accepted as "missing".
      if (value === null || value === undefined) continue;
      converted[c.name] = c.type === 'timestamp' ? new Date(value as string) : value;
    }
    await writer.appendRow(converted);
    rows++;
  }
  await writer.close();
  return rows;
}

// Executed directly: `node dist/bench/snapshot.js [rows]` runs the bench; `--child …` is one writer.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [flag, writer, sqlitePath, out] = process.argv.slice(2);
  if (flag === '--child' && writer !== undefined && sqlitePath !== undefined && out !== undefined) {
    await childMain(writer, sqlitePath, out);
  } else {
    const rows = flag === undefined ? undefined : Number(flag);
    console.log(JSON.stringify(await runSnapshotBench({ rows }), null, 2));
  }
}
