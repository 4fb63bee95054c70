/**
 * Child process of the publish benchmark: runs one measured job against the PostgreSQL server the
 * parent started and prints one JSON line `{ wallSeconds, peakRssMb, ... }`. Kept apart so that
 * its RSS is its own. Input: BENCH_JOB (JSON, see {@link Job}); the password in PGPASSWORD.
 *
 * - `publish`: `publishPipeline` on the mirror, as the `publish` command runs it (the CLI's heap
 *   settings included), into `schema`.
 * - `copy`: the bare baseline: the same rows, already in COPY text files (one per table, written
 *   by the parent before any timing), streamed by pg-copy-streams into tables of the same
 *   definition (same types and primary keys) in one transaction. No SQLite reading, no encoding,
 *   no staging, no merge, no watermark: the server's own ingest speed.
 */
import { createReadStream, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { publishPipeline } from '../pipelines/publish.js';
import { loadConfig } from '../src/config/load.js';
import { openMirror } from '../src/mirror/database.js';
import { noopProgress } from '../src/runtime/progress.js';
import { applyCliHeapSettings } from '../src/util/heap-growth.js';
import { ownPeakRssMb } from './peak-rss.js';

// The CLI's process setting (src/cli/main.ts), so the child is the CLI's process.
applyCliHeapSettings();

/** What the parent asks for. */
export interface Job {
  mode: 'publish' | 'copy';
  dir: string;
  dbPath: string;
  host: string;
  port: number;
  user: string;
  database: string;
  schema: string;
  full?: boolean;
  /** copy: per table, its CREATE TABLE, its column list and its COPY text file. */
  tables?: Array<{ table: string; create: string; columns: string; file: string }>;
}

async function main(): Promise<void> {
  const job = JSON.parse(process.env.BENCH_JOB ?? '{}') as Job;
  const started = performance.now();
  let extra: Record<string, unknown>;
  if (job.mode === 'copy') {
    const client = new pg.Client({
      host: job.host,
      port: job.port,
      user: job.user,
      database: job.database,
      password: process.env.PGPASSWORD,
    });
    await client.connect();
    try {
      await client.query('BEGIN');
      await client.query(`CREATE SCHEMA "${job.schema}"`);
      let rows = 0;
      for (const t of job.tables ?? []) {
        await client.query(t.create);
        const stream = client.query(copyFrom(`COPY "${job.schema}"."${t.table}" (${t.columns}) FROM STDIN`));
        await pipeline(createReadStream(t.file, { highWaterMark: 64 * 1024 }), stream);
        rows += Number(stream.rowCount ?? 0);
      }
      await client.query('COMMIT');
      extra = { rows };
    } finally {
      await client.end();
    }
  } else {
    const configPath = join(job.dir, `config-${job.schema}.json`);
    writeFileSync(
      configPath,
      JSON.stringify({
        database: { path: job.dbPath },
        destinations: {
          bench: {
            type: 'postgres',
            url: `postgres://${job.user}@${job.host}:${job.port}/${job.database}?sslmode=disable`,
            schema: job.schema,
          },
        },
      }),
    );
    const { config, errors } = loadConfig({ env: {}, cwd: job.dir, configPath });
    if (!config) throw new Error(errors.join('; '));
    const mirror = await openMirror(config.database.path);
    try {
      const result = await publishPipeline(
        {
          config,
          mirror,
          logger: noLogger,
          signal: new AbortController().signal,
          progress: noopProgress,
          clock: Date.now,
        },
        { full: job.full === true, env: { PGPASSWORD: process.env.PGPASSWORD } },
      );
      if (result.status !== 'done' || result.failures.length > 0) {
        throw new Error(`publish ${result.status}: ${JSON.stringify(result.error ?? result.failures)}`);
      }
      const d = result.stats.destinations.bench!;
      extra = { rows: d.rows, tables: d.tables };
    } finally {
      await mirror.close();
    }
  }
  const wallSeconds = (performance.now() - started) / 1000;
  const peakRssMb = Math.round(ownPeakRssMb());
  process.stdout.write(`${JSON.stringify({ wallSeconds, peakRssMb, ...extra })}\n`);
}

const noLogger = {
  error() {},
  warn() {},
  info() {},
  debug() {},
  child() {
    return noLogger;
  },
};

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
