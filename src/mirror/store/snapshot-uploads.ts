import { cachedStatement } from '../database.js';
import type { Mirror } from '../database.js';

/** Where a destination stands, from the `stats.uploads` of the `snapshot` runs. */
export interface SnapshotUploadStatus {
  /** The destination's name (`destinations.NAME`). */
  destination: string;
  /** Newest snapshot date whose files and manifest a run put in place, or null. */
  latestDate: string | null;
  /** When the run that completed {@link latestDate} finished. */
  latestDateUploadedAt: string | null;
  /** The last run that tried this destination: its id, its outcome for it, when it finished. */
  lastRunId: number;
  lastStatus: string;
  lastAt: string | null;
  /** `CODE: message` of the last run's failure for this destination, or null. */
  lastError: string | null;
}

interface Row {
  run_id: number;
  finished_at: string | null;
  destination: string;
  latest_date: string | null;
  status: string | null;
  error_code: string | null;
  error_message: string | null;
}

/**
 * Per destination that a `snapshot` run uploaded to (recorded in its `stats.uploads`), the newest
 * date uploaded and the last attempt's outcome, by destination name. Reads `pipeline_runs` only:
 * no network. A run killed before it finished recorded nothing, so it does not count.
 */
export function snapshotUploadsByDestination(mirror: Mirror): SnapshotUploadStatus[] {
  const rows = cachedStatement(
    mirror,
    `SELECT r.id AS run_id, r.finished_at, u.key AS destination,
            json_extract(u.value, '$.latestDate') AS latest_date,
            json_extract(u.value, '$.status') AS status,
            json_extract(u.value, '$.error.code') AS error_code,
            json_extract(u.value, '$.error.message') AS error_message
     FROM pipeline_runs r, json_each(r.stats, '$.uploads') u
     WHERE r.pipeline = 'snapshot' AND r.stats IS NOT NULL AND json_valid(r.stats)
       AND json_type(r.stats, '$.uploads') = 'object'
     ORDER BY r.id`,
  ).all() as Row[];
  const byName = new Map<string, SnapshotUploadStatus>();
  for (const row of rows) {
    const entry = byName.get(row.destination) ?? {
      destination: row.destination,
      latestDate: null,
      latestDateUploadedAt: null,
      lastRunId: row.run_id,
      lastStatus: '',
      lastAt: null,
      lastError: null,
    };
    if (row.latest_date !== null && (entry.latestDate === null || row.latest_date >= entry.latestDate)) {
      entry.latestDate = row.latest_date;
      entry.latestDateUploadedAt = row.finished_at;
    }
    entry.lastRunId = row.run_id;
    entry.lastStatus = row.status ?? 'unknown';
    entry.lastAt = row.finished_at;
    entry.lastError = row.error_code === null ? null : `${row.error_code}: ${row.error_message ?? ''}`;
    byName.set(row.destination, entry);
  }
  return [...byName.values()].sort((a, b) => a.destination.localeCompare(b.destination));
}
