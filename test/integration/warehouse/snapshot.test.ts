import { readdir, readFile, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MemoryLogger } from '../../../src/log/logger.js';
import {
  listSnapshotDates,
  readSnapshotManifest,
  snapshotFilePath,
  writeSnapshot,
} from '../../../src/warehouse/index.js';
import type { ColumnSpec, SnapshotTableInput } from '../../../src/warehouse/index.js';
import { duckdbQuery, readParquet, sqlString } from '../../helpers/read-parquet.js';
import { tempDir } from '../../helpers/temp-dir.js';

const LICENSE_COLUMNS: ColumnSpec[] = [
  { name: 'domain_normalized', type: 'text', nullable: false },
  { name: 'jurisdiction', type: 'text', nullable: false },
  { name: 'license_number', type: 'text', nullable: false },
  { name: 'status', type: 'text' },
  { name: 'first_seen_at', type: 'timestamp', nullable: false },
  { name: 'removed_at', type: 'timestamp' },
];

function license(domain: string, number: string, removedAt: string | null = null): Record<string, unknown> {
  return {
    domain_normalized: domain,
    jurisdiction: 'mga',
    license_number: number,
    status: 'active',
    first_seen_at: '2024-03-01T10:00:00.000Z',
    removed_at: removedAt,
  };
}

function licenses(rows: Array<Record<string, unknown>>): SnapshotTableInput {
  return { table: 'licenses', columns: LICENSE_COLUMNS, rows };
}

const DOMAIN_COLUMNS: ColumnSpec[] = [
  { name: 'domain_normalized', type: 'text', nullable: false },
  { name: 'credits', type: 'integer' },
];

const fixedClock = (): number => Date.parse('2024-05-02T03:04:05.678Z');

