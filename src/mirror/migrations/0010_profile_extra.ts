import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/*
 * `domains.profile_extra`: what a stored profile had beyond what the mirror keeps in columns and
 * rows (fields the service added that the mirror has no column for), as JSON. Frozen once merged.
 *
 * Until this migration each domain row carried the whole profile in `raw_profile` (about 2.9 KB),
 * so every licence, payment method and section was stored twice: in its own row and inside that
 * JSON. At 200,000 domains loaded from an export that was 562 of the mirror's 1,174 MiB, and a
 * larger share of what a first load writes (docs/benchmarks.md "export"). Profiles written from now
 * on set `raw_profile` to NULL and keep only the rest in `profile_extra`
 * (src/mirror/store/profile-fields.ts, `profileExtra`). Rows not rewritten since keep their whole
 * profile in `raw_profile` until their profile changes: rewriting every row here would make the
 * upgrade of a large mirror rewrite most of its file.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are frozen in time
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE domains ADD COLUMN profile_extra TEXT`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are frozen in time
export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE domains DROP COLUMN profile_extra`.execute(db);
}
