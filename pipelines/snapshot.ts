import { describeTable, iterateTableRowArrays, tableRowCount } from '../src/mirror/store/snapshot.js';
import type { SnapshotTable } from '../src/mirror/store/snapshot.js';
import { throttledProgressLog, type ProgressTask } from '../src/runtime/progress.js';
import { runPipeline } from '../src/runtime/run.js';
import type { MirrorRunContext } from '../src/runtime/run.js';
import type { RunResult } from '../src/runtime/run-result.js';
import { readSnapshotManifest, utcDate, writeSnapshot } from '../src/warehouse/index.js';
import type { SnapshotUploadResult } from '../src/destinations/s3/index.js';
import { resolveSnapshotDestinations, uploadToDestinations } from './snapshot-upload.js';
import { resolveSnapshotTables } from './tables.js';

/** Options of {@link snapshotPipeline}; the CLI maps `snapshot`'s flags onto these. */
export interface SnapshotOptions {
  /** Snapshots dir (`--out`), already resolved. @default config.snapshots.dir */
  outDir?: string;
  /** Tables to write (`--tables`), in any order; validated by {@link resolveSnapshotTables}. @default every mirror table */
  tables?: readonly string[];
  /** Rows read from SQLite per query; memory stays at about one batch plus one row group. @default 10000 */
  batchSize?: number;
  /**
   * s3 destinations to upload the snapshot to (`--to`), replacing `snapshots.to` for this run.
   * @default config.snapshots.to
   */
  to?: readonly string[];
}

/** One table written by a snapshot run. */
export interface SnapshotTableStats {
  rows: number;
  /** Size of the Parquet file. */
  bytes: number;
}

/** Counts of one snapshot run, stored in `pipeline_runs.stats` and printed in the summary. */
export interface SnapshotStats {
  /** UTC date of the snapshot, `YYYY-MM-DD` (the `snapshot_date=` partition). */
  snapshotDate: string;
  /** The snapshots dir written to. */
  dir: string;
  /** Tables whose file is in place, by name. On a failure, only the tables written before it. */
  tables: Record<string, SnapshotTableStats>;
  /** `<dir>/_manifests/snapshot_date=YYYY-MM-DD.json`, or null when nothing was written. */
  manifestPath: string | null;
  /** Partitions (`table/snapshot_date=…`) removed by `snapshots.retainDates`. */
  removedPartitions: string[];
  /**
   * What each destination got (`--to`, `snapshots.to`), by name: objects uploaded and skipped
   * (with bytes), the dates completed, dates removed by retention, retries, and the error of a
   * destination that failed. Empty when the snapshot uploads nowhere.
   */
  uploads: Record<string, SnapshotUploadResult>;
}

const PIPELINE = 'snapshot';
/** Rows between progress-bar updates: a bar redraw per row would cost more than the row. */
const PROGRESS_EVERY_ROWS = 1_000;

/**
 * `snapshot`: writes one Parquet file per mirror table at
 * `<dir>/<table>/snapshot_date=YYYY-MM-DD/part-0.parquet` (docs/contract.md "Snapshots") with the
 * manifest `<dir>/_manifests/snapshot_date=YYYY-MM-DD.json`, then applies `snapshots.retainDates`.
 *
 * - The snapshot date is the UTC date of `ctx.clock()`; a second snapshot on the same date
 *   replaces the first file by file, atomically (readers see the old or the new file).
 * - Rows are streamed from SQLite (one read transaction per table, so each file is a consistent
 *   picture of its table); memory stays flat whatever the table size.
 * - Needs no service client: `ctx` is a {@link MirrorRunContext}.
 * - Records a `pipeline_runs` row; the `pipeline_runs` snapshot therefore contains this run,
 *   still `running`.
 * - With destinations (`options.to`, else `snapshots.to`), uploads the snapshot to each s3
 *   destination afterwards (pipelines/snapshot-upload.ts; `stats.uploads`); a destination that
 *   fails makes the run `failed` with its `ERR_DESTINATION…` error, the local snapshot kept.
 * - Throws `UsageError` for an unknown table or destination before anything is recorded;
 *   never throws after that: a write failure or an abort is the run's status (`failed`,
 *   `interrupted`), and the tables written before it stay written and listed in the manifest
 *   and in `stats.tables`.
 */
