import { DomainSyncError } from '../../util/domain-sync-error.js';
import { cachedStatement, inTransaction } from '../database.js';
import type { Mirror } from '../database.js';
import type { ExportInput } from '../inputs.js';
import type { ExportsTable } from '../schema.js';
import {
  integerColumn,
  jsonColumn,
  keyColumn,
  MirrorInputError,
  requiredInteger,
  requiredTimestamp,
  textColumn,
  timestampColumn,
} from './values.js';

/** An `exports` row. */
export type ExportRecord = ExportsTable;

/** Our own facts about an export, stored next to the service's fields. */
export interface ExportBookkeeping {
  /** When we sent POST /exports. Kept from the first call. */
  requestedAt?: string | null;
  /** Hash of the export parameters (filters, format, fields) to find an unfinished one again. */
  paramsHash?: string | null;
  /** The filters sent (stored as JSON). */
  filters?: Record<string, unknown> | null;
  /** The `fields[]` sent (stored as JSON). */
  fields?: readonly string[] | null;
  /** e.g. `pending`, `downloading`, `downloaded`, `failed`. */
  downloadStatus?: string | null;
  error?: string | null;
  pipelineRunId?: number | null;
}

/**
 * Inserts or updates an export from its wire shape (docs/service-api.md "Export"; for the 202 answer
 * pass `{id: export_id, status: 'pending'}`) plus our bookkeeping. Values left undefined/null keep
 * the stored ones. `status` is stored as given.
 */
export function upsertExport(
  mirror: Mirror,
  exp: ExportInput,
  bookkeeping: ExportBookkeeping & { at: string },
): void {
  const id = requiredInteger(exp.id, 'export.id');
  const where = `export ${String(id)}`;
  const values = {
    id,
    status: keyColumn(exp.status, `${where}.status`),
    format: textColumn(exp.format, `${where}.format`),
    filters:
      bookkeeping.filters === undefined || bookkeeping.filters === null
        ? null
        : jsonColumn(bookkeeping.filters),
    fields:
      bookkeeping.fields === undefined || bookkeeping.fields === null ? null : jsonColumn(bookkeeping.fields),
    total_rows: integerColumn(exp.total_rows, `${where}.total_rows`),
    credits_used: integerColumn(exp.credits_used, `${where}.credits_used`),
    expires_at: timestampColumn(exp.expires_at, `${where}.expires_at`),
    download_url: textColumn(exp.download_url, `${where}.download_url`),
    requested_at: timestampColumn(bookkeeping.requestedAt, 'requestedAt'),
    params_hash: textColumn(bookkeeping.paramsHash, 'paramsHash'),
    download_status: textColumn(bookkeeping.downloadStatus, 'downloadStatus'),
    error: textColumn(bookkeeping.error, 'error'),
    pipeline_run_id: bookkeeping.pipelineRunId ?? null,
    at: requiredTimestamp(bookkeeping.at, 'at'),
  };
  // Same upsert shape as store/enrichment.ts (coalesce keeps what a thinner answer omits), but other
  // table, columns and keep-rules: each table's SQL stays explicit and greppable.
  cachedStatement(
    mirror,
    `INSERT INTO exports (id, status, format, filters, fields, total_rows, credits_used, expires_at, download_url,
       requested_at, params_hash, download_status, error, pipeline_run_id, mirror_updated_at)
     VALUES (@id, @status, @format, @filters, @fields, @total_rows, @credits_used, @expires_at, @download_url,
       @requested_at, @params_hash, @download_status, @error, @pipeline_run_id, @at)
     -- The same keep-what-the-answer-omits upsert as upsertEnrichmentRun (store/enrichment.ts):
     -- a later, partial answer never erases a known value. Different table, different columns.
     ON CONFLICT (id) DO UPDATE SET
       status = excluded.status,
       format = coalesce(excluded.format, format),
       filters = coalesce(excluded.filters, filters),
       fields = coalesce(excluded.fields, fields),
       total_rows = coalesce(excluded.total_rows, total_rows),
       credits_used = coalesce(excluded.credits_used, credits_used),
       expires_at = coalesce(excluded.expires_at, expires_at),
       download_url = coalesce(excluded.download_url, download_url),
       requested_at = coalesce(requested_at, excluded.requested_at),
       params_hash = coalesce(excluded.params_hash, params_hash),
       download_status = coalesce(excluded.download_status, download_status),
       error = coalesce(excluded.error, error),
       pipeline_run_id = coalesce(pipeline_run_id, excluded.pipeline_run_id),
       mirror_updated_at = excluded.mirror_updated_at
     WHERE status IS NOT excluded.status
        OR (excluded.format IS NOT NULL AND format IS NOT excluded.format)
        OR (excluded.filters IS NOT NULL AND filters IS NOT excluded.filters)
        OR (excluded.fields IS NOT NULL AND fields IS NOT excluded.fields)
        OR (excluded.total_rows IS NOT NULL AND total_rows IS NOT excluded.total_rows)
        OR (excluded.credits_used IS NOT NULL AND credits_used IS NOT excluded.credits_used)
        OR (excluded.expires_at IS NOT NULL AND expires_at IS NOT excluded.expires_at)
        OR (excluded.download_url IS NOT NULL AND download_url IS NOT excluded.download_url)
        OR (excluded.params_hash IS NOT NULL AND params_hash IS NOT excluded.params_hash)
        OR (excluded.download_status IS NOT NULL AND download_status IS NOT excluded.download_status)
        OR (excluded.error IS NOT NULL AND error IS NOT excluded.error)`,
  ).run(values);
}

