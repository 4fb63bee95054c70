import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/*
 * `mirror_unchecked_load`: an export's load into an empty mirror that reads its file once,
 * checking each row as it writes it, and has not yet read it to the end
 * (src/mirror/store/unchecked-load.ts says why and what undoes it). Frozen once merged.
 *
 * At most one row: which export, and the change sequence value from which every row in the
 * mirror's catalogue tables was written by that load. It is written before the load's first row
 * and deleted in the transaction of its last, so a load killed part-way leaves it behind, and the
 * next run removes what that load wrote before doing anything else.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are frozen in time
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE TABLE mirror_unchecked_load (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    export_id INTEGER NOT NULL,
    from_change_seq INTEGER NOT NULL,
    started_at TEXT NOT NULL
  ) STRICT`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are frozen in time
export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE mirror_unchecked_load`.execute(db);
}
