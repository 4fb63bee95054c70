import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/*
 * An index on `change_seq` for each large published table, so that an incremental `publish` and
 * `status`'s rows-behind count read the rows changed since a watermark, not every row. Frozen
 * once merged.
 *
 * Migration 0005 left change_seq without an index ("a publish scans each table once"). At
 * 1,000,000 domains that scan is the whole mirror: an incremental publish with nothing to send
 * took 6.1 s with the mirror in the page cache and 17.9 s without, and `status` with a postgres
 * destination 2.1 s warm (measured 2026-11-28, CLI, one run each).
 *
 * What the index costs a writer: change_seq is the counter of the writing transaction, which only
 * grows, so a row written gets the largest key of its index (an insert at the index's right-hand
 * edge, whose pages stay in the cache); a row rewritten also loses its old entry. A first load
 * sets aside the secondary indexes of licences, payment methods and change_log
 * (store/deferred-indexes.ts), these among them, and builds them at its end. The small
 * bookkeeping tables (runs, exports, the ledger) are scanned as before.
 */

/** The tables indexed here (each index is `<table>_change_seq`). */
const TABLES = ['domains', 'licenses', 'payment_methods', 'domain_sections', 'change_log'] as const;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are frozen in time
export async function up(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) {
    await sql.raw(`CREATE INDEX ${table}_change_seq ON ${table} (change_seq)`).execute(db);
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are frozen in time
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) await sql.raw(`DROP INDEX IF EXISTS ${table}_change_seq`).execute(db);
}
