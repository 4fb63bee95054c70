import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { snapshotPipeline } from '../../../pipelines/snapshot.js';
import { syncPipeline } from '../../../pipelines/sync.js';
import { openMirror } from '../../../src/mirror/database.js';
import { SNAPSHOT_TABLES } from '../../../src/mirror/store/snapshot.js';
import { noopProgress } from '../../../src/runtime/progress.js';
import { openRunContext } from '../../../src/runtime/run-context.js';
import type { MirrorRunContext } from '../../../src/runtime/run.js';
import type { Config } from '../../../src/config/config.js';
import { MemoryLogger, noopLogger } from '../../../src/log/logger.js';
import type { Logger } from '../../../src/log/logger.js';
import { utcDate } from '../../../src/warehouse/index.js';
import type { SnapshotManifest } from '../../../src/warehouse/index.js';
import { duckdbQuery, readParquet, sqlString } from '../../helpers/read-parquet.js';
import { DUCKDB_TYPE, documentedColumns } from './documented-schema.js';
import type { DocumentedColumn } from './documented-schema.js';
import { buildSnapshotFixture, cli } from './fixture.js';
import type { SnapshotFixture } from './fixture.js';
import { queryMirrorExact } from '../../helpers/mirror.js';

const DAY_MS = 86_400_000;
let fx: SnapshotFixture;

beforeAll(async () => {
  fx = await buildSnapshotFixture();
}, 120_000);

afterAll(async () => {
  await fx?.close();
});

const docs = documentedColumns();

function columnsOf(table: string): DocumentedColumn[] {
  const columns = docs.get(table);
  if (!columns?.length) throw new Error(`docs/schema.md documents no columns for ${table}`);
  return columns;
}

/** A mirror row as DuckDB should return it: 0/1 flags as booleans, everything else unchanged. */
function expectedRow(table: string, row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const c of columnsOf(table)) {
    const v = row[c.name];
    out[c.name] = c.type === 'boolean' && v !== null ? v === 1n : v;
  }
  return out;
}

/** Sorts rows by the documented key columns, the same way on both sides. */
function byKey(table: string, rows: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  const key = columnsOf(table).filter((c) => c.key);
  const k = (r: Record<string, unknown>): string => JSON.stringify(key.map((c) => String(r[c.name])));
  return [...rows].sort((a, b) => (k(a) < k(b) ? -1 : k(a) > k(b) ? 1 : 0));
}

function mirrorTable(table: string): Array<Record<string, unknown>> {
  return queryMirrorExact(fx.mirrorPath, `SELECT * FROM "${table}"`).map((r) => expectedRow(table, r));
}

async function snapshot(out: string, ...extra: string[]) {
  return cli(
    ['--config', fx.configPath, '--json', '--log-level', 'warn', 'snapshot', '--out', out, ...extra],
    fx.dir,
  );
}

/** A mirror-only context on the fixture's mirror, with a chosen clock (a time, or a function) and config. */
async function mirrorContext(
  clock: number | (() => number),
  config: Config = fx.config,
  logger: Logger = noopLogger,
): Promise<MirrorRunContext & { close(): Promise<void> }> {
  const mirror = await openMirror(fx.mirrorPath);
  return {
    config,
    mirror,
    logger,
    signal: new AbortController().signal,
    progress: noopProgress,
    clock: typeof clock === 'number' ? () => clock : clock,
    close: () => mirror.close(),
  };
}

