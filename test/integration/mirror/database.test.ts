import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrateMirror, NEW_MIRROR_PAGE_SIZE, openMirror } from '../../../src/mirror/database.js';
import { tempDir } from '../../helpers/temp-dir.js';

describe('openMirror', () => {
  it('creates the parent directory, sets the pragmas and migrates a fresh file', async () => {
    const dir = await tempDir();
    const path = join(dir, 'nested', 'deeper', 'mirror.sqlite');
    const mirror = await openMirror(path);
    try {
      expect(mirror.path).toBe(path);
      const mode = await sql<{ journal_mode: string }>`PRAGMA journal_mode`.execute(mirror.db);
      expect(mode.rows[0]!.journal_mode).toBe('wal');
      const fk = await sql<{ foreign_keys: number }>`PRAGMA foreign_keys`.execute(mirror.db);
      expect(fk.rows[0]!.foreign_keys).toBe(1);
      const tables = await sql<{
        name: string;
      }>`SELECT name FROM sqlite_schema WHERE type IN ('table', 'view')`.execute(mirror.db);
      const names = tables.rows.map((r) => r.name);
      for (const t of [
        'domains',
        'licenses',
        'payment_methods',
        'domain_sections',
        'enrichment_runs',
        'exports',
        'pipeline_runs',
        'sync_state',
        'credit_ledger',
        'account_snapshots',
        'v_domain_overview',
        'v_licence_changes',
        'v_stale_domains',
        'v_credits_per_day',
      ]) {
        expect(names).toContain(t);
      }
    } finally {
      await mirror.close();
    }
  });

  it('re-opens an existing mirror without applying anything again', async () => {
    const dir = await tempDir();
    const path = join(dir, 'mirror.sqlite');
    await (await openMirror(path)).close();
    const mirror = await openMirror(path);
    try {
      expect((await migrateMirror(mirror)).applied).toEqual([]);
    } finally {
      await mirror.close();
      await mirror.close(); // idempotent
    }
  });

  it('gives a new file 8 KiB pages and leaves the page size of an existing one alone', async () => {
    const dir = await tempDir();
    const pageSize = async (path: string): Promise<number> => {
      const mirror = await openMirror(path);
      try {
        const rows = await sql<{ page_size: number }>`PRAGMA page_size`.execute(mirror.db);
        return rows.rows[0]!.page_size;
      } finally {
        await mirror.close();
      }
    };
    expect(NEW_MIRROR_PAGE_SIZE).toBe(8192);
    const fresh = join(dir, 'fresh.sqlite');
    expect(await pageSize(fresh)).toBe(8192);
    expect(await pageSize(fresh)).toBe(8192);
    // A mirror made before 8 KiB pages (SQLite's default 4096, already in WAL) keeps its pages,
    // and opening, migrating and writing it works as before.
    const older = join(dir, 'older.sqlite');
    const raw = new Database(older);
    raw.pragma('journal_mode = WAL');
    raw.exec('CREATE TABLE before_us (id INTEGER PRIMARY KEY)');
    raw.close();
    expect(await pageSize(older)).toBe(4096);
    const mirror = await openMirror(older);
    try {
      await sql`INSERT INTO before_us (id) VALUES (1)`.execute(mirror.db);
      expect((await migrateMirror(mirror)).applied).toEqual([]);
      const check = await sql<{ integrity_check: string }>`PRAGMA integrity_check`.execute(mirror.db);
      expect(check.rows[0]!.integrity_check).toBe('ok');
    } finally {
      await mirror.close();
    }
  });

  it('opens read-only without migrating', async () => {
    const dir = await tempDir();
    const path = join(dir, 'mirror.sqlite');
    await (await openMirror(path)).close();
    const mirror = await openMirror(path, { readonly: true });
    try {
      const rows = await mirror.db.selectFrom('domains').selectAll().execute();
      expect(rows).toEqual([]);
    } finally {
      await mirror.close();
    }
  });

  it('rejects a file that is not SQLite with ERR_MIRROR_OPEN naming the path', async () => {
    const dir = await tempDir();
    const path = join(dir, 'not-a-db.sqlite');
    await writeFile(path, 'this is definitely not an sqlite database file, just some text '.repeat(20));
    await expect(openMirror(path)).rejects.toMatchObject({
      code: 'ERR_MIRROR_OPEN',
      message: expect.stringContaining(path),
    });
  });

  it('reports a missing file in read-only mode with ERR_MIRROR_OPEN', async () => {
    const dir = await tempDir();
    await expect(openMirror(join(dir, 'missing.sqlite'), { readonly: true })).rejects.toMatchObject({
      code: 'ERR_MIRROR_OPEN',
    });
  });

  it('reports a broken schema as ERR_MIRROR_MIGRATION', async () => {
    const dir = await tempDir();
    const path = join(dir, 'mirror.sqlite');
    // A table that the first migration creates late makes it fail halfway through.
    const pre = await openMirror(path, { migrate: false });
    await sql`CREATE TABLE change_log (x TEXT)`.execute(pre.db);
    await pre.close();
    await expect(openMirror(path)).rejects.toMatchObject({
      code: 'ERR_MIRROR_MIGRATION',
      message: expect.stringContaining('0001_initial'),
    });
    // All or nothing: the tables created before the failure were rolled back.
    const after = await openMirror(path, { migrate: false });
    try {
      const tables = await sql<{ name: string }>`
        SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`.execute(after.db);
      expect(tables.rows.map((r) => r.name)).toEqual(['change_log']);
    } finally {
      await after.close();
    }
  });
});

describe('openMirror concurrency', () => {
  it('two connections to an up-to-date mirror open at once without waiting on each other', async () => {
    const dir = await tempDir();
    const path = join(dir, 'mirror.sqlite');
    await (await openMirror(path)).close();
    // Another connection holds the write lock, and neither open may wait for it (busy timeout 0):
    // opening an up-to-date mirror takes no write lock, so both opens succeed and can read.
    const holder = new Database(path);
    holder.exec('BEGIN IMMEDIATE');
    try {
      const [a, b] = await Promise.all([
        openMirror(path, { busyTimeoutMs: 0 }),
        openMirror(path, { busyTimeoutMs: 0 }),
      ]);
      try {
        for (const mirror of [a, b]) {
          expect(await migrateMirror(mirror)).toEqual({ applied: [] });
          const count = await sql<{ n: number }>`SELECT count(*) AS n FROM domains`.execute(mirror.db);
          expect(count.rows[0]!.n).toBe(0);
        }
      } finally {
        await a.close();
        await b.close();
      }
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
  });
});
