/**
 * kill -9 in the middle of a snapshot: no partial file is ever visible under
 * the final name, the `*\/*.parquet` glob ignores the leftover temporary file, and the next
 * snapshot succeeds.
 *
 * The writer runs in a child process (snapshot-writer-child.ts, run from source like every child
 * the tests start), which is killed once its temporary file holds several row groups.
 */
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { snapshotFilePath, writeSnapshot } from '../../../src/warehouse/index.js';
import { startNodeScript } from '../../helpers/cli.js';
import { readParquet } from '../../helpers/read-parquet.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { COLUMNS, type MidWriteReport } from './snapshot-writer-child.js';

const CHILD = join(import.meta.dirname, 'snapshot-writer-child.ts');

/** Runs the child until it reports its temporary file, SIGKILLs it, and returns the report. */
async function killMidWrite(dir: string, snapshotDate: string): Promise<MidWriteReport> {
  const child = startNodeScript(CHILD, [dir, snapshotDate, '12000']);
  const [, line] = await child.waitForOutput(/^(\{.*\})\n/m);
  child.kill();
  expect((await child.exited).signal).toBe('SIGKILL');
  return JSON.parse(line!) as MidWriteReport;
}

describe('snapshot killed with SIGKILL mid-write', () => {
  it('leaves nothing under the final name for a new date; the glob skips the temp file; the next write succeeds', async () => {
    const dir = await tempDir();
    await writeSnapshot({
      dir,
      snapshotDate: '2024-05-01',
      tables: [{ table: 'licenses', columns: COLUMNS, rows: [{ id: 1, payload: 'kept', seen_at: null }] }],
    });

    const report = await killMidWrite(dir, '2024-05-02');
    expect(report.temp).toHaveLength(1);
    expect(report.temp[0]).toMatch(/^\.part-0\.parquet\.tmp-[0-9a-f]+$/);
    // Several row groups had reached the disk when the process died: a real partial file.
    expect(report.size[0]).toBeGreaterThan(4 * 1024 * 1024);

    const partition = join(dir, 'licenses', 'snapshot_date=2024-05-02');
    expect(await readdir(partition)).toEqual(report.temp);
    const afterKill = await readParquet(`${dir}/licenses/*/*.parquet`, { hivePartitioning: true });
    expect(afterKill.rows).toEqual([{ id: 1n, payload: 'kept', seen_at: null, snapshot_date: '2024-05-01' }]);

    await writeSnapshot({
      dir,
      snapshotDate: '2024-05-02',
      tables: [{ table: 'licenses', columns: COLUMNS, rows: [{ id: 2, payload: 'next', seen_at: null }] }],
    });
    expect(await readdir(partition)).toEqual(['part-0.parquet']);
    const next = await readParquet(`${dir}/licenses/*/*.parquet`, { hivePartitioning: true, orderBy: 'id' });
    expect(next.rows.map((r) => r.payload)).toEqual(['kept', 'next']);
  });

  it('keeps the previous complete file when a same-day rewrite is killed', async () => {
    const dir = await tempDir();
    await writeSnapshot({
      dir,
      snapshotDate: '2024-05-02',
      tables: [{ table: 'licenses', columns: COLUMNS, rows: [{ id: 1, payload: 'first', seen_at: null }] }],
    });
    const path = snapshotFilePath(dir, 'licenses', '2024-05-02');
    const before = await readFile(path);

    await killMidWrite(dir, '2024-05-02');
    expect(await readFile(path)).toEqual(before);
    expect((await readParquet(`${dir}/licenses/*/*.parquet`, { hivePartitioning: true })).rows).toEqual([
      { id: 1n, payload: 'first', seen_at: null, snapshot_date: '2024-05-02' },
    ]);

    await writeSnapshot({
      dir,
      snapshotDate: '2024-05-02',
      tables: [{ table: 'licenses', columns: COLUMNS, rows: [{ id: 2, payload: 'second', seen_at: null }] }],
    });
    expect(await readdir(dirname(path))).toEqual(['part-0.parquet']);
    expect((await readParquet(path)).rows.map((r) => r.payload)).toEqual(['second']);
  });
});