describe('snapshot through the CLI, read back with DuckDB', () => {
  it('writes every mirror table by default; each file has the SQLite rows exactly, with the documented types', async () => {
    const out = join(fx.dir, 'snap-all');
    const before = Object.fromEntries(SNAPSHOT_TABLES.map((t) => [t, mirrorTable(t)]));
    // The CLI runs with an empty environment: no API key and no base URL are needed.
    const run = await snapshot(out);
    expect(run.stderr).toBe('');
    expect(run.exitCode).toBe(0);
    const summary = run.json!;
    expect(summary).toMatchObject({ command: 'snapshot', ok: true, status: 'done', pipeline: 'snapshot' });
    const stats = summary.stats as {
      snapshotDate: string;
      dir: string;
      tables: Record<string, { rows: number; bytes: number }>;
    };
    expect(stats.dir).toBe(out);
    expect(Object.keys(stats.tables).sort()).toEqual([...SNAPSHOT_TABLES].sort());
    const runId = summary.runId as number;

    for (const table of SNAPSHOT_TABLES) {
      const file = join(out, table, `snapshot_date=${stats.snapshotDate}`, 'part-0.parquet');
      const { columns, rows } = await readParquet(file);
      // Column names and types as docs/schema.md documents them.
      expect(
        columns.map((c) => [c.name, c.type]),
        table,
      ).toEqual(columnsOf(table).map((c) => [c.name, DUCKDB_TYPE[c.type]]));
      if (table === 'pipeline_runs') {
        // The snapshot's own run is in its pipeline_runs file, still running at snapshot time.
        const own = rows.filter((r) => r.id === BigInt(runId));
        expect(own).toEqual([
          expect.objectContaining({ pipeline: 'snapshot', status: 'running', finished_at: null }),
        ]);
        expect(
          byKey(
            table,
            rows.filter((r) => r.id !== BigInt(runId)),
          ),
        ).toEqual(byKey(table, before[table]!));
        expect(stats.tables[table]!.rows).toBe(before[table]!.length + 1);
      } else {
        expect(rows.length, table).toBe(before[table]!.length);
        expect(byKey(table, rows), table).toEqual(byKey(table, before[table]!));
        expect(stats.tables[table]!.rows).toBe(rows.length);
      }
      expect(rows.length, `${table} should not be empty in the fixture`).toBeGreaterThan(0);
      // docs/snapshots.md: every column chunk is ZSTD-compressed by default.
      const codecs = await duckdbQuery(
        `SELECT DISTINCT compression FROM parquet_metadata(${sqlString(file)})`,
      );
      expect(codecs.rows, table).toEqual([{ compression: 'ZSTD' }]);
      // docs/contract.md "Promises": the API key never appears in snapshots.
      expect(JSON.stringify(rows, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))).not.toContain(
        fx.sim.apiKey,
      );
    }

    // The comparisons above are whole-table; these make sure the fixture exercised the quirks.
    const domains = (await readParquet(join(out, 'domains', '*', '*.parquet'))).rows;
    const unicode = domains.filter((d) => /[\u0080-\u{10ffff}]/u.test(String(d.domain_normalized)));
    expect(unicode.length).toBeGreaterThan(0);
    expect(domains.some((d) => d.operator_legal_entity_name === null)).toBe(true);
    expect(domains.some((d) => typeof d.last_enriched_at === 'string')).toBe(true);
    expect(domains.some((d) => d.served_from_cache === false || d.served_from_cache === true)).toBe(true);
    const licences = (await readParquet(join(out, 'licenses', '*', '*.parquet'))).rows;
    expect(licences.some((l) => l.source_url === null)).toBe(true);
    // A Unicode key found in SQLite by its exact text.
    const sample = unicode[0]!;
    const [mirrorRow] = queryMirrorExact(
      fx.mirrorPath,
      `SELECT domain_normalized, last_enriched_at, operator_legal_entity_name FROM domains WHERE domain_normalized = ${sqlString(String(sample.domain_normalized))}`,
    );
    expect(mirrorRow).toEqual({
      domain_normalized: sample.domain_normalized,
      last_enriched_at: sample.last_enriched_at,
      operator_legal_entity_name: sample.operator_legal_entity_name,
    });

    // The manifest records what was written and by which run.
    const manifest = JSON.parse(
      await readFile(join(out, '_manifests', `snapshot_date=${stats.snapshotDate}.json`), 'utf8'),
    ) as SnapshotManifest;
    expect(manifest.pipeline_run_id).toBe(runId);
    for (const table of SNAPSHOT_TABLES) {
      expect(manifest.tables[table]).toMatchObject({
        rows: stats.tables[table]!.rows,
        bytes: stats.tables[table]!.bytes,
      });
    }
    // The run is recorded as done with its stats.
    const [recorded] = queryMirrorExact(
      fx.mirrorPath,
      `SELECT status, json_extract(stats, '$.dir') AS dir FROM pipeline_runs WHERE id = ${runId}`,
    );
    expect(recorded).toEqual({ status: 'done', dir: out });
  });

  it("read_parquet('<dir>/licenses/*/*.parquet', hive_partitioning = true) reads every snapshot date", async () => {
    const out = join(fx.dir, 'snap-hive');
    const ctx = await mirrorContext(Date.now() - DAY_MS);
    const yesterday = await snapshotPipeline(ctx, { outDir: out });
    await ctx.close();
    expect(yesterday.status).toBe('done');
    const today = await snapshot(out);
    expect(today.exitCode).toBe(0);
    const todayDate = (today.json!.stats as { snapshotDate: string }).snapshotDate;
    expect(yesterday.stats.snapshotDate < todayDate).toBe(true);

    const licences = queryMirrorExact(fx.mirrorPath, 'SELECT count(*) AS n FROM licenses')[0]!.n;
    const { columns, rows } = await duckdbQuery(
      `SELECT snapshot_date, count(*) AS licences FROM read_parquet(${sqlString(`${out}/licenses/*/*.parquet`)}, hive_partitioning = true) GROUP BY ALL ORDER BY snapshot_date`,
    );
    expect(columns[0]).toEqual({ name: 'snapshot_date', type: 'DATE' });
    expect(rows).toEqual([
      { snapshot_date: yesterday.stats.snapshotDate, licences },
      { snapshot_date: todayDate, licences },
    ]);
  });

  it('logs its progress where no bar shows it: rows so far every 5 s of its clock, and each table as its file is in place', async () => {
    const out = join(fx.dir, 'snap-progress');
    const logger = new MemoryLogger();
    // Six seconds pass on each reading of the clock, so every chance to log progress is taken.
    let now = Date.parse('2026-11-30T00:00:00.000Z');
    const ctx = await mirrorContext(() => (now += 6_000), fx.config, logger);
    const run = await snapshotPipeline(ctx, { outDir: out });
    await ctx.close();
    expect(run.status).toBe('done');

    const events = logger.events.filter(
      (e) => e.msg === 'snapshot progress' || e.msg === 'snapshot table written',
    );
    // Each table: its progress lines (one per 1,000 rows read, counting up to at most its rows),
    // then the line that says it is written, before the next table's first line.
    const order = events.map((e) => `${String(e.fields.table)} ${e.msg}`);
    const tablesInOrder = [...new Set(events.map((e) => String(e.fields.table)))];
    expect(tablesInOrder).toEqual([...SNAPSHOT_TABLES]);
    let logged = 0;
    for (const table of SNAPSHOT_TABLES) {
      const rows = queryMirrorExact(fx.mirrorPath, `SELECT count(*) AS n FROM "${table}"`)[0]!.n as bigint;
      const mine = events.filter((e) => e.fields.table === table);
      const progress = mine.filter((e) => e.msg === 'snapshot progress');
      expect(progress.map((e) => e.fields.rows)).toEqual(
        Array.from({ length: Math.floor(Number(rows) / 1_000) }, (_, i) => (i + 1) * 1_000),
      );
      for (const e of progress) expect(e.fields.of).toBe(Number(rows));
      expect(mine.at(-1)).toMatchObject({ msg: 'snapshot table written', fields: { rows: Number(rows) } });
      expect(order.slice(logged, logged + mine.length)).toEqual(mine.map((e) => `${table} ${e.msg}`));
      logged += mine.length;
    }
    // The fixture has tables of more than 1,000 rows, so progress lines were logged at all.
    expect(events.some((e) => e.msg === 'snapshot progress')).toBe(true);
  });

  it('--tables writes only the chosen tables; an unknown name is exit 2 naming it and the valid tables', async () => {
    const out = join(fx.dir, 'snap-some');
    const run = await snapshot(out, '--tables', 'licenses, domains');
    expect(run.exitCode).toBe(0);
    expect(Object.keys((run.json!.stats as { tables: object }).tables).sort()).toEqual([
      'domains',
      'licenses',
    ]);
    expect((await readdir(out)).sort()).toEqual(['_manifests', 'domains', 'licenses']);

    const bad = await snapshot(join(fx.dir, 'snap-bad'), '--tables', 'licenses,licences');
    expect(bad.exitCode).toBe(2);
    expect(bad.json).toMatchObject({ ok: false, exitCode: 2, error: { code: 'ERR_USAGE' } });
    const message = (bad.json!.error as { message: string }).message;
    expect(message).toContain('"licences"');
    for (const table of SNAPSHOT_TABLES) expect(message).toContain(table);
    expect(existsSync(join(fx.dir, 'snap-bad'))).toBe(false);
  });

  it('keeps only the newest snapshots.retainDates dates', async () => {
    const out = join(fx.dir, 'snap-retain');
    const config = { ...fx.config, snapshots: { ...fx.config.snapshots, retainDates: 2 } } as Config;
    const dates: string[] = [];
    for (const daysAgo of [3, 2, 1]) {
      const ctx = await mirrorContext(Date.now() - daysAgo * DAY_MS, config);
      const result = await snapshotPipeline(ctx, { outDir: out, tables: ['licenses'] });
      await ctx.close();
      expect(result.status).toBe('done');
      dates.push(result.stats.snapshotDate);
      if (daysAgo === 1)
        expect(result.stats.removedPartitions).toEqual([`licenses/snapshot_date=${dates[0]}`]);
    }
    expect((await readdir(join(out, 'licenses'))).sort()).toEqual(
      dates.slice(1).map((d) => `snapshot_date=${d}`),
    );
    expect((await readdir(join(out, '_manifests'))).sort()).toEqual(
      dates.slice(1).map((d) => `snapshot_date=${d}.json`),
    );
  });

  it('a second snapshot on the same day replaces the first', async () => {
    const out = join(fx.dir, 'snap-twice');
    const first = await snapshot(out, '--tables', 'licenses');
    expect(first.exitCode).toBe(0);
    const date = (first.json!.stats as { snapshotDate: string }).snapshotDate;

    // A licence disappears upstream; a sync marks it removed in the mirror.
    const { licenceDomain } = fx.changed;
    const gone = fx.sim.control.truth.profile(licenceDomain)!.licenses[0]!;
    fx.sim.control.mutate.removeLicence(licenceDomain, gone.license_number);
    const ctx = await openRunContext({ config: fx.config, apiKey: fx.sim.apiKey, baseUrl: fx.sim.baseUrl });
    expect((await syncPipeline(ctx)).status).toBe('done');
    await ctx.close();

    const second = await snapshot(out, '--tables', 'licenses');
    expect(second.exitCode).toBe(0);
    expect((second.json!.stats as { snapshotDate: string }).snapshotDate).toBe(date);
    expect(await readdir(join(out, 'licenses'))).toEqual([`snapshot_date=${date}`]);
    expect(await readdir(join(out, 'licenses', `snapshot_date=${date}`))).toEqual(['part-0.parquet']);
    const { rows } = await duckdbQuery(
      `SELECT removed_at FROM read_parquet(${sqlString(`${out}/licenses/*/*.parquet`)}) WHERE domain_normalized = ${sqlString(licenceDomain)} AND license_number = ${sqlString(gone.license_number)}`,
    );
    expect(rows).toHaveLength(1);
    expect(typeof rows[0]!.removed_at).toBe('string');
    expect(byKey('licenses', (await readParquet(`${out}/licenses/*/*.parquet`)).rows)).toEqual(
      byKey('licenses', mirrorTable('licenses')),
    );
    const manifest = JSON.parse(
      await readFile(join(out, '_manifests', `snapshot_date=${date}.json`), 'utf8'),
    ) as SnapshotManifest;
    expect(manifest.pipeline_run_id).toBe(second.json!.runId);
    expect(utcDate(Date.now()) >= date).toBe(true);
  });
});
