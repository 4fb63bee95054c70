/**
 * Upload benchmark (part of `npm run bench -- snapshot`): a large snapshot (≥ 1,000,000 rows over
 * all tables) uploaded to an S3-compatible server by
 *
 * - (a) `ours`: `uploadSnapshot` (src/destinations/s3), what `snapshot --to` runs after writing
 *   the local snapshot: a listing of the prefix, upload (lib-storage, parts of 8 MiB, 4 in
 *   flight), a HEAD to check, then the date's manifest. As in `snapshot --to`, each file's
 *   SHA-256 is known before the upload starts (the Parquet writer computes it while writing), so
 *   it is computed before the clock starts;
 * - (b) `bare`: the same files to the same server with the bare SDK: one lib-storage `Upload` per
 *   file with the same part size and parallelism, nothing else.
 *
 * The server (s3rver, the tests' server, from the npm registry) runs in its own process; each
 * uploader runs in its own child process with the CLI's Node options, so its peak RSS is its own.
 * Runs alternate (bare, ours, bare, ours, …) so both see the same machine; the ratio is the bare
 * median wall time over ours (≥ 0.8 is the target: ours keeps 80 % of the bare SDK's rate).
 * Also measured, without a target: a second `ours` upload of the same date (everything already
 * in place, so nothing is sent), and the whole `snapshot --to` command (writing the Parquet files
 * and uploading them) in one process.
 *
 * `bench/snapshot.ts` calls {@link runSnapshotUploadBench}; `node dist/bench/snapshot-upload.js`
 * runs it alone.
 */
import { spawn } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { openMirror } from '../src/mirror/database.js';
import { CLI_NODE_OPTIONS, applyCliHeapSettings } from '../src/util/heap-growth.js';
import { median, round } from './stats.js';
import { ownPeakRssMb } from './peak-rss.js';

/** Options of {@link runSnapshotUploadBench}. */
export interface SnapshotUploadBenchOptions {
  /** Domains of the generated mirror; rows = 10 per domain (1 + 3 licences + 4 payment methods + 2 sections). @default 100_000 */
  domains?: number;
  /** Runs of each uploader. @default 5 */
  runs?: number;
}

/** One child-process upload. */
export interface UploadRun {
  wallSeconds: number;
  peakRssMb: number;
  objectsUploaded: number;
  objectsSkipped: number;
  bytesUploaded: number;
}

/** What {@link runSnapshotUploadBench} returns. */
export interface SnapshotUploadBenchResult {
  rows: number;
  rowsByTable: Record<string, number>;
  files: number;
  bytes: number;
  server: string;
  ours: UploadRun & { runs: UploadRun[] };
  bare: UploadRun & { runs: UploadRun[] };
  /** bare median wall / ours median wall: the share of the bare SDK's rate ours keeps. */
  ratio: number;
  /** A second upload of the same date by ours: every object found in place. */
  unchanged: UploadRun;
  /** `snapshot --to` as one command: Parquet writing and upload. */
  command: { wallSeconds: number; uploadSeconds: number; peakRssMb: number };
  targets: { ratioMin: number; peakRssMbMax: number };
  meetsTargets: { ratio: boolean; peakRss: boolean };
}

const ROOT = resolve(import.meta.dirname, '..', '..');
const BUCKET = 'bench';
const TARGET_RATIO = 0.8;
const TARGET_PEAK_RSS_MB = 512;
const ACCESS_KEY_ID = 'AKIABENCHBENCHBENCH1';
const PART_SIZE = 8 * 1024 * 1024;

