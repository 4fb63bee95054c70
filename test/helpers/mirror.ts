/**
 * The tests' one way to read a mirror file: a fresh read-only better-sqlite3 connection of its
 * own, independent of the code under test (and of any connection the test holds), closed after
 * the read. Nothing here imports product code.
 */
import Database from 'better-sqlite3';

/** Runs `read` on a fresh read-only connection to the mirror at `dbPath`, then closes it. */
export function readMirror<T>(dbPath: string, read: (db: Database.Database) => T): T {
  const db = new Database(dbPath, { readonly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/**
 * Rows of one read-only query on the mirror (numbers as JavaScript numbers).
 */
export function queryMirror<T = Record<string, unknown>>(
  dbPath: string,
  sql: string,
  ...params: unknown[]
): T[] {
  return readMirror(dbPath, (db) => db.prepare(sql).all(...params) as T[]);
}

/** {@link queryMirror} with every integer as a bigint: exact above 2^53, as DuckDB returns them. */
export function queryMirrorExact<T = Record<string, unknown>>(
  dbPath: string,
  sql: string,
  ...params: unknown[]
): T[] {
  return readMirror(
    dbPath,
    (db) =>
      db
        .prepare(sql)
        .safeIntegers(true)
        .all(...params) as T[],
  );
}

/** `PRAGMA integrity_check` of the mirror file, joined (`ok` when sound). */
export function integrityCheck(dbPath: string): string {
  return readMirror(dbPath, (db) =>
    (db.pragma('integrity_check') as Array<{ integrity_check: string }>)
      .map((r) => r.integrity_check)
      .join('; '),
  );
}

/** One index of a mirror: its name, table and definition (null for SQLite's automatic ones). */
export interface MirrorIndex {
  name: string;
  tbl_name: string;
  sql: string | null;
}

/** Every index of the mirror at `dbPath`, by name. */
export function mirrorIndexes(dbPath: string): MirrorIndex[] {
  return queryMirror<MirrorIndex>(
    dbPath,
    "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' ORDER BY name",
  );
}
