import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/*
 * Indexes set aside while a first sync fills an empty mirror, and built once it has (src/mirror/
 * store/deferred-indexes.ts says why). Frozen once merged.
 *
 * `deferred_indexes` holds the definition of each index dropped for such a load, written in the
 * same transaction as the drop, so a process killed during the load leaves the definitions
 * behind: the next command that takes the mirror lock builds them. Empty at every other time.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are frozen in time
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE TABLE deferred_indexes (
    name TEXT PRIMARY KEY,
    table_name TEXT NOT NULL,
    sql TEXT NOT NULL,
    deferred_at TEXT NOT NULL
  )`.execute(db);
}

/** Builds any index still set aside, then drops the table. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are frozen in time
export async function down(db: Kysely<any>): Promise<void> {
  const rows = await sql<{ sql: string }>`SELECT sql FROM deferred_indexes`.execute(db);
  for (const row of rows.rows)
    await sql.raw(row.sql.replace(/^CREATE INDEX /, 'CREATE INDEX IF NOT EXISTS ')).execute(db);
  await sql`DROP TABLE deferred_indexes`.execute(db);
}
