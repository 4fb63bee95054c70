import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/*
 * A change sequence, so that `publish` can move only the rows changed since its last run
 * (docs/destinations.md "How a publish works"). Frozen once merged.
 *
 * - `mirror_change_seq` holds one row: `value`, a counter that every writing transaction of a
 *   published table bumps before it writes, and `mirror_id`, a random id of this mirror file (a
 *   destination tells two mirrors apart by it).
 * - Every published table gets `change_seq`: the counter value of the transaction that last
 *   changed the row. SQLite has one writer at a time, so a transaction that commits later always
 *   writes a higher value: a reader that saw the counter at N in its snapshot has seen every row
 *   with change_seq <= N, and every later change gets more than N.
 * - The tables on the sync's hot path (domains, licences, payment methods, sections, change_log)
 *   are set by their writers in src/mirror/store (one counter bump per transaction, one more
 *   bound value per row); a trigger there would make every upsert a trigger program again, which
 *   migration 0003 removed for its CPU cost. The bookkeeping tables, written a few times per run,
 *   get triggers, so that every writer of them is covered without knowing about it.
 * - No index on change_seq: an index would be updated by every rewrite of a row on the hot path,
 *   while a publish scans each table once.
 * - Rows that exist before this migration keep change_seq 0; a destination's first publish of a
 *   table sends all of its rows anyway.
 */

/** The tables `publish` can send; each gets a change_seq column. */
const PUBLISHED_TABLES = [
  'domains',
  'licenses',
  'payment_methods',
  'domain_sections',
  'change_log',
  'enrichment_runs',
  'exports',
  'pipeline_runs',
  'credit_ledger',
] as const;

/** The published tables whose change_seq the triggers below keep, not the writers. */
const TRIGGERED_TABLES = ['enrichment_runs', 'exports', 'pipeline_runs', 'credit_ledger'] as const;

function bumpProgram(table: string): string {
  return `BEGIN
    UPDATE mirror_change_seq SET value = value + 1 WHERE id = 1;
    UPDATE ${table} SET change_seq = (SELECT value FROM mirror_change_seq WHERE id = 1) WHERE rowid = NEW.rowid;
  END`;
}

/** Creates the counter, the change_seq columns and the bookkeeping tables' triggers. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are frozen in time
export async function up(db: Kysely<any>): Promise<void> {
  await sql
    .raw(
      `CREATE TABLE mirror_change_seq (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        value INTEGER NOT NULL,
        mirror_id TEXT NOT NULL
      ) STRICT`,
    )
    .execute(db);
  await sql
    .raw(`INSERT INTO mirror_change_seq (id, value, mirror_id) VALUES (1, 0, lower(hex(randomblob(16))))`)
    .execute(db);
  for (const table of PUBLISHED_TABLES) {
    await sql.raw(`ALTER TABLE ${table} ADD COLUMN change_seq INTEGER NOT NULL DEFAULT 0`).execute(db);
  }
  for (const table of TRIGGERED_TABLES) {
    // The insert trigger's own UPDATE changes change_seq, so the WHEN of the update trigger keeps
    // it from firing again (recursive triggers are off in SQLite by default as well).
    await sql
      .raw(`CREATE TRIGGER ${table}_change_seq_insert AFTER INSERT ON ${table} ${bumpProgram(table)}`)
      .execute(db);
    await sql
      .raw(
        `CREATE TRIGGER ${table}_change_seq_update AFTER UPDATE ON ${table}
         WHEN NEW.change_seq IS OLD.change_seq ${bumpProgram(table)}`,
      )
      .execute(db);
  }
}

/** Drops what {@link up} created. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are frozen in time
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of TRIGGERED_TABLES) {
    await sql.raw(`DROP TRIGGER IF EXISTS ${table}_change_seq_insert`).execute(db);
    await sql.raw(`DROP TRIGGER IF EXISTS ${table}_change_seq_update`).execute(db);
  }
  for (const table of PUBLISHED_TABLES) {
    await sql.raw(`ALTER TABLE ${table} DROP COLUMN change_seq`).execute(db);
  }
  await sql.raw('DROP TABLE IF EXISTS mirror_change_seq').execute(db);
}