describe('writeSnapshot', () => {
  it('writes Hive-style partitions that DuckDB reads with hive_partitioning across two dates', async () => {
    const dir = await tempDir();
    await writeSnapshot({
      dir,
      snapshotDate: '2024-05-01',
      tables: [licenses([license('a.example', 'L1')])],
    });
    await writeSnapshot({
      dir,
      snapshotDate: '2024-05-02',
      tables: [
        licenses([license('a.example', 'L1'), license('казино.рф', 'L2', '2024-05-02T00:00:00.000Z')]),
      ],
    });
    expect(await readdir(join(dir, 'licenses'))).toEqual([
      'snapshot_date=2024-05-01',
      'snapshot_date=2024-05-02',
    ]);

    const { columns, rows } = await readParquet(join(dir, 'licenses', '*', '*.parquet'), {
      hivePartitioning: true,
      orderBy: 'snapshot_date, license_number',
    });
    expect(columns.at(-1)).toEqual({ name: 'snapshot_date', type: 'DATE' });
    expect(rows.map((r) => [r.snapshot_date, r.domain_normalized, r.removed_at])).toEqual([
      ['2024-05-01', 'a.example', null],
      ['2024-05-02', 'a.example', null],
      ['2024-05-02', 'казино.рф', '2024-05-02T00:00:00.000Z'],
    ]);
    // The contract's exact query shape (docs/contract.md "Snapshots").
    const counted = await duckdbQuery(
      `SELECT snapshot_date::VARCHAR AS d, count(*) AS n FROM read_parquet(${sqlString(
        `${dir}/licenses/*/*.parquet`,
      )}, hive_partitioning = true) GROUP BY ALL ORDER BY d`,
    );
    expect(counted.rows).toEqual([
      { d: '2024-05-01', n: 1n },
      { d: '2024-05-02', n: 2n },
    ]);
  });

  it('records each date in _manifests/ with counts, schema, bytes, time and run id', async () => {
    const dir = await tempDir();
    const result = await writeSnapshot({
      dir,
      snapshotDate: '2024-05-02',
      pipelineRunId: 17,
      clock: fixedClock,
      tables: [
        licenses([license('a.example', 'L1'), license('b.example', 'L2')]),
        {
          table: 'domains',
          columns: DOMAIN_COLUMNS,
          rows: [{ domain_normalized: 'a.example', credits: 9007199254740993n }],
        },
      ],
    });
    expect(result.manifestPath).toBe(join(dir, '_manifests', 'snapshot_date=2024-05-02.json'));
    expect(result.tables.map((t) => [t.table, t.rows])).toEqual([
      ['licenses', 2],
      ['domains', 1],
    ]);
    const manifest = await readSnapshotManifest(dir, '2024-05-02');
    expect(manifest).toMatchObject({
      format_version: 1,
      snapshot_date: '2024-05-02',
      written_at: '2024-05-02T03:04:05.678Z',
      pipeline_run_id: 17,
      tables: {
        licenses: {
          path: 'licenses/snapshot_date=2024-05-02/part-0.parquet',
          rows: 2,
          row_groups: 1,
          written_at: '2024-05-02T03:04:05.678Z',
          pipeline_run_id: 17,
        },
        domains: { path: 'domains/snapshot_date=2024-05-02/part-0.parquet', rows: 1 },
      },
    });
    expect(manifest!.tables.domains!.columns).toEqual([
      { name: 'domain_normalized', type: 'text', nullable: false },
      { name: 'credits', type: 'integer', nullable: true },
    ]);
    expect(manifest!.tables.licenses!.bytes).toBe(result.tables[0]!.bytes);
    // The manifest dir does not disturb the per-table glob nor look like a table.
    expect((await readParquet(`${dir}/domains/*/*.parquet`, { hivePartitioning: true })).rows).toEqual([
      { domain_normalized: 'a.example', credits: 9007199254740993n, snapshot_date: '2024-05-02' },
    ]);
  });

  it('a second snapshot on the same day replaces the first and merges the manifest', async () => {
    const dir = await tempDir();
    await writeSnapshot({
      dir,
      snapshotDate: '2024-05-02',
      pipelineRunId: 'run-1',
      tables: [
        licenses([license('a.example', 'L1'), license('b.example', 'L2')]),
        { table: 'domains', columns: DOMAIN_COLUMNS, rows: [{ domain_normalized: 'a.example', credits: 1 }] },
      ],
    });
    await writeSnapshot({
      dir,
      snapshotDate: '2024-05-02',
      pipelineRunId: 'run-2',
      tables: [licenses([license('c.example', 'L3')])],
    });
    const { rows } = await readParquet(`${dir}/licenses/*/*.parquet`, { hivePartitioning: true });
    expect(rows.map((r) => r.domain_normalized)).toEqual(['c.example']);
    expect(await readdir(join(dir, 'licenses', 'snapshot_date=2024-05-02'))).toEqual(['part-0.parquet']);
    const manifest = await readSnapshotManifest(dir, '2024-05-02');
    expect(manifest?.pipeline_run_id).toBe('run-2');
    expect(manifest?.tables.licenses).toMatchObject({ rows: 1, pipeline_run_id: 'run-2' });
    expect(manifest?.tables.domains).toMatchObject({ rows: 1, pipeline_run_id: 'run-1' });
  });

  it('keeps the newest retainDates dates per table and drops older partitions and manifests', async () => {
    const dir = await tempDir();
    const dates = ['2024-05-01', '2024-05-02', '2024-05-03', '2024-05-04'];
    for (const snapshotDate of dates.slice(0, 3)) {
      await writeSnapshot({ dir, snapshotDate, tables: [licenses([license('a.example', snapshotDate)])] });
    }
    // A crash leftover: a partition folder with only a temporary file, older than what is kept.
    await mkdir(join(dir, 'licenses', 'snapshot_date=2024-04-30'));
    await writeFile(join(dir, 'licenses', 'snapshot_date=2024-04-30', '.part-0.parquet.tmp-dead'), 'x');

    const result = await writeSnapshot({
      dir,
      snapshotDate: dates[3],
      retainDates: 2,
      tables: [licenses([license('a.example', dates[3]!)])],
    });
    expect(result.removed.map((r) => r.snapshotDate)).toEqual(['2024-04-30', '2024-05-01', '2024-05-02']);
    expect(await listSnapshotDates(dir, 'licenses')).toEqual(['2024-05-04', '2024-05-03']);
    expect(await readdir(join(dir, 'licenses'))).toEqual([
      'snapshot_date=2024-05-03',
      'snapshot_date=2024-05-04',
    ]);
    expect(await readdir(join(dir, '_manifests'))).toEqual([
      'snapshot_date=2024-05-03.json',
      'snapshot_date=2024-05-04.json',
    ]);
    const { rows } = await readParquet(`${dir}/licenses/*/*.parquet`, {
      hivePartitioning: true,
      orderBy: 'snapshot_date',
    });
    expect(rows.map((r) => r.snapshot_date)).toEqual(['2024-05-03', '2024-05-04']);
  });

  it('retention of one table keeps the manifest entries of the others', async () => {
    const dir = await tempDir();
    const domains = (): SnapshotTableInput => ({
      table: 'domains',
      columns: DOMAIN_COLUMNS,
      rows: [{ domain_normalized: 'a.example', credits: 1 }],
    });
    await writeSnapshot({ dir, snapshotDate: '2024-05-01', tables: [licenses([]), domains()] });
    await writeSnapshot({ dir, snapshotDate: '2024-05-02', tables: [licenses([])], retainDates: 1 });
    const manifest = await readSnapshotManifest(dir, '2024-05-01');
    expect(Object.keys(manifest!.tables)).toEqual(['domains']);
    expect(await listSnapshotDates(dir, 'domains')).toEqual(['2024-05-01']);
  });

  it('a failing table keeps the tables written before it and their manifest entries', async () => {
    const dir = await tempDir();
    await writeSnapshot({
      dir,
      snapshotDate: '2024-05-02',
      tables: [licenses([license('old.example', 'L0')])],
    });
    function* broken(): Generator<Record<string, unknown>> {
      yield license('x.example', 'L9');
      throw new Error('disk on fire');
    }
    await expect(
      writeSnapshot({
        dir,
        snapshotDate: '2024-05-02',
        tables: [
          {
            table: 'domains',
            columns: DOMAIN_COLUMNS,
            rows: [{ domain_normalized: 'a.example', credits: 2 }],
          },
          { table: 'licenses', columns: LICENSE_COLUMNS, rows: broken() },
        ],
      }),
    ).rejects.toMatchObject({ code: 'ERR_SNAPSHOT_WRITE', table: 'licenses' });
    expect((await readParquet(snapshotFilePath(dir, 'licenses', '2024-05-02'))).rows).toHaveLength(1);
    expect(await readdir(join(dir, 'licenses', 'snapshot_date=2024-05-02'))).toEqual(['part-0.parquet']);
    const manifest = await readSnapshotManifest(dir, '2024-05-02');
    expect(Object.keys(manifest!.tables).sort()).toEqual(['domains', 'licenses']);
    expect(manifest!.tables.licenses!.rows).toBe(1);
  });

  it('defaults the date to the UTC date of the clock and warns when rowCount differs', async () => {
    const dir = await tempDir();
    const logger = new MemoryLogger();
    const result = await writeSnapshot({
      dir,
      clock: () => Date.parse('2024-12-31T23:59:59.999Z'),
      logger,
      tables: [{ ...licenses([license('a.example', 'L1')]), rowCount: 2 }],
    });
    expect(result.snapshotDate).toBe('2024-12-31');
    expect(logger.events.filter((e) => e.level === 'warn')).toEqual([
      expect.objectContaining({
        fields: expect.objectContaining({ table: 'licenses', expected: 2, written: 1 }),
      }),
    ]);
  });

  it.each([
    ['a malformed date', { snapshotDate: '2024-5-1' }],
    ['an impossible date', { snapshotDate: '2024-02-30' }],
    ['a path-like table name', { table: '../etc' }],
    ['a reserved table name', { table: '_manifests' }],
    ['retainDates 0', { retainDates: 0 }],
  ])('rejects %s before writing anything', async (_label, override) => {
    const dir = await tempDir();
    const { table = 'licenses', ...rest } = override as { table?: string };
    await expect(
      writeSnapshot({ dir, snapshotDate: '2024-05-01', ...rest, tables: [{ ...licenses([]), table }] }),
    ).rejects.toMatchObject({ code: 'ERR_SNAPSHOT_SCHEMA' });
    expect(await readdir(dir)).toEqual([]);
  });

  it('removes temporary files left by a crashed earlier write of the same partition', async () => {
    const dir = await tempDir();
    const partition = join(dir, 'licenses', 'snapshot_date=2024-05-02');
    await mkdir(partition, { recursive: true });
    await writeFile(join(partition, '.part-0.parquet.tmp-0badc0de'), 'partial');
    await writeSnapshot({ dir, snapshotDate: '2024-05-02', tables: [licenses([])] });
    expect(await readdir(partition)).toEqual(['part-0.parquet']);
    expect(
      JSON.parse(await readFile(join(dir, '_manifests', 'snapshot_date=2024-05-02.json'), 'utf8')),
    ).toMatchObject({
      tables: { licenses: { rows: 0 } },
    });
  });

  it('removes the temporary manifest file a process killed while writing the manifest left behind', async () => {
    const dir = await tempDir();
    const manifests = join(dir, '_manifests');
    await mkdir(manifests, { recursive: true });
    // What a SIGKILL between the manifest's write and its rename leaves (the crash matrix saw it).
    await writeFile(join(manifests, '.snapshot_date=2024-05-03.json.tmp-182da5b0'), '{"format_ver');
    // Another date's leftover is that date's to clean, on its next snapshot.
    await writeFile(join(manifests, '.snapshot_date=2024-05-04.json.tmp-0badc0de'), '{');
    await writeSnapshot({ dir, snapshotDate: '2024-05-03', tables: [licenses([])] });
    expect((await readdir(manifests)).sort()).toEqual([
      '.snapshot_date=2024-05-04.json.tmp-0badc0de',
      'snapshot_date=2024-05-03.json',
    ]);
  });
});
