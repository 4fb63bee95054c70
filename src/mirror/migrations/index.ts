import type { Migration, MigrationProvider } from 'kysely/migration';
import * as m0001 from './0001_initial.js';
import * as m0002 from './0002_add_locks.js';
import * as m0003 from './0003_change_log_by_store.js';
import * as m0004 from './0004_dashboard_read_indexes.js';
import * as m0005 from './0005_add_change_seq.js';
import * as m0006 from './0006_deferred_indexes.js';
import * as m0007 from './0007_baseline.js';
import * as m0008 from './0008_domain_read_indexes.js';
import * as m0009 from './0009_change_seq_indexes.js';
import * as m0010 from './0010_profile_extra.js';
import * as m0011 from './0011_unchecked_load.js';

/**
 * Every migration of the mirror, by name, in order. Listed in code (not read from a folder at
 * run time) so the built package and the tests see exactly the same set.
 */
export const MIRROR_MIGRATIONS: Readonly<Record<string, Migration>> = Object.freeze({
  '0001_initial': m0001,
  '0002_add_locks': m0002,
  '0003_change_log_by_store': m0003,
  '0004_dashboard_read_indexes': m0004,
  '0005_add_change_seq': m0005,
  '0006_deferred_indexes': m0006,
  '0007_baseline': m0007,
  '0008_domain_read_indexes': m0008,
  '0009_change_seq_indexes': m0009,
  '0010_profile_extra': m0010,
  '0011_unchecked_load': m0011,
});

/** A kysely `MigrationProvider` over {@link MIRROR_MIGRATIONS}. */
export const mirrorMigrationProvider: MigrationProvider = {
  getMigrations: () => Promise.resolve({ ...MIRROR_MIGRATIONS }),
};
