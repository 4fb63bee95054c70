import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeParquetFile } from '../../../src/warehouse/index.js';
import type { ColumnSpec } from '../../../src/warehouse/index.js';
import { duckdbQuery, readParquet, sqlString } from '../../helpers/read-parquet.js';
import { tempDir } from '../../helpers/temp-dir.js';

const COLUMNS: ColumnSpec[] = [
  { name: 'domain_normalized', type: 'text', nullable: false },
  { name: 'credits', type: 'integer' },
  { name: 'confidence', type: 'real' },
  { name: 'active', type: 'boolean' },
  { name: 'first_seen_at', type: 'timestamp' },
  { name: 'removed_at', type: 'timestamp' },
  { name: 'data', type: 'json' },
];

const ROWS: Array<Record<string, unknown>> = [
  {
    domain_normalized: 'казино.рф',
    credits: 9007199254740993n,
    confidence: 0.25,
    active: 1,
    first_seen_at: '2024-02-29T23:59:59.999Z',
    removed_at: null,
    data: '{"geo":["RU"]}',
  },
  {
    domain_normalized: 'lucky-🎰-spins.example',
    credits: 42,
    confidence: null,
    active: false,
    first_seen_at: '1999-12-31T00:00:00.000Z',
    removed_at: '2030-06-15T08:30:00.123Z',
    data: { game_providers: ['NetEnt', 'Pragmatic Play'], nested: { n: 1 } },
  },
  {
    domain_normalized: 'plain.example',
    credits: -9223372036854775808n,
    confidence: -1.5e300,
    active: null,
    first_seen_at: '2024-01-01T00:00:00.000Z',
    removed_at: undefined,
    data: null,
  },
];

