import { rm } from 'node:fs/promises';
import { redactText } from '../../src/log/redact.js';
import { bulkCommits, withBulkAutocheckpoint } from '../../src/mirror/checkpointer.js';
import { checkExportRow, loadExportRows } from '../../src/mirror/store/export-load.js';
import type { ExportRowInput } from '../../src/mirror/store/export-load.js';
import {
  exportFilesToRemove,
  markExportFileRemoved,
  markExportLoaded,
  setExportDownloadStatus,
} from '../../src/mirror/store/exports.js';
import type { ExportRecord } from '../../src/mirror/store/exports.js';
import { finishBaseline } from '../../src/mirror/store/baseline.js';
import { countDomainsNotInMirror, mirrorHasDomains } from '../../src/mirror/store/domains.js';
import {
  beginUncheckedLoad,
  finishUncheckedLoad,
  undoUncheckedLoad,
} from '../../src/mirror/store/unchecked-load.js';
import { buildIndexesSetAside, errorCode } from '../../src/runtime/run.js';
import { AbortedError } from '../../src/util/domain-sync-error.js';
import { isoFromMs } from '../../src/util/time.js';
import { prepareFirstLoad } from '../first-load.js';
import { ExportError } from './errors.js';
import { fileFormat, readExportRows } from './format.js';
import { readCsvInKeyOrder, scanCsvKeys } from './csv-order.js';
import { readNdjsonInKeyOrder, scanNdjsonKeys } from './ndjson-order.js';
import type { ExportScope } from './types.js';

/*
 * Loading a downloaded export file into the mirror. A bad file (a row that cannot be stored, a
 * line that is not JSON) never leaves anything in the mirror, in one of two ways:
 *
 * - Into a mirror that holds domains, in two passes: pass 1 checks every row and writes nothing;
 *   pass 2 writes.
 * - Into an empty mirror, in one pass (src/mirror/store/unchecked-load.ts): each row is checked by
 *   the write's own conversions (upsertProfiles converts every row before writing any of its
 *   batch), and a bad row removes every row the load wrote; the batch is then checked row by row
 *   to name the bad row's line. Reading a large file twice was
 *   about a seventh of such a load (docs/benchmarks.md "export").
 *
 * The file is read in the order of its keys in both ways (./ndjson-order.ts, ./csv-order.ts): a
 * scan finds each row and its key first, writing nothing, and the passes read the rows in key
 * order (a CSV file the scan cannot order, in its own).
 *
 * The writing pass upserts in batches, each in a savepoint of a transaction that commits every
 * {@link LOAD_ROWS_PER_COMMIT} rows: a crash leaves whole rows only, and the next run loads the
 * same file again (the load is idempotent; a one-pass load killed part-way is removed first).
 *
 * Into a mirror never loaded (empty, or holding only domains `enrich` wrote), the writing pass is
 * a first load, as a first sync's is (pipelines/first-load.ts): the child tables' indexes are
 * built after the rows, and the load is the mirror's baseline, so the catalogue it brings is not
 * logged as a day of additions. The baseline ends when the whole file is loaded; a load stopped
 * part-way leaves it open for the run that resumes it.
 */

/**
 * Rows per commit of the load, chosen when a batch was 2,000 rows (three batches; now 24 of
 * {@link LOAD_BATCH_ROWS}). Measured then on a 100,000-row CSV export: 2,712–2,749 rows/s
 * committing every batch, 3,148–3,153 every five batches, 3,187 every ten. The commit interval
 * costs memory at 1,000,000 NDJSON rows (peak RSS 211 MB committing every batch, 250–252 MB every
 * five, near the 256 MB target), so three: 219–234 MB and 0.74–0.75 of the bare loader where five
 * gave 0.79. Those RSS figures were getrusage maxRSS, an upper bound that can include the
 * benchmark parent's RSS; measured as the process's own peak (VmHWM) with three batches: NDJSON
 * 219 MB, CSV 209 MB, the bare loader 199–220 MB (docs/benchmarks.md "export"). Five or ten
 * batches were not re-measured that way.
 */
export const LOAD_ROWS_PER_COMMIT = 6_000;

/**
 * Rows per batch of the writing pass: each batch is parsed rows held until it is upserted, in a
 * savepoint of its own. 250, not 2,000 as until 2026-11-29: a batch of 2,000 parsed rows (about
 * 20 MB of objects) outlives V8's young generation, so its rows were promoted and marked again by
 * the collector's helper thread before they died. With 250, loads of 200,000 NDJSON rows into an
 * empty mirror took a median 27.9 s against 30.2 s on a file from the simulator's quirks mode and
 * 22.6 s against 23.9 s on a canonical one, with less CPU and a lower peak RSS
 * (docs/benchmarks.md "export" has the runs).
 */
export const LOAD_BATCH_ROWS = 250;