/** One export by the service's id, or `undefined`. */
export function getExport(mirror: Mirror, id: number | bigint): ExportRecord | undefined {
  return cachedStatement(mirror, 'SELECT * FROM exports WHERE id = ?').get(id) as ExportRecord | undefined;
}

/**
 * The newest export with these parameters that was not loaded yet and did not fail, so
 * `export` resumes it instead of paying again; `undefined` when there is none. Whether it has
 * expired is for the caller to judge from `expires_at`.
 */
export function findUnfinishedExport(mirror: Mirror, paramsHash: string): ExportRecord | undefined {
  return cachedStatement(
    mirror,
    `SELECT * FROM exports WHERE params_hash = ? AND loaded_at IS NULL
       AND status NOT IN ('failed', 'expired') AND coalesce(download_status, '') NOT IN ('failed', 'expired')
     ORDER BY coalesce(requested_at, mirror_updated_at) DESC, id DESC LIMIT 1`,
  ).get(paramsHash) as ExportRecord | undefined;
}

/** Records a completed download. Throws `ERR_MIRROR_NOT_FOUND` for an unknown id. */
export function markExportDownloaded(
  mirror: Mirror,
  id: number | bigint,
  options: {
    filePath: string;
    downloadedAt: string;
    checksum?: string | null;
    byteCount?: number | bigint | null;
  },
): void {
  const downloadedAt = requiredTimestamp(options.downloadedAt, 'downloadedAt');
  const { changes } = cachedStatement(
    mirror,
    `UPDATE exports SET file_path = ?, downloaded_at = ?, checksum = ?, byte_count = ?, download_status = 'downloaded',
       error = NULL, mirror_updated_at = ? WHERE id = ?`,
  ).run(
    keyColumn(options.filePath, 'filePath'),
    downloadedAt,
    textColumn(options.checksum, 'checksum'),
    integerColumn(options.byteCount, 'byteCount'),
    downloadedAt,
    id,
  );
  if (changes === 0) throw notFound(id);
}

// The same update-by-id-and-check shape as markExportDownloaded above, for other columns:
// one small function per state change of an export row, by design.
/** Records that an export's file was loaded into the mirror. Throws `ERR_MIRROR_NOT_FOUND` for an unknown id. */
export function markExportLoaded(
  mirror: Mirror,
  id: number | bigint,
  options: { loadedAt: string; rowsLoaded?: number | bigint | null; filePath?: string | null },
): void {
  const loadedAt = requiredTimestamp(options.loadedAt, 'loadedAt');
  const { changes } = cachedStatement(
    mirror,
    `UPDATE exports SET loaded_at = ?, rows_loaded = ?, file_path = coalesce(?, file_path), mirror_updated_at = ?
     WHERE id = ?`,
  ).run(
    loadedAt,
    integerColumn(options.rowsLoaded, 'rowsLoaded'),
    textColumn(options.filePath, 'filePath'),
    loadedAt,
    id,
  );
  if (changes === 0) throw notFound(id);
}