export async function snapshotPipeline(
  ctx: MirrorRunContext,
  options: SnapshotOptions = {},
): Promise<RunResult<SnapshotStats>> {
  const tables = resolveSnapshotTables(options.tables);
  const destinations = resolveSnapshotDestinations(ctx.config, options.to);
  const dir = options.outDir ?? ctx.config.snapshots.dir;
  const stats: SnapshotStats = {
    snapshotDate: utcDate(ctx.clock()),
    dir,
    tables: {},
    manifestPath: null,
    removedPartitions: [],
    uploads: {},
  };
  return runPipeline(
    ctx,
    PIPELINE,
    async ({ id, ctx: runCtx }) => {
      const progress = new Map<SnapshotTable, ProgressTask>();
      // Where no bar shows it (a cron job's log), a large mirror's snapshot is long silent work.
      const progressLog = throttledProgressLog(runCtx.logger, runCtx.clock);
      /** Size and SHA-256 of each file this run wrote, from the writer: an upload need not hash them. */
      const written = new Map<string, { bytes: number; sha256: string }>();
      const inputs = tables.map((table) => {
        const rowCount = tableRowCount(runCtx.mirror, table);
        progress.set(table, runCtx.progress.task(table, rowCount, 'rows'));
        return {
          table,
          columns: describeTable(runCtx.mirror, table),
          rows: countRows(
            iterateTableRowArrays(runCtx.mirror, table, { batchSize: options.batchSize, jsonAsBytes: true }),
            progress.get(table)!,
            (rows) => progressLog('snapshot progress', { table, rows, of: rowCount }),
          ),
          rowCount,
        };
      });
      // snapshots.retainDates = 0 means "keep every date"; writeSnapshot wants undefined for that.
      const retainDates = ctx.config.snapshots.retainDates > 0 ? ctx.config.snapshots.retainDates : undefined;
      try {
        const result = await writeSnapshot({
          dir,
          snapshotDate: stats.snapshotDate,
          tables: inputs,
          pipelineRunId: id,
          retainDates,
          clock: runCtx.clock,
          logger: runCtx.logger,
          signal: runCtx.signal,
          onTableWritten: (table) => {
            runCtx.logger.info('snapshot table written', {
              table: table.table,
              rows: table.rows,
              bytes: table.bytes,
              path: table.path,
            });
          },
        });
        for (const table of result.tables) {
          written.set(table.table, { bytes: table.bytes, sha256: table.sha256 });
          stats.tables[table.table] = { rows: table.rows, bytes: table.bytes };
        }
        stats.manifestPath = result.manifestPath;
        stats.removedPartitions = result.removed.map((r) => `${r.table}/snapshot_date=${r.snapshotDate}`);
      } catch (error) {
        // writeSnapshot keeps (and records in the manifest) the tables written before the failure;
        // the summary should say which, so read them back before runPipeline records the error.
        await recordWrittenTables(stats, id);
        throw error;
      } finally {
        for (const task of progress.values()) task.done();
      }
      // Uploads start once the local snapshot is complete; a destination that fails fails the
      // run (exit 1) and leaves the local snapshot as written.
      if (destinations.length > 0) {
        await uploadToDestinations(
          runCtx,
          {
            dir,
            snapshotDate: stats.snapshotDate,
            destinations,
            retainDates: ctx.config.snapshots.retainDates,
            written,
          },
          stats.uploads,
        );
      }
      return { status: 'done', stats, failures: [], creditsSpent: 0 };
    },
    () => stats,
  );
}

/**
 * Passes rows through, advancing the table's progress bar and telling `onRows` how many rows have
 * passed every {@link PROGRESS_EVERY_ROWS} rows.
 */
function* countRows<T>(
  rows: Iterable<T>,
  task: ProgressTask,
  onRows: (rows: number) => void,
): Generator<T, void, undefined> {
  let pending = 0;
  let passed = 0;
  for (const row of rows) {
    yield row;
    if (++pending === PROGRESS_EVERY_ROWS) {
      task.increment(pending);
      passed += pending;
      pending = 0;
      onRows(passed);
    }
  }
  task.increment(pending);
}

async function recordWrittenTables(stats: SnapshotStats, runId: number): Promise<void> {
  try {
    const manifest = await readSnapshotManifest(stats.dir, stats.snapshotDate);
    for (const [table, entry] of Object.entries(manifest?.tables ?? {})) {
      if (entry.pipeline_run_id === runId) stats.tables[table] = { rows: entry.rows, bytes: entry.bytes };
    }
  } catch {
    // The write error is what matters; an unreadable manifest just leaves stats.tables empty.
  }
}