/** Loads the file of `record` in batches of `batchSize` rows, checking every row before it stays. */
export async function loadExportFile(
  scope: ExportScope,
  record: ExportRecord,
  batchSize: number,
): Promise<void> {
  const { ctx, stats } = scope;
  const path = record.file_path!;
  const format = fileFormat(record.format, path);
  setExportDownloadStatus(ctx.mirror, record.id, {
    downloadStatus: 'loading',
    error: null,
    at: scope.now(),
  });
  const refused = (error: unknown): Error => {
    const code = errorCode(error);
    const wrapped =
      code === 'ERR_EXPORT_LAYOUT' || code === 'ERR_EXPORT_FILE_INVALID'
        ? (error as ExportError)
        : new ExportError(
            'ERR_EXPORT_FILE_INVALID',
            `${path}: ${redactText((error as Error).message)}; nothing was loaded`,
            { cause: error },
          );
    setExportDownloadStatus(ctx.mirror, record.id, {
      downloadStatus: 'load_failed',
      error: wrapped.message,
      at: scope.now(),
    });
    return wrapped;
  };
  const noRows = (): ExportError =>
    new ExportError(
      'ERR_EXPORT_FILE_INVALID',
      `${path}: the file has no rows but export ${record.id} has total_rows ${record.total_rows}; nothing was loaded`,
    );
  const unknown = new Set<string>();
  const noteUnknownColumns = (): void => {
    stats.unknownColumns = [...unknown];
    if (unknown.size > 0)
      ctx.logger.info('export file has unmapped columns; kept in profile_extra', {
        columns: stats.unknownColumns,
      });
  };

  // The file is read in the order of its keys (ndjson-order.ts, csv-order.ts): scanned first,
  // nothing written, so a line the scan cannot read is refused as a bad row is in a first pass.
  // A CSV file the scan cannot order is read in its own order.
  let rowsOfFile = (options: { unknownColumns?: Set<string> }) => readExportRows(path, format, options);
  try {
    const scanTask = ctx.progress.task(`scan export ${record.id}`, record.byte_count ?? 0, 'bytes');
    let scanned = 0;
    const scanOptions = {
      signal: ctx.signal,
      onBytes: (bytes: number) => {
        scanTask.increment(bytes - scanned);
        scanned = bytes;
      },
    };
    if (format === 'json') {
      const order = await scanNdjsonKeys(path, scanOptions);
      rowsOfFile = (options) => readNdjsonInKeyOrder(order, options);
    } else {
      const order = await scanCsvKeys(path, scanOptions);
      if (order !== undefined) rowsOfFile = (options) => readCsvInKeyOrder(order, options);
      else
        ctx.logger.info('export file read in its own order: its records could not be ordered by key', {
          exportId: record.id,
        });
    }
    scanTask.done();
  } catch (error) {
    if (error instanceof AbortedError) throw error;
    throw refused(error);
  }

  // An empty mirror can be loaded in one read of the file (src/mirror/store/unchecked-load.ts).
  stats.onePass = !mirrorHasDomains(ctx.mirror);
  let rows = 0;
  /** Rows of domains the mirror does not hold yet (pass 1 only): a large count sets indexes aside. */
  let newDomains = 0;
  if (!stats.onePass) {
    try {
      const validateTask = ctx.progress.task(`validate export ${record.id}`, record.total_rows ?? 0, 'rows');
      let keys: string[] = [];
      for await (const { row, where } of rowsOfFile({ unknownColumns: unknown })) {
        checkExportRow(row, where);
        keys.push(row.profile.domain_normalized);
        rows += 1;
        if ((rows & 1023) === 0) {
          newDomains += countDomainsNotInMirror(ctx.mirror, keys);
          keys = [];
          validateTask.increment(1024);
          scope.progressLog('export validation progress', { exportId: record.id, rows });
          if (ctx.signal.aborted) throw new AbortedError();
        }
      }
      newDomains += countDomainsNotInMirror(ctx.mirror, keys);
      validateTask.done();
      if (rows === 0 && (record.total_rows ?? 0) > 0) throw noRows();
      stats.rowsValidated = rows;
      noteUnknownColumns();
    } catch (error) {
      if (error instanceof AbortedError) throw error;
      throw refused(error);
    }
  }

  const syncedAt = scope.now();
  const loadTask = ctx.progress.task(
    `load export ${record.id}`,
    stats.onePass ? (record.total_rows ?? 0) : rows,
    'rows',
  );
  let batch: ExportRowInput[] = [];
  /** Where each row of `batch` is in the file (one pass only: for the error naming a bad row). */
  let wheres: string[] = [];
  let loaded = 0;
  let started = false;
  const commits = bulkCommits(ctx.mirror, LOAD_ROWS_PER_COMMIT);
  const flush = (): void => {
    if (!started) {
      // A file with no rows loads nothing: it leaves the mirror's first load to the run that
      // brings the catalogue.
      started = true;
      Object.assign(
        stats,
        prepareFirstLoad(
          { id: scope.runId, startedAt: syncedAt, ctx },
          'export load',
          stats.onePass ? {} : { newDomains },
        ),
      );
      if (stats.onePass) beginUncheckedLoad(ctx.mirror, record.id, syncedAt);
    }
    if (stats.onePass) {
      // Each value is checked once, by the conversions of the write (upsertProfiles checks every
      // row it writes before its first write). A row the write never sees, a domain that a later
      // row of the same batch repeats, is checked here.
      checkSupersededRows(batch, wheres);
      try {
        commits.write(batch.length, () =>
          loadExportRows(ctx.mirror, batch, { syncedAt, checkUnchanged: true }),
        );
      } catch (error) {
        // The write names a row by its place in the batch; the file's line is what a person needs.
        batch.forEach((row, i) => checkExportRow(row, wheres[i]!));
        throw error;
      }
    } else commits.write(batch.length, () => loadExportRows(ctx.mirror, batch, { syncedAt }));
    loaded += batch.length;
    loadTask.increment(batch.length);
    batch = [];
    wheres = [];
    scope.progressLog('export load progress', {
      exportId: record.id,
      rows: loaded,
      of: stats.onePass ? record.total_rows : rows,
    });
  };
  const writeBatches = async (): Promise<void> => {
    try {
      const read = rowsOfFile(stats.onePass ? { unknownColumns: unknown } : {});
      for await (const { row, where } of read) {
        batch.push(row);
        if (stats.onePass) wheres.push(where);
        if (batch.length >= batchSize) {
          flush();
          // A stop between batches leaves whole rows only; the load stays `loading` and resumable.
          if (ctx.signal.aborted) throw new AbortedError();
        }
      }
      if (batch.length > 0) flush();
      if (stats.onePass) {
        if (loaded === 0 && (record.total_rows ?? 0) > 0) throw noRows();
        stats.rowsValidated = loaded;
        // The whole file is read and every row of it written: it is checked.
        if (started) commits.write(0, () => finishUncheckedLoad(ctx.mirror));
      }
    } finally {
      // Whole batches only, also when the load stops or the file cannot be read any more.
      commits.commit();
    }
  };
  try {
    // Bulk write: fewer, larger checkpoints, between batches, so the WAL stays short
    // (src/mirror/checkpointer.ts).
    await withBulkAutocheckpoint(ctx.mirror, writeBatches);
  } catch (error) {
    // A stop leaves a one-pass load's rows for the next run to remove (src/runtime/run.ts); a bad
    // row removes them now. Indexes set aside are built after either.
    if (error instanceof AbortedError || !stats.onePass) {
      await buildIndexesSetAside(ctx);
      throw error;
    }
    const undone = undoUncheckedLoad(ctx.mirror);
    if (undone !== undefined)
      ctx.logger.warn('export file refused part-way: the rows its load wrote were removed', {
        exportId: record.id,
        domains: undone.domains,
      });
    await buildIndexesSetAside(ctx);
    throw refused(error);
  }
  // Indexes set aside for a first load are built before anything reads.
  await buildIndexesSetAside(ctx);
  loadTask.done();
  if (stats.onePass) noteUnknownColumns();
  stats.rowsLoaded = loaded;
  // The whole file is in: what it brought is the state the history starts from.
  if (stats.baseline) finishBaseline(ctx.mirror, scope.now());
  markExportLoaded(ctx.mirror, record.id, { loadedAt: scope.now(), rowsLoaded: loaded, filePath: path });
  setExportDownloadStatus(ctx.mirror, record.id, { downloadStatus: 'loaded', error: null, at: scope.now() });
  ctx.logger.info('export loaded', { exportId: record.id, rows: loaded });
}

