import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/*
 * The mirror's baseline: its first sync into an empty mirror (src/mirror/store/baseline.ts says
 * what it changes and why). Frozen once merged.
 *
 * `mirror_baseline` holds at most one row: when the baseline load began, by which run, and when
 * a sync finished it. While `finished_at` is NULL the baseline is open, across crashes and
 * restarts, so a first sync killed part-way and its resumption record the same history as one
 * uninterrupted run. A mirror made before this migration has domains, so it never opens one.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are frozen in time
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE TABLE mirror_baseline (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    started_at TEXT NOT NULL,
    pipeline_run_id INTEGER,
    finished_at TEXT
  ) STRICT`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are frozen in time
export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE mirror_baseline`.execute(db);
}
