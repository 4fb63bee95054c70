import { cachedStatement } from '../database.js';
import type { Mirror } from '../database.js';

/** An export that `export` has not finished, as {@link exportsInProgress} lists it. */
export interface ExportInProgress {
  id: number;
  /** The service's status (`pending`, `completed`, any other value as given). */
  status: string;
  /** Our download state (`downloading`, `downloaded`, …), or null before the download. */
  download_status: string | null;
  format: string | null;
  requested_at: string | null;
  /** After this time the file can no longer be downloaded. */
  expires_at: string | null;
}

/**
 * Exports requested but not loaded into the mirror yet, and neither failed nor expired, oldest
 * request first: the ones the next `export` resumes (same rule as `findUnfinishedExport`). An
 * export downloaded with `--no-load` stays in this list, as it does for `export`.
 */
export function exportsInProgress(mirror: Mirror): ExportInProgress[] {
  return cachedStatement(
    mirror,
    `SELECT id, status, download_status, format, requested_at, expires_at FROM exports
     WHERE loaded_at IS NULL AND status NOT IN ('failed', 'expired')
       AND coalesce(download_status, '') NOT IN ('failed', 'expired')
     ORDER BY coalesce(requested_at, mirror_updated_at), id`,
  ).all() as ExportInProgress[];
}

/**
 * The snapshots dir recorded by the latest `snapshot` run that wrote something (its
 * `stats.dir`), or null. `status` uses it to point at snapshots written with `--out`.
 */
export function lastSnapshotRunDir(mirror: Mirror): string | null {
  const row = cachedStatement(
    mirror,
    `SELECT json_extract(stats, '$.dir') AS dir FROM pipeline_runs
     WHERE pipeline = 'snapshot' AND json_extract(stats, '$.dir') IS NOT NULL
     ORDER BY id DESC LIMIT 1`,
  ).get() as { dir: string } | undefined;
  return row?.dir ?? null;
}