/** Runs the upload benchmark (see the file comment). Needs the compiled files (`npm run build`). */
export async function runSnapshotUploadBench(
  options: SnapshotUploadBenchOptions = {},
): Promise<SnapshotUploadBenchResult> {
  const domains = options.domains ?? 100_000;
  const runs = options.runs ?? 5;
  const work = await mkdtemp(join(tmpdir(), 'domain-sync-bench-upload-'));
  const server = await startServer(join(work, 's3'));
  try {
    const mirrorPath = join(work, 'mirror.sqlite');
    const rowsByTable = await fillMirror(mirrorPath, domains);
    const snapshotsDir = join(work, 'snapshots');
    const configPath = join(work, 'config.json');
    const config = (prefix: string): string =>
      JSON.stringify({
        database: { path: mirrorPath },
        snapshots: { dir: snapshotsDir },
        destinations: {
          bench: {
            type: 's3',
            url: `s3://${BUCKET}/${prefix}`,
            region: 'us-east-1',
            endpoint: server.endpoint,
            forcePathStyle: true,
          },
        },
        log: { level: 'warn' },
      });
    await writeFile(configPath, config('command'));
    // The whole command once (Parquet + upload): also writes the local snapshot the uploads send.
    const { stdout } = await runNode(
      [...CLI_NODE_OPTIONS, fileURLToPath(import.meta.url), '--command', configPath],
      work,
    );
    const command = JSON.parse(stdout.trim().split('\n').at(-1)!) as {
      wallSeconds: number;
      peakRssMb: number;
      summary: { exitCode: number; stats: { snapshotDate: string; uploads: { bench: { seconds: number } } } };
    };
    if (command.summary.exitCode !== 0)
      throw new Error(`snapshot --to failed: ${JSON.stringify(command.summary).slice(0, 2000)}`);
    const summary = command.summary;
    const date = summary.stats.snapshotDate;
    const files = await listSnapshotFiles(snapshotsDir, date);

    const ours: UploadRun[] = [];
    const bare: UploadRun[] = [];
    for (let i = 0; i < runs; i++) {
      bare.push(await uploadChild('bare', snapshotsDir, date, server.endpoint, `bare-${i}`, work));
      ours.push(await uploadChild('ours', snapshotsDir, date, server.endpoint, `ours-${i}`, work));
    }
    const unchanged = await uploadChild(
      'ours',
      snapshotsDir,
      date,
      server.endpoint,
      `ours-${runs - 1}`,
      work,
    );
    const med = (list: UploadRun[]): UploadRun & { runs: UploadRun[] } => ({
      wallSeconds: round(median(list.map((r) => r.wallSeconds)), 2),
      peakRssMb: round(median(list.map((r) => r.peakRssMb)), 0),
      objectsUploaded: list[0]!.objectsUploaded,
      objectsSkipped: list[0]!.objectsSkipped,
      bytesUploaded: list[0]!.bytesUploaded,
      runs: list,
    });
    const o = med(ours);
    const b = med(bare);
    const ratio = round(b.wallSeconds / o.wallSeconds, 2);
    const peak = Math.max(...ours.map((r) => r.peakRssMb));
    return {
      rows: Object.values(rowsByTable).reduce((a, n) => a + n, 0),
      rowsByTable,
      files: files.length,
      bytes: files.reduce((n, f) => n + f.bytes, 0),
      server: 's3rver 3.7.1 (its own process, loopback, files on local disk)',
      ours: o,
      bare: b,
      ratio,
      unchanged,
      command: {
        wallSeconds: round(command.wallSeconds, 2),
        uploadSeconds: summary.stats.uploads.bench.seconds,
        peakRssMb: round(command.peakRssMb, 0),
      },
      targets: { ratioMin: TARGET_RATIO, peakRssMbMax: TARGET_PEAK_RSS_MB },
      meetsTargets: { ratio: ratio >= TARGET_RATIO, peakRss: peak < TARGET_PEAK_RSS_MB },
    };
  } finally {
    await server.close();
    await rm(work, { recursive: true, force: true });
  }
}

