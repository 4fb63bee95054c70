import type { TableSpec } from './mirror-checks.js';
import { fileBase } from './mirror-checks.js';

/*
 * What "equals the fault-free result" compares, table by table. Left out are the bookkeeping
 * columns that differ between any two runs, crash or not:
 * - our own clock: when a row was first/last synced, listed or touched (`first_synced_at`,
 *   `last_synced_at`, `profile_synced_at`, `last_listed_at`, `mirror_first_seen_at`,
 *   `mirror_updated_at`, `change_log.at`, `sync_state.updated_at`, export `requested_at`,
 *   `downloaded_at`, `loaded_at`);
 * - run ids and row ids (`pipeline_run_id`, `change_log.id`), and the mirror's change sequence
 *   (`change_seq`: a killed run's committed transactions took values too);
 * - the service's `meta.freshness_age_seconds` (seconds since the last enrichment at the moment
 *   of the read), in its column;
 * - the export's `expires_at` (completion time + TTL on each simulator's clock) and the temp dir
 *   part of `file_path` (compared by base name).
 * Tables that are bookkeeping only (`pipeline_runs`, `account_snapshots`, `locks`) are checked
 * separately: no run left `running`, no lock left.
 */

const MIRROR_TIMES = ['mirror_first_seen_at', 'mirror_updated_at', 'change_seq'];

/** The catalogue as the mirror holds it: what sync and export write. */
export const CATALOGUE_TABLES: readonly TableSpec[] = [
  {
    table: 'domains',
    exclude: [
      'first_synced_at',
      'last_synced_at',
      'profile_synced_at',
      'last_listed_at',
      'freshness_age_seconds',
      'change_seq',
    ],
  },
  { table: 'licenses', exclude: MIRROR_TIMES },
  { table: 'payment_methods', exclude: MIRROR_TIMES },
  { table: 'domain_sections', exclude: MIRROR_TIMES },
  { table: 'change_log', exclude: ['id', 'at', 'change_seq'] },
];

/** Watermarks and cursors (a crash must not move them past what was committed). */
export const SYNC_STATE_TABLE: TableSpec = {
  table: 'sync_state',
  exclude: ['pipeline_run_id', 'updated_at'],
};

/** Exports and their credits. */
export const EXPORT_TABLES: readonly TableSpec[] = [
  {
    table: 'exports',
    exclude: [
      'expires_at',
      'requested_at',
      'downloaded_at',
      'loaded_at',
      'pipeline_run_id',
      'mirror_updated_at',
      'change_seq',
    ],
    map: (row) => ({ ...row, file_path: fileBase(row.file_path) }),
  },
  { table: 'credit_ledger', exclude: ['id', 'at', 'pipeline_run_id', 'change_seq'] },
];
