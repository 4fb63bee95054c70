import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/*
 * The cross-process lock of the mirror (docs/operations.md "The mirror lock"). Frozen once
 * merged. One row per lock name (`mirror` is the only one today); a row is a lease: the holder
 * renews `heartbeat_at` / `expires_at` on a timer, and anyone may take the row over once
 * `expires_at` has passed (its holder crashed or was killed). `token` is random per acquisition,
 * so a holder that lost its lease can tell it is no longer the owner.
 */

/** Creates the `locks` table. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are frozen in time
export async function up(db: Kysely<any>): Promise<void> {
  await sql
    .raw(
      `CREATE TABLE locks (
        name TEXT PRIMARY KEY NOT NULL,
        token TEXT NOT NULL,
        pipeline TEXT NOT NULL,
        pid INTEGER NOT NULL,
        hostname TEXT NOT NULL,
        acquired_at TEXT NOT NULL,
        heartbeat_at TEXT NOT NULL,
        expires_at TEXT NOT NULL
      ) STRICT`,
    )
    .execute(db);
}

/** Drops the `locks` table. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are frozen in time
export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw('DROP TABLE IF EXISTS locks').execute(db);
}
