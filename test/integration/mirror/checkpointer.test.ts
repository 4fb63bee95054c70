import { statSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import {
  BULK_AUTOCHECKPOINT_BYTES,
  bulkAutocheckpointPages,
  WRITER_AUTOCHECKPOINT_BYTES,
  bulkCommits,
  withBulkAutocheckpoint,
} from '../../../src/mirror/checkpointer.js';
import { mirrorInternals, openMirror } from '../../../src/mirror/database.js';
import type { Mirror } from '../../../src/mirror/database.js';
import { upsertProfiles } from '../../../src/mirror/store/profiles.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { profile } from './builders.js';
import { tempMirror } from './helpers.js';

const pragma = async (mirror: Mirror, name: string): Promise<unknown> =>
  Object.values((await sql.raw(`PRAGMA ${name}`).execute(mirror.db)).rows[0] as object)[0];

const MB = 1024 * 1024;

/**
 * Writes `mb` MB of rows in transactions of 1 MB, yielding between them like a pipeline, and
 * returns the largest WAL file seen after a commit.
 */
async function bulkWrite(mirror: Mirror, mb: number): Promise<number> {
  await sql`CREATE TABLE IF NOT EXISTS bulk (id INTEGER PRIMARY KEY, data TEXT NOT NULL)`.execute(mirror.db);
  let largestWal = 0;
  for (let i = 0; i < mb; i++) {
    await mirror.db.transaction().execute(async (trx) => {
      for (let j = 0; j < 16; j++) {
        await sql`INSERT INTO bulk (data) VALUES (${'x'.repeat(64 * 1024)})`.execute(trx);
      }
    });
    largestWal = Math.max(largestWal, statSync(`${mirror.path}-wal`).size);
    await new Promise((resolve) => setImmediate(resolve));
  }
  return largestWal;
}

describe('withBulkAutocheckpoint', () => {
  it('checkpoints every ~40 MB of WAL during a bulk write, so the WAL is reused instead of growing', async () => {
    const dir = await tempDir();
    const path = join(dir, 'mirror.sqlite');
    const mirror = await openMirror(path);
    try {
      expect(await pragma(mirror, 'wal_autocheckpoint')).toBe(1000);
      const largestWal = await withBulkAutocheckpoint(mirror, async () => {
        // ~40 MB of 8 KiB pages (a new mirror's).
        expect(await pragma(mirror, 'wal_autocheckpoint')).toBe(5000);
        return bulkWrite(mirror, 120);
      });
      // 120 MB written: without checkpoints the WAL would hold all of it. With one every ~40 MB
      // it never exceeds that plus the transaction that crossed the line.
      expect(largestWal).toBeGreaterThan(10 * MB);
      expect(largestWal).toBeLessThan(BULK_AUTOCHECKPOINT_BYTES + 4 * MB);
      // The database file holds the checkpointed rows.
      expect(statSync(path).size).toBeGreaterThan(60 * MB);
      expect(await pragma(mirror, 'wal_autocheckpoint')).toBe(1000);
      expect(await pragma(mirror, 'integrity_check')).toBe('ok');
      const rows = await sql<{ n: number }>`SELECT count(*) AS n FROM bulk`.execute(mirror.db);
      expect(rows.rows[0]!.n).toBe(120 * 16);
    } finally {
      await mirror.close();
    }
  });

  it('sizes the interval in bytes: 10,000 pages in a mirror of 4 KiB pages, 5,000 in one of 8 KiB', () => {
    const small = new Database(':memory:');
    const large = new Database(':memory:');
    try {
      small.pragma('page_size = 4096');
      large.pragma('page_size = 8192');
      expect(bulkAutocheckpointPages(small)).toBe(10_000);
      expect(bulkAutocheckpointPages(large)).toBe(5000);
      // The sync's writer thread: ~120 MB, three times as many pages.
      expect(bulkAutocheckpointPages(small, WRITER_AUTOCHECKPOINT_BYTES)).toBe(30_000);
      expect(bulkAutocheckpointPages(large, WRITER_AUTOCHECKPOINT_BYTES)).toBe(15_000);
      // Never below SQLite's default.
      expect(bulkAutocheckpointPages(large, 4096)).toBe(1000);
    } finally {
      small.close();
      large.close();
    }
  });

  it('restores the auto-checkpoint and passes the error on when the bulk write throws', async () => {
    const dir = await tempDir();
    const mirror = await openMirror(join(dir, 'mirror.sqlite'));
    try {
      await expect(
        withBulkAutocheckpoint(mirror, async () => {
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
      await expect(withBulkAutocheckpoint(mirror, () => Promise.resolve(42))).resolves.toBe(42);
    } finally {
      await mirror.close();
    }
  });
});

describe('bulkCommits', () => {
  const SYNCED = '2025-04-01T00:00:00.000Z';
  const batch = (from: number, count: number) =>
    Array.from({ length: count }, (_, i) => profile(`d${from + i}.example`));

  /** Domains another connection sees: only what was committed. */
  function committedDomains(mirror: Mirror): number {
    const reader = new Database(mirror.path, { readonly: true });
    try {
      return (reader.prepare('SELECT count(*) AS n FROM domains').get() as { n: number }).n;
    } finally {
      reader.close();
    }
  }

  it('commits once rowsPerCommit rows are written, each batch in a savepoint, and on commit()', async () => {
    const mirror = await tempMirror();
    const commits = bulkCommits(mirror, 5);
    // upsertProfiles opens its own transaction: inside the open one it nests as a savepoint.
    expect(commits.write(2, () => upsertProfiles(mirror, batch(0, 2), { syncedAt: SYNCED })).profiles).toBe(
      2,
    );
    commits.write(2, () => upsertProfiles(mirror, batch(2, 2), { syncedAt: SYNCED }));
    expect(committedDomains(mirror)).toBe(0);
    commits.write(2, () => upsertProfiles(mirror, batch(4, 2), { syncedAt: SYNCED }));
    expect(committedDomains(mirror)).toBe(6);
    commits.write(1, () => upsertProfiles(mirror, batch(6, 1), { syncedAt: SYNCED }));
    expect(committedDomains(mirror)).toBe(6);
    commits.commit();
    expect(committedDomains(mirror)).toBe(7);
    commits.commit(); // nothing open: nothing to do
    expect(await pragma(mirror, 'integrity_check')).toBe('ok');
  });

  it('inside a transaction the caller holds, writes without committing it', async () => {
    const mirror = await tempMirror();
    const { sqlite } = mirrorInternals(mirror);
    sqlite.exec('BEGIN IMMEDIATE');
    const commits = bulkCommits(mirror, 1);
    commits.write(2, () => upsertProfiles(mirror, batch(0, 2), { syncedAt: SYNCED }));
    commits.commit();
    expect(sqlite.inTransaction).toBe(true);
    expect(committedDomains(mirror)).toBe(0);
    sqlite.exec('COMMIT');
    expect(committedDomains(mirror)).toBe(2);
  });

  it('a batch that throws is rolled back alone: the batches before it are committed, the error passed on', async () => {
    const mirror = await tempMirror();
    const commits = bulkCommits(mirror, 100);
    commits.write(3, () => upsertProfiles(mirror, batch(0, 3), { syncedAt: SYNCED }));
    const bad = [...batch(3, 2), profile('bad.example', { last_enriched_at: 'yesterday' })];
    expect(() => commits.write(3, () => upsertProfiles(mirror, bad, { syncedAt: SYNCED }))).toThrow(
      /yesterday/,
    );
    expect(committedDomains(mirror)).toBe(3);
    // The connection is usable and starts a new transaction for the next batch.
    commits.write(1, () => upsertProfiles(mirror, batch(10, 1), { syncedAt: SYNCED }));
    commits.commit();
    expect(committedDomains(mirror)).toBe(4);
  });
});