/**
 * Checks the rows of a batch that a later row of the same batch repeats (the same domain): the
 * write keeps the last one only, so the earlier ones would otherwise go unchecked, where a load
 * in two passes checks every row.
 */
function checkSupersededRows(batch: readonly ExportRowInput[], wheres: readonly string[]): void {
  const last = new Map<unknown, number>();
  batch.forEach((row, i) => {
    const earlier = last.get(row.profile.domain_normalized);
    if (earlier !== undefined) checkExportRow(batch[earlier]!, wheres[earlier]!);
    last.set(row.profile.domain_normalized, i);
  });
}

/** Deletes files of loaded exports whose `expires_at` is older than `exports.retention`. */
export async function applyRetention(scope: ExportScope): Promise<void> {
  const { ctx, stats } = scope;
  try {
    const expiredBefore = isoFromMs(ctx.clock() - ctx.config.exports.retentionMs);
    for (const file of exportFilesToRemove(ctx.mirror, { expiredBefore })) {
      await rm(file.file_path, { force: true });
      markExportFileRemoved(ctx.mirror, file.id, { at: scope.now() });
      stats.filesRemoved += 1;
      ctx.logger.info('old export file removed (exports.retention)', {
        exportId: file.id,
        file: file.file_path,
      });
    }
  } catch (error) {
    // Housekeeping must not turn a good run into a failed one.
    ctx.logger.warn('export file retention failed', { error: redactText((error as Error).message) });
  }
}
