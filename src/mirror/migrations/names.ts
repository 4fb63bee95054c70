/**
 * The names of the mirror's migrations, in order: what `openMirror` compares with the
 * `kysely_migration` table to know whether any is pending. Kept apart from the migrations
 * themselves (./index.ts) so that this check loads none of them, nor kysely, which every
 * migration imports: kysely is about 250 modules and took 106–151 ms to import (Node 24,
 * 2026-11-29), paid by every command that opens a mirror, while a mirror that is up to date
 * needs no migration code. A unit test keeps this list equal to the keys of
 * `MIRROR_MIGRATIONS`.
 */
export const MIRROR_MIGRATION_NAMES: readonly string[] = Object.freeze([
  '0001_initial',
  '0002_add_locks',
  '0003_change_log_by_store',
  '0004_dashboard_read_indexes',
  '0005_add_change_seq',
  '0006_deferred_indexes',
  '0007_baseline',
  '0008_domain_read_indexes',
  '0009_change_seq_indexes',
  '0010_profile_extra',
  '0011_unchecked_load',
]);
