import { readdir, writeFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeParquetFile } from '../../../src/warehouse/index.js';
import type { ColumnSpec } from '../../../src/warehouse/index.js';
import { readParquet } from '../../helpers/read-parquet.js';
import { tempDir } from '../../helpers/temp-dir.js';

const COLUMNS: ColumnSpec[] = [
  { name: 'id', type: 'integer', nullable: false },
  { name: 'seen_at', type: 'timestamp' },
];

function* rowsThenThrow(count: number, closed: { value: boolean }): Generator<Record<string, unknown>> {
  try {
    for (let i = 0; i < count; i++) yield { id: i, seen_at: '2024-01-01T00:00:00.000Z' };
    throw new Error('cursor exploded');
  } finally {
    closed.value = true;
  }
}

async function errorOf(promise: Promise<unknown>): Promise<Error & Record<string, unknown>> {
  try {
    await promise;
  } catch (error) {
    return error as Error & Record<string, unknown>;
  }
  throw new Error('expected the write to fail');
}

describe('writeParquetFile failures', () => {
  it('a rows source that throws midway leaves no file under the final name and no temporary file', async () => {
    const dir = await tempDir();
    const path = join(dir, 'part-0.parquet');
    const closed = { value: false };
    const error = await errorOf(
      writeParquetFile({
        path,
        table: 'licenses',
        columns: COLUMNS,
        rows: rowsThenThrow(2_500, closed),
        rowGroupSize: 1_000,
      }),
    );
    expect(error.code).toBe('ERR_SNAPSHOT_WRITE');
    expect(error.message).toContain('"licenses"');
    expect(error.message).toContain(path);
    expect(error.message).toContain('after 2500 rows');
    expect((error.cause as Error).message).toBe('cursor exploded');
    expect(await readdir(dir)).toEqual([]);
    expect(closed.value).toBe(true);
  });

  it('a failed rewrite leaves the previous file untouched', async () => {
    const dir = await tempDir();
    const path = join(dir, 'part-0.parquet');
    await writeParquetFile({ path, columns: COLUMNS, rows: [{ id: 1, seen_at: null }] });
    const before = await readFile(path);
    await errorOf(writeParquetFile({ path, columns: COLUMNS, rows: rowsThenThrow(10, { value: false }) }));
    expect(await readFile(path)).toEqual(before);
    expect(await readdir(dir)).toEqual(['part-0.parquet']);
    expect((await readParquet(path)).rows).toEqual([{ id: 1n, seen_at: null }]);
  });

  it.each([
    [
      'an unparsable timestamp',
      { id: 1, seen_at: 'yesterday' },
      'seen_at',
      /expected an ISO 8601 timestamp.*"yesterday"/,
    ],
    ['an impossible date', { id: 1, seen_at: '2023-02-29T00:00:00.000Z' }, 'seen_at', /ISO 8601/],
    ['a null in a non-nullable column', { id: null, seen_at: null }, 'id', /null in a non-nullable column/],
    ['a number above 2^53', { id: 2 ** 53 + 2, seen_at: null }, 'id', /safe integer/],
    ['a fractional integer', { id: 1.5, seen_at: null }, 'id', /safe integer/],
    ['a bigint beyond int64', { id: 2n ** 63n, seen_at: null }, 'id', /int64/],
    ['a string for an integer', { id: '7', seen_at: null }, 'id', /got "7"/],
  ])('rejects %s naming table, column and row', async (_label, bad, column, pattern) => {
    const dir = await tempDir();
    const path = join(dir, 'part-0.parquet');
    const rows = [{ id: 0, seen_at: null }, { id: 1, seen_at: null }, bad];
    const error = await errorOf(writeParquetFile({ path, table: 'licenses', columns: COLUMNS, rows }));
    expect(error.code).toBe('ERR_SNAPSHOT_VALUE');
    expect(error).toMatchObject({ table: 'licenses', column, row: 2, path });
    expect(error.message).toContain(`table "licenses", column "${column}", row 2`);
    expect(error.message).toMatch(pattern);
    expect(await readdir(dir)).toEqual([]);
  });

  it.each([
    ['a boolean column given 2', [{ name: 'b', type: 'boolean' }], { b: 2 }],
    ['a text column given a number', [{ name: 't', type: 'text' }], { t: 5 }],
    ['a real column given a string', [{ name: 'r', type: 'real' }], { r: '1.5' }],
  ] as const)('rejects %s', async (_label, columns, row) => {
    const dir = await tempDir();
    const error = await errorOf(writeParquetFile({ path: join(dir, 'x.parquet'), columns, rows: [row] }));
    expect(error.code).toBe('ERR_SNAPSHOT_VALUE');
  });

  it('rejects an invalid column list before creating anything', async () => {
    const dir = await tempDir();
    const path = join(dir, 'sub', 'x.parquet');
    for (const columns of [
      [],
      [
        { name: 'a', type: 'text' },
        { name: 'a', type: 'integer' },
      ],
      [{ name: 'a', type: 'date' }],
    ] as unknown as ColumnSpec[][]) {
      const error = await errorOf(writeParquetFile({ path, columns, rows: [] }));
      expect(error.code).toBe('ERR_SNAPSHOT_SCHEMA');
    }
    expect(await readdir(dir)).toEqual([]);
  });

  it('stops on abort, removes the temporary file and keeps the previous file', async () => {
    const dir = await tempDir();
    const path = join(dir, 'part-0.parquet');
    await writeFile(path, 'previous');
    const controller = new AbortController();
    function* rows(): Generator<Record<string, unknown>> {
      for (let i = 0; ; i++) {
        if (i === 10_000) controller.abort();
        yield { id: i, seen_at: null };
      }
    }
    const error = await errorOf(
      writeParquetFile({
        path,
        columns: COLUMNS,
        rows: rows(),
        signal: controller.signal,
        rowGroupSize: 1_000,
      }),
    );
    expect(error.code).toBe('ERR_ABORTED');
    expect(await readdir(dir)).toEqual(['part-0.parquet']);
    expect(await readFile(path, 'utf8')).toBe('previous');
  });
});
