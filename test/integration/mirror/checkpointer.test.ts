import { statSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { withBackgroundCheckpoints } from '../../../src/mirror/checkpointer.js';
import { openMirror } from '../../../src/mirror/database.js';
import type { Mirror } from '../../../src/mirror/database.js';
import { tempDir } from '../../helpers/temp-dir.js';

const pragma = async (mirror: Mirror, name: string): Promise<unknown> =>
  Object.values((await sql.raw(`PRAGMA ${name}`).execute(mirror.db)).rows[0] as object)[0];

/** Writes about `mb` MB of rows in transactions of 1 MB, yielding between them like a pipeline. */
async function bulkWrite(mirror: Mirror, mb: number): Promise<void> {
  await sql`CREATE TABLE IF NOT EXISTS bulk (id INTEGER PRIMARY KEY, data TEXT NOT NULL)`.execute(mirror.db);
  for (let i = 0; i < mb; i++) {
    await mirror.db.transaction().execute(async (trx) => {
      for (let j = 0; j < 16; j++) {
        await sql`INSERT INTO bulk (data) VALUES (${'x'.repeat(64 * 1024)})`.execute(trx);
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('withBackgroundCheckpoints', () => {
  it('turns the writer’s auto-checkpoint off while a worker copies the WAL into the database', async () => {
    const dir = await tempDir();
    const path = join(dir, 'mirror.sqlite');
    const mirror = await openMirror(path);
    try {
      expect(await pragma(mirror, 'wal_autocheckpoint')).toBe(1000);
      const sizeBefore = statSync(path).size;
      await withBackgroundCheckpoints(
        mirror,
        async () => {
          expect(await pragma(mirror, 'wal_autocheckpoint')).toBe(0);
          await bulkWrite(mirror, 12);
          // The writer never checkpoints now, so the database file only grows if the worker
          // copied committed frames into it.
          const deadline = Date.now() + 10_000;
          while (statSync(path).size < sizeBefore + 8 * 1024 * 1024 && Date.now() < deadline) {
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
          expect(statSync(path).size).toBeGreaterThan(sizeBefore + 8 * 1024 * 1024);
          // Still off: the worker did not fail (a failing worker gives the writer its checkpoints back).
          expect(await pragma(mirror, 'wal_autocheckpoint')).toBe(0);
        },
        { intervalMs: 20 },
      );
      expect(await pragma(mirror, 'wal_autocheckpoint')).toBe(1000);
      expect(await pragma(mirror, 'integrity_check')).toBe('ok');
      const rows = await sql<{ n: number }>`SELECT count(*) AS n FROM bulk`.execute(mirror.db);
      expect(rows.rows[0]!.n).toBe(12 * 16);
    } finally {
      await mirror.close();
    }
  });

  it('restores the auto-checkpoint and passes the error on when the bulk write throws', async () => {
    const dir = await tempDir();
    const mirror = await openMirror(join(dir, 'mirror.sqlite'));
    try {
      await expect(
        withBackgroundCheckpoints(mirror, async () => {
          await bulkWrite(mirror, 1);
          throw new Error('write failed');
        }),
      ).rejects.toThrow('write failed');
      expect(await pragma(mirror, 'wal_autocheckpoint')).toBe(1000);
      expect(await pragma(mirror, 'integrity_check')).toBe('ok');
    } finally {
      await mirror.close();
    }
  });

  it('runs the work unchanged for an in-memory mirror', async () => {
    const mirror = await openMirror(':memory:');
    try {
      await expect(withBackgroundCheckpoints(mirror, () => Promise.resolve(42))).resolves.toBe(42);
    } finally {
      await mirror.close();
    }
  });
});