/** Records a definite failure (download refused, file expired, …). Throws `ERR_MIRROR_NOT_FOUND` for an unknown id. */
export function markExportFailed(
  mirror: Mirror,
  id: number | bigint,
  options: { at: string; error: string; downloadStatus?: string },
): void {
  const at = requiredTimestamp(options.at, 'at');
  inTransaction(mirror, () => {
    const { changes } = cachedStatement(
      mirror,
      'UPDATE exports SET download_status = ?, error = ?, mirror_updated_at = ? WHERE id = ?',
    ).run(options.downloadStatus ?? 'failed', options.error, at, id);
    if (changes === 0) throw notFound(id);
  });
}

/** The per-row export price learned from past exports, see {@link learnedExportCreditsPerRow}. */
export interface LearnedExportPrice {
  /** `sum(credits_used) / sum(total_rows)` over completed exports with rows. */
  creditsPerRow: number;
  /** How many exports it was learned from. */
  exports: number;
}

/**
 * The price of one exported row learned from the exports recorded so far (docs/service-api.md
 * "POST /exports": the cost formula is not described, only that it varies with the result count), or
 * `undefined` when no completed export with rows and a known cost is recorded.
 */
export function learnedExportCreditsPerRow(mirror: Mirror): LearnedExportPrice | undefined {
  const row = cachedStatement(
    mirror,
    `SELECT count(*) AS n, coalesce(sum(credits_used), 0) AS credits, coalesce(sum(total_rows), 0) AS rows
       FROM exports WHERE status = 'completed' AND total_rows > 0 AND credits_used IS NOT NULL`,
  ).get() as { n: number; credits: number; rows: number };
  if (row.n === 0 || row.rows === 0) return undefined;
  return { creditsPerRow: row.credits / row.rows, exports: row.n };
}

/**
 * Sets an export's `download_status` (ours: `pending`, `downloading`, `downloaded`, `loading`,
 * `load_failed`, `expired`, `failed`, `file_removed`) and `error` (null clears it). Throws
 * `ERR_MIRROR_INPUT` for an unknown id.
 */
export function setExportDownloadStatus(
  mirror: Mirror,
  id: number,
  options: { downloadStatus: string; error?: string | null; at: string },
): void {
  const at = requiredTimestamp(options.at, 'at');
  const { changes } = cachedStatement(
    mirror,
    'UPDATE exports SET download_status = ?, error = ?, mirror_updated_at = ? WHERE id = ?',
  ).run(keyColumn(options.downloadStatus, 'downloadStatus'), options.error ?? null, at, id);
  if (changes === 0) throw new MirrorInputError('id', `export ${id} is not in the mirror`);
}

/** An export whose file may be deleted, see {@link exportFilesToRemove}. */
export interface ExportFileToRemove {
  id: number;
  file_path: string;
  expires_at: string;
}

/**
 * Exports whose file is on record, was loaded into the mirror, and whose `expires_at` is before
 * `expiredBefore` (now minus the retention): their files can go. Files never loaded (`--no-load`,
 * a failed load) are never listed.
 */
export function exportFilesToRemove(
  mirror: Mirror,
  options: { expiredBefore: string },
): ExportFileToRemove[] {
  return cachedStatement(
    mirror,
    `SELECT id, file_path, expires_at FROM exports
      WHERE file_path IS NOT NULL AND loaded_at IS NOT NULL AND expires_at IS NOT NULL AND expires_at < ?
        AND coalesce(download_status, '') <> 'file_removed'
      ORDER BY id`,
  ).all(requiredTimestamp(options.expiredBefore, 'expiredBefore')) as ExportFileToRemove[];
}

/** Records that an export's file was deleted by the retention (the row and its history stay). */
export function markExportFileRemoved(mirror: Mirror, id: number, options: { at: string }): void {
  setExportDownloadStatus(mirror, id, { downloadStatus: 'file_removed', error: null, at: options.at });
}

/**
 * The most recently requested export with these parameters, finished or not, or `undefined`.
 * The pipeline uses it to see that the last attempt expired before its file was fetched.
 */
export function latestExportWithParams(mirror: Mirror, paramsHash: string): ExportRecord | undefined {
  return cachedStatement(
    mirror,
    `SELECT * FROM exports WHERE params_hash = ?
      ORDER BY coalesce(requested_at, mirror_updated_at) DESC, id DESC LIMIT 1`,
  ).get(paramsHash) as ExportRecord | undefined;
}

function notFound(id: number | bigint): DomainSyncError {
  return new DomainSyncError('ERR_MIRROR_NOT_FOUND', `export ${String(id)} is not in the mirror`);
}