/** Fills a fresh mirror (product migrations) with `domains` domains and 9 child rows each. */
async function fillMirror(path: string, domains: number): Promise<Record<string, number>> {
  const mirror = await openMirror(path);
  await mirror.close();
  const db = new Database(path);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    const at = '2026-01-02T03:04:05.678Z';
    db.exec('BEGIN');
    db.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       INSERT INTO domains (domain_normalized, domain, company_name, status, last_enriched_at, operator_name,
         operator_country, brand_name, brand_slug, raw_profile, profile_hash, first_synced_at, last_synced_at)
       SELECT 'brand' || i || '-casino.example', 'brand' || i || '-casino.example', 'Company ' || (i % 5000),
         CASE i % 7 WHEN 0 THEN 'inactive' ELSE 'active' END,
         strftime('%Y-%m-%dT%H:%M:%fZ', '2025-01-01', '+' || (i % 300) || ' days'),
         'Operator ' || (i % 900), substr('MTGBCWCYGIDE', 1 + (i % 6) * 2, 2), 'Brand ' || i, 'brand-' || i,
         json_object('domain', 'brand' || i || '-casino.example', 'notes', lower(hex(randomblob(160))),
           'providers', json_array('provider-' || (i % 40), 'provider-' || (i % 17))),
         lower(hex(randomblob(32))), ?, ? FROM n`,
    ).run(domains, at, at);
    db.prepare(
      `WITH k(j) AS (VALUES (0), (1), (2))
       INSERT INTO licenses (domain_normalized, jurisdiction, license_number, status, source_url, first_seen_at,
         last_confirmed_at, removed_at, mirror_first_seen_at, mirror_updated_at)
       SELECT d.domain_normalized, substr('mga ukgccuraanjo', 1 + j * 4, 4), 'LIC/' || upper(hex(randomblob(5))) || '/' || j,
         CASE (d.rowid + j) % 9 WHEN 0 THEN 'suspended' ELSE 'active' END,
         'https://registry.example/licences/' || lower(hex(randomblob(8))), ?, ?, CASE (d.rowid + j) % 11 WHEN 0 THEN ? END, ?, ?
       FROM domains d, k`,
    ).run(at, at, at, at, at);
    db.prepare(
      `WITH k(j) AS (VALUES (0), (1), (2), (3))
       INSERT INTO payment_methods (domain_normalized, normalized_name, category, confidence, first_seen_at,
         last_confirmed_at, removed_at, mirror_first_seen_at, mirror_updated_at)
       SELECT d.domain_normalized, 'method-' || ((d.rowid * 7 + j * 13) % 97),
         substr('card    crypto  ewallet bank    ', 1 + j * 8, 8), CASE j WHEN 0 THEN 'high' ELSE 'medium' END,
         ?, ?, CASE (d.rowid + j) % 13 WHEN 0 THEN ? END, ?, ?
       FROM domains d, k`,
    ).run(at, at, at, at, at);
    db.prepare(
      `WITH s(section) AS (VALUES ('game_providers'), ('geo'))
       INSERT INTO domain_sections (domain_normalized, section, data, mirror_first_seen_at, mirror_updated_at)
       SELECT d.domain_normalized, s.section,
         json_array('provider-' || (d.rowid % 40), 'provider-' || (d.rowid % 17), lower(hex(randomblob(48)))), ?, ?
       FROM domains d, s`,
    ).run(at, at);
    db.exec('COMMIT');
    const count = (t: string): number =>
      (db.prepare(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n;
    return Object.fromEntries(
      ['domains', 'licenses', 'payment_methods', 'domain_sections'].map((t) => [t, count(t)]),
    );
  } finally {
    db.close();
  }
}

async function listSnapshotFiles(
  dir: string,
  date: string,
): Promise<Array<{ table: string; path: string; bytes: number }>> {
  const out: Array<{ table: string; path: string; bytes: number }> = [];
  for (const table of (await readdir(dir)).filter((n) => !n.startsWith('_')).sort()) {
    const path = join(dir, table, `snapshot_date=${date}`, 'part-0.parquet');
    const s = await stat(path).catch(() => null);
    if (s) out.push({ table, path, bytes: s.size });
  }
  return out;
}

/** The tests' S3 server script (run from its TypeScript source, as the tests do) in its own process. */
async function startServer(directory: string): Promise<{ endpoint: string; close(): Promise<void> }> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      pathToFileURL(join(ROOT, 'test', 'support', 'register-ts.ts')).href,
      join(ROOT, 'test', 'helpers', 's3-server-child.ts'),
      directory,
      BUCKET,
    ],
    { env: { ...process.env, S3RVER_ACCESS_KEY_ID: ACCESS_KEY_ID }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const port = await new Promise<number>((resolvePort, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /\{"port":(\d+)\}/.exec(out);
      if (m) resolvePort(Number(m[1]));
    });
    child.on('close', (code) => reject(new Error(`S3 server exited (${code}): ${err}`)));
  });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: async () => {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('close', r));
    },
  };
}

async function runNode(args: string[], cwd: string): Promise<{ stdout: string }> {
  const child = spawn(process.execPath, args, {
    cwd,
    env: {
      ...process.env,
      AWS_ACCESS_KEY_ID: ACCESS_KEY_ID,
      AWS_SECRET_ACCESS_KEY: 'bench-secret',
      AWS_EC2_METADATA_DISABLED: 'true',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((r) => child.on('close', r));
  if (code !== 0)
    throw new Error(`bench child failed (exit ${code}): ${stderr.slice(-3000)} ${stdout.slice(-2000)}`);
  return { stdout };
}

async function uploadChild(
  mode: 'ours' | 'bare',
  snapshotsDir: string,
  date: string,
  endpoint: string,
  prefix: string,
  cwd: string,
): Promise<UploadRun> {
  const script = fileURLToPath(import.meta.url);
  const { stdout } = await runNode(
    [...CLI_NODE_OPTIONS, script, '--child', mode, snapshotsDir, date, endpoint, prefix],
    cwd,
  );
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as UploadRun;
}

/**
 * Child side: `domain-sync --json snapshot --to bench` through the CLI's own entry (`runCli`) with
 * the binary's heap setting, then `{ wallSeconds, peakRssMb, summary }` on stdout.
 */
async function commandMain(configPath: string): Promise<void> {
  applyCliHeapSettings();
  const { PassThrough } = await import('node:stream');
  const { runCli } = await import('../src/cli/program.js');
  const started = performance.now();
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  const err = new PassThrough();
  err.resume();
  await runCli(
    ['--config', configPath, '--json', 'snapshot', '--to', 'bench'],
    { stdout: out, stderr: err, env: process.env, cwd: process.cwd() },
    new AbortController().signal,
  );
  const wallSeconds = (performance.now() - started) / 1000;
  const peakRssMb = ownPeakRssMb();
  const summary = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  process.stdout.write(`${JSON.stringify({ wallSeconds, peakRssMb, summary })}\n`);
}

/** Child side: one upload, then `{ wallSeconds, peakRssMb, … }` on stdout. */
async function childMain(
  mode: string,
  snapshotsDir: string,
  date: string,
  endpoint: string,
  prefix: string,
): Promise<void> {
  applyCliHeapSettings();
  const destination = {
    type: 's3' as const,
    name: 'bench',
    bucket: BUCKET,
    prefix,
    region: 'us-east-1',
    endpoint,
    forcePathStyle: true,
    giveUpAfterMs: 60_000,
  };
  // Before the clock starts, what `snapshot --to` has when its upload begins: our modules loaded
  // (for the snapshot itself) and each file's SHA-256 (computed by the Parquet writer as it wrote
  // the file; here by reading it). The AWS SDK is not loaded, in either mode: ours loads it on its
  // first upload.
  const { loadLocalSnapshotDate } = await import('../pipelines/snapshot-upload.js');
  const { sha256OfFile, uploadSnapshot } = await import('../src/destinations/s3/index.js');
  const current = mode === 'ours' ? await loadLocalSnapshotDate(snapshotsDir, date) : null;
  for (const file of current?.files ?? []) file.sha256 = await sha256OfFile(file.path);
  const started = performance.now();
  let result: Omit<UploadRun, 'wallSeconds' | 'peakRssMb'>;
  if (mode === 'ours') {
    if (current === null) throw new Error(`no local snapshot of ${date}`);
    const { result: r, failure } = await uploadSnapshot({
      destination,
      current,
      localDates: [date],
      loadLocalDate: async () => null,
    });
    if (failure) throw failure;
    result = {
      objectsUploaded: r.uploaded.objects,
      objectsSkipped: r.skipped.objects,
      bytesUploaded: r.uploaded.bytes,
    };
  } else {
    const { S3Client } = await import('@aws-sdk/client-s3');
    const { Upload } = await import('@aws-sdk/lib-storage');
    const client = new S3Client({
      endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
    let objects = 0;
    let bytes = 0;
    for (const file of await listSnapshotFiles(snapshotsDir, date)) {
      await new Upload({
        client,
        params: {
          Bucket: BUCKET,
          Key: `${prefix}/${file.table}/snapshot_date=${date}/part-0.parquet`,
          Body: createReadStream(file.path),
        },
        partSize: PART_SIZE,
        queueSize: 4,
      }).done();
      objects++;
      bytes += file.bytes;
    }
    client.destroy();
    result = { objectsUploaded: objects, objectsSkipped: 0, bytesUploaded: bytes };
  }
  const wallSeconds = (performance.now() - started) / 1000;
  const peakRssMb = ownPeakRssMb();
  process.stdout.write(`${JSON.stringify({ wallSeconds, peakRssMb, ...result })}\n`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [flag, mode, snapshotsDir, date, endpoint, prefix] = process.argv.slice(2);
  if (flag === '--child' && mode && snapshotsDir && date && endpoint && prefix) {
    await childMain(mode, snapshotsDir, date, endpoint, prefix);
  } else if (flag === '--command' && mode) {
    await commandMain(mode);
  } else {
    const domains = flag === undefined ? undefined : Number(flag);
    console.log(JSON.stringify(await runSnapshotUploadBench({ domains }), null, 2));
  }
}