describe('writeParquetFile read back by DuckDB', () => {
  it('writes the documented types and exactly the input values, nulls included', async () => {
    const dir = await tempDir();
    const path = join(dir, 't', 'part-0.parquet');
    const result = await writeParquetFile({ path, columns: COLUMNS, rows: ROWS, table: 't' });
    expect(result).toMatchObject({ path, rows: 3, rowGroups: 1 });
    expect(result.bytes).toBeGreaterThan(0);

    const { columns, rows } = await readParquet(path);
    expect(columns).toEqual([
      { name: 'domain_normalized', type: 'VARCHAR' },
      { name: 'credits', type: 'BIGINT' },
      { name: 'confidence', type: 'DOUBLE' },
      { name: 'active', type: 'BOOLEAN' },
      { name: 'first_seen_at', type: 'TIMESTAMP WITH TIME ZONE' },
      { name: 'removed_at', type: 'TIMESTAMP WITH TIME ZONE' },
      { name: 'data', type: 'VARCHAR' },
    ]);
    expect(rows).toEqual([
      {
        domain_normalized: 'казино.рф',
        credits: 9007199254740993n,
        confidence: 0.25,
        active: true,
        first_seen_at: '2024-02-29T23:59:59.999Z',
        removed_at: null,
        data: '{"geo":["RU"]}',
      },
      {
        domain_normalized: 'lucky-🎰-spins.example',
        credits: 42n,
        confidence: null,
        active: false,
        first_seen_at: '1999-12-31T00:00:00.000Z',
        removed_at: '2030-06-15T08:30:00.123Z',
        data: '{"game_providers":["NetEnt","Pragmatic Play"],"nested":{"n":1}}',
      },
      {
        domain_normalized: 'plain.example',
        credits: -9223372036854775808n,
        confidence: -1.5e300,
        active: null,
        first_seen_at: '2024-01-01T00:00:00.000Z',
        removed_at: null,
        data: null,
      },
    ]);
  });

  it('keeps INT64 above 2^53 exact when compared inside DuckDB', async () => {
    const dir = await tempDir();
    const path = join(dir, 'big.parquet');
    await writeParquetFile({
      path,
      columns: [{ name: 'n', type: 'integer', nullable: false }],
      rows: [{ n: 9007199254740993n }, { n: 9223372036854775807n }],
    });
    const { rows } = await duckdbQuery(
      `SELECT n = 9007199254740993 AS a, n::VARCHAR AS s FROM read_parquet(${sqlString(path)})`,
    );
    expect(rows).toEqual([
      { a: true, s: '9007199254740993' },
      { a: false, s: '9223372036854775807' },
    ]);
  });

  it('stores timestamps as UTC instants: other offsets are normalised, sub-ms digits kept in MICROS', async () => {
    const dir = await tempDir();
    const path = join(dir, 'ts.parquet');
    await writeParquetFile({
      path,
      columns: [{ name: 'at', type: 'timestamp', nullable: false }],
      rows: [
        { at: '2024-05-01T12:00:00+02:00' },
        { at: new Date('2024-05-01T10:00:00.000Z') },
        { at: '2024-05-01T10:00:00.123456Z' },
      ],
    });
    const { rows } = await duckdbQuery(`SELECT epoch_us("at") AS us FROM read_parquet(${sqlString(path)})`);
    expect(rows.map((r) => r.us)).toEqual([1714557600000000n, 1714557600000000n, 1714557600123456n]);
  });

  it('writes MILLIS timestamps when asked', async () => {
    const dir = await tempDir();
    const path = join(dir, 'ms.parquet');
    await writeParquetFile({
      path,
      columns: [{ name: 'at', type: 'timestamp' }],
      rows: [{ at: '2024-05-01T10:00:00.123Z' }],
      timestampUnit: 'MILLIS',
    });
    const { columns, rows } = await readParquet(path);
    expect(columns).toEqual([{ name: 'at', type: 'TIMESTAMP WITH TIME ZONE' }]);
    expect(rows).toEqual([{ at: '2024-05-01T10:00:00.123Z' }]);
  });

  it('writes a valid file with the full schema for zero rows', async () => {
    const dir = await tempDir();
    const path = join(dir, 'empty.parquet');
    const result = await writeParquetFile({ path, columns: COLUMNS, rows: [] });
    expect(result).toMatchObject({ rows: 0, rowGroups: 0 });
    const { columns, rows } = await readParquet(path);
    expect(columns.map((c) => c.type)).toEqual([
      'VARCHAR',
      'BIGINT',
      'DOUBLE',
      'BOOLEAN',
      'TIMESTAMP WITH TIME ZONE',
      'TIMESTAMP WITH TIME ZONE',
      'VARCHAR',
    ]);
    expect(rows).toEqual([]);
  });

  it('splits rows into row groups of rowGroupSize and reads them back in order', async () => {
    const dir = await tempDir();
    const path = join(dir, 'groups.parquet');
    function* generate(): Generator<Record<string, unknown>> {
      for (let i = 0; i < 2_503; i++) {
        yield { id: i, name: `row-${i}`, at: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString() };
      }
    }
    const result = await writeParquetFile({
      path,
      columns: [
        { name: 'id', type: 'integer', nullable: false },
        { name: 'name', type: 'text' },
        { name: 'at', type: 'timestamp' },
      ],
      rows: generate(),
      rowGroupSize: 500,
    });
    expect(result).toMatchObject({ rows: 2_503, rowGroups: 6 });
    const meta = await duckdbQuery(
      `SELECT count(DISTINCT row_group_id) AS groups, max(row_group_num_rows) AS biggest FROM parquet_metadata(${sqlString(path)})`,
    );
    expect(meta.rows).toEqual([{ groups: 6n, biggest: 500n }]);
    const { rows } = await readParquet(path);
    expect(rows).toHaveLength(2_503);
    expect(rows.every((row, i) => row.id === BigInt(i) && row.name === `row-${i}`)).toBe(true);
    expect(rows[2_502]).toEqual({ id: 2502n, name: 'row-2502', at: '2024-01-01T00:41:42.000Z' });
  });

  it('closes row groups early when maxRowGroupBytes is reached, so wide rows keep memory bounded', async () => {
    const dir = await tempDir();
    const path = join(dir, 'wide.parquet');
    const rows = Array.from({ length: 100 }, (_, i) => ({ id: i, data: 'x'.repeat(968) }));
    // Each row is estimated at 2 × 32 + 968 = 1,032 bytes, so 10 rows fill 10,320 bytes.
    const result = await writeParquetFile({
      path,
      columns: [
        { name: 'id', type: 'integer' },
        { name: 'data', type: 'json' },
      ],
      rows,
      maxRowGroupBytes: 10_000,
    });
    expect(result).toMatchObject({ rows: 100, rowGroups: 10 });
    const { rows: back } = await duckdbQuery(
      `SELECT count(*) AS n, sum(length(data)) AS chars FROM read_parquet(${sqlString(path)})`,
    );
    expect(back).toEqual([{ n: 100n, chars: 96_800n }]);
  });

  it('accepts an async iterable and GZIP compression', async () => {
    const dir = await tempDir();
    const path = join(dir, 'gz.parquet');
    async function* generate(): AsyncGenerator<Record<string, unknown>> {
      for (let i = 0; i < 1_000; i++) {
        await Promise.resolve();
        yield { id: BigInt(i), label: i % 2 === 0 ? 'even' : 'odd' };
      }
    }
    await writeParquetFile({
      path,
      columns: [
        { name: 'id', type: 'integer' },
        { name: 'label', type: 'text' },
      ],
      rows: generate(),
      compression: 'GZIP',
      rowGroupSize: 300,
    });
    const codecs = await duckdbQuery(`SELECT DISTINCT compression FROM parquet_metadata(${sqlString(path)})`);
    expect(codecs.rows).toEqual([{ compression: 'GZIP' }]);
    const { rows } = await duckdbQuery(
      `SELECT count(*) AS n, sum(id) AS total, count(*) FILTER (WHERE label = 'odd') AS odd FROM read_parquet(${sqlString(path)})`,
    );
    expect(rows).toEqual([{ n: 1000n, total: 499500n, odd: 500n }]);
  });

  it('writes ZSTD by default; DuckDB reads it exactly as the SNAPPY file; the same rows give the same bytes', async () => {
    const dir = await tempDir();
    const rows = Array.from({ length: 5_000 }, (_, i) => ({
      ...ROWS[i % ROWS.length],
      domain_normalized: `d${i}.example`,
      data: JSON.stringify({ i, text: 'x'.repeat(i % 300) }),
    }));
    const zstd = join(dir, 'zstd.parquet');
    const again = join(dir, 'zstd-again.parquet');
    const snappy = join(dir, 'snappy.parquet');
    const first = await writeParquetFile({ path: zstd, columns: COLUMNS, rows, rowGroupSize: 2_000 });
    // Array rows (what the snapshot pipeline passes) give the same file as object rows.
    const arrays = rows.map((row) => COLUMNS.map((c) => (row as Record<string, unknown>)[c.name]));
    const second = await writeParquetFile({
      path: again,
      columns: COLUMNS,
      rows: arrays,
      rowGroupSize: 2_000,
    });
    await writeParquetFile({
      path: snappy,
      columns: COLUMNS,
      rows,
      rowGroupSize: 2_000,
      compression: 'SNAPPY',
    });
    const codecs = await duckdbQuery(`SELECT DISTINCT compression FROM parquet_metadata(${sqlString(zstd)})`);
    expect(codecs.rows).toEqual([{ compression: 'ZSTD' }]);
    expect(second.sha256).toBe(first.sha256);
    expect(await readFile(again)).toEqual(await readFile(zstd));
    const back = (await readParquet(zstd)).rows;
    expect(back).toHaveLength(5_000);
    expect(back).toEqual((await readParquet(snappy)).rows);
  });

  it('replaces an existing file under the final name and leaves no temporary file', async () => {
    const dir = await tempDir();
    const path = join(dir, 'part-0.parquet');
    await writeFile(path, 'old contents');
    await writeParquetFile({ path, columns: [{ name: 'a', type: 'text' }], rows: [{ a: 'new' }] });
    expect((await readParquet(path)).rows).toEqual([{ a: 'new' }]);
    expect(await readdir(dir)).toEqual(['part-0.parquet']);
    expect((await readFile(path)).subarray(0, 4).toString()).toBe('PAR1');
  });
});
