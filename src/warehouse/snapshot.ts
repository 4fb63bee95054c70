import { readdir, rm } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import type { Logger } from '../log/logger.js';
import { noopLogger } from '../log/logger.js';
import { writeFileAtomic } from '../util/atomic-file.js';
import type { Clock } from '../util/time.js';
import { isoFromMs, systemClock } from '../util/time.js';
import type { ColumnSpec, TimestampUnit } from './column-spec.js';
import { SnapshotSchemaError, SnapshotWriteError } from './errors.js';
import { readSnapshotManifest, type ManifestTable, type SnapshotManifest } from './manifest.js';
import { writeParquetFile } from './parquet-writer.js';
import type { ParquetCompression, RowSource } from './parquet-writer.js';
import {
  PART_FILE_NAME,
  assertSnapshotDate,
  assertTableName,
  isSnapshotDate,
  listSnapshotDates,
  manifestPath,
  partitionDir,
  snapshotFilePath,
  utcDate,
} from './snapshot-layout.js';

/** One table to snapshot: its columns and a lazy row source. */
export interface SnapshotTableInput {
  /** Table name; becomes the folder name (letters, digits, `_`; starts with a letter). */
  table: string;
  /** Columns in file order. */
  columns: readonly ColumnSpec[];
  /** Rows, pulled lazily (for example `mirror.iterateTableRows(table)`). */
  rows: RowSource;
  /**
   * Rows the caller expects (for example a `COUNT(*)` taken in the same read transaction).
   * Only checked: a different number of rows written is logged as a warning, not an error.
   */
  rowCount?: number;
}

/** What {@link writeSnapshot} takes. */
export interface WriteSnapshotOptions {
  /** The snapshots dir (`snapshots.dir` in the config). Created when missing. */
  dir: string;
  /**
   * UTC date of the snapshot, `YYYY-MM-DD`.
   * @default utcDate(clock())
   */
  snapshotDate?: string;
  /** Tables to write, in order. Each name may appear once. */
  tables: readonly SnapshotTableInput[];
  /** `pipeline_runs.id` of the run writing the snapshot; recorded in the manifest. */
  pipelineRunId?: string | number | null;
  /**
   * Keep only the newest N snapshot dates of each table written by this call; older partition
   * folders are removed after the new files are in place. Must be at least 1.
   * @default undefined (keep every date)
   */
  retainDates?: number;
  /**
   * Rows per row group.
   * @default 100_000
   */
  rowGroupSize?: number;
  /**
   * Cap of the estimated buffered bytes per row group (see `writeParquetFile`).
   * @default 48 MiB
   */
  maxRowGroupBytes?: number;
  /**
   * Compression codec.
   * @default 'ZSTD'
   */
  compression?: ParquetCompression;
  /**
   * Resolution of timestamp columns.
   * @default 'MICROS'
   */
  timestampUnit?: TimestampUnit;
  /**
   * Source of `written_at` and of the default snapshot date.
   * @default systemClock
   */
  clock?: Clock;
  /**
   * Where warnings and retention removals go (each table written: `onTableWritten`).
   * @default noopLogger
   */
  logger?: Logger;
  /** Stops the snapshot between (and inside) tables; files already renamed stay. */
  signal?: AbortSignal;
  /** Called as each table's file is in place, before the next table starts. */
  onTableWritten?: (table: SnapshotTableResult) => void;
}

/** One table written by {@link writeSnapshot}. */
export interface SnapshotTableResult {
  table: string;
  /** Absolute or dir-relative path as built from `dir`. */
  path: string;
  rows: number;
  bytes: number;
  rowGroups: number;
  /** SHA-256 (hex) of the file as written by this call. */
  sha256: string;
}

/** A partition folder removed by retention. */
export interface RemovedPartition {
  table: string;
  snapshotDate: string;
  path: string;
}

/** What {@link writeSnapshot} returns. */
export interface SnapshotResult {
  dir: string;
  snapshotDate: string;
  manifestPath: string;
  writtenAt: string;
  tables: SnapshotTableResult[];
  /** Partitions removed by `retainDates`, oldest first per table. */
  removed: RemovedPartition[];
}

/**
 * Writes one Parquet snapshot per table at `<dir>/<table>/snapshot_date=YYYY-MM-DD/part-0.parquet`
 * (docs/contract.md "Snapshots") and records it in `<dir>/_manifests/snapshot_date=YYYY-MM-DD.json`.
 *
 * - Each file appears atomically (see {@link writeParquetFile}); a second snapshot on the same
 *   date replaces the first by renaming over it, so readers see the old or the new file.
 * - Tables are written one after the other. If one fails, the tables before it stay written and
 *   recorded in the manifest, the failing table keeps its previous file, and the error
 *   (`ERR_SNAPSHOT_VALUE`, `ERR_SNAPSHOT_WRITE`, `ERR_ABORTED`) is thrown.
 * - The manifest is written (atomically) after the data files, so every table it lists has its
 *   file in place. It lives outside the table folders, so
 *   `read_parquet('<dir>/<table>/*\/*.parquet', hive_partitioning = true)` reads only data.
 * - Leftover hidden temporary files from a crashed earlier write of the same partition are
 *   removed first. Two snapshot writers on the same dir at once are not supported (the
 *   scheduler never overlaps runs).
 * - With `retainDates`, older partitions of the written tables are removed afterwards and their
 *   manifests updated (a manifest left with no table is deleted).
 */
export async function writeSnapshot(options: WriteSnapshotOptions): Promise<SnapshotResult> {
  const { dir, tables } = options;
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? noopLogger;
  const snapshotDate = options.snapshotDate ?? utcDate(clock());
  const pipelineRunId = options.pipelineRunId ?? null;
  assertSnapshotDate(snapshotDate);
  if (
    options.retainDates !== undefined &&
    (!Number.isSafeInteger(options.retainDates) || options.retainDates < 1)
  ) {
    throw new SnapshotSchemaError(
      `retainDates must be a positive integer, got ${String(options.retainDates)}`,
    );
  }
  const names = new Set<string>();
  for (const input of tables) {
    assertTableName(input.table);
    if (names.has(input.table)) throw new SnapshotSchemaError('table is listed twice', input.table);
    names.add(input.table);
  }

  const written: SnapshotTableResult[] = [];
  const entries: Record<string, ManifestTable> = {};
  let failure: unknown;
  for (const input of tables) {
    const path = snapshotFilePath(dir, input.table, snapshotDate);
    try {
      await removeStaleTempFiles(partitionDir(dir, input.table, snapshotDate), PART_FILE_NAME);
      const result = await writeParquetFile({
        path,
        table: input.table,
        columns: input.columns,
        rows: input.rows,
        rowGroupSize: options.rowGroupSize,
        maxRowGroupBytes: options.maxRowGroupBytes,
        compression: options.compression,
        timestampUnit: options.timestampUnit,
        signal: options.signal,
        // Nothing that differs from run to run (a run id, a time): a table whose rows did not
        // change gives the same bytes, so an upload to object storage can skip it. The run id
        // is in the manifest.
        metadata: {
          'domain_sync.table': input.table,
          'domain_sync.snapshot_date': snapshotDate,
        },
      });
      if (input.rowCount !== undefined && input.rowCount !== result.rows) {
        logger.warn('snapshot row count differs from the expected count', {
          table: input.table,
          expected: input.rowCount,
          written: result.rows,
        });
      }
      const table: SnapshotTableResult = {
        table: input.table,
        path,
        rows: result.rows,
        bytes: result.bytes,
        rowGroups: result.rowGroups,
        sha256: result.sha256,
      };
      written.push(table);
      options.onTableWritten?.(table);
      entries[input.table] = {
        path: relative(dir, path).split(sep).join('/'),
        rows: result.rows,
        bytes: result.bytes,
        row_groups: result.rowGroups,
        columns: input.columns.map((c) => ({ name: c.name, type: c.type, nullable: c.nullable ?? true })),
        written_at: isoFromMs(clock()),
        pipeline_run_id: pipelineRunId,
      };
    } catch (error) {
      failure = error;
      break;
    }
  }

  const writtenAt = isoFromMs(clock());
  const manifestFile = manifestPath(dir, snapshotDate);
  if (written.length > 0) {
    try {
      await updateManifest(dir, snapshotDate, (manifest) => {
        Object.assign(manifest.tables, entries);
        manifest.written_at = writtenAt;
        manifest.pipeline_run_id = pipelineRunId;
      });
    } catch (error) {
      // A data-file failure is the more useful error to report; the manifest failure is logged.
      if (failure === undefined) {
        throw new SnapshotWriteError('_manifests', manifestFile, errorMessage(error), { cause: error });
      }
      logger.error('snapshot manifest could not be updated', {
        path: manifestFile,
        error: errorMessage(error),
      });
    }
  }
  if (failure !== undefined) throw failure;

  const removed: RemovedPartition[] = [];
  if (options.retainDates !== undefined) {
    for (const input of tables) {
      removed.push(...(await applyRetention(dir, input.table, options.retainDates)));
    }
    const byDate = new Map<string, string[]>();
    for (const r of removed) byDate.set(r.snapshotDate, [...(byDate.get(r.snapshotDate) ?? []), r.table]);
    for (const [date, dropped] of byDate) {
      await updateManifest(dir, date, (manifest) => {
        for (const table of dropped) delete manifest.tables[table];
      });
    }
    for (const r of removed) logger.info('snapshot partition removed by retention', { ...r });
  }

  return { dir, snapshotDate, manifestPath: manifestFile, writtenAt, tables: written, removed };
}

/**
 * Read-modify-write of one date's manifest. Entries whose file has gone (removed by hand or by
 * retention) are dropped; a manifest left without tables is deleted.
 */
async function updateManifest(
  dir: string,
  snapshotDate: string,
  change: (manifest: SnapshotManifest) => void,
): Promise<void> {
  const path = manifestPath(dir, snapshotDate);
  // A process killed while it wrote this manifest left its temporary file behind.
  await removeStaleTempFiles(dirname(path), basename(path));
  let manifest: SnapshotManifest | null = null;
  try {
    manifest = await readSnapshotManifest(dir, snapshotDate);
  } catch {
    // An unreadable manifest is rebuilt from what this call knows rather than blocking snapshots.
  }
  manifest ??= {
    format_version: 1,
    snapshot_date: snapshotDate,
    written_at: '',
    pipeline_run_id: null,
    tables: {},
  };
  change(manifest);
  const present = new Set(await listTablesWithDate(dir, snapshotDate));
  for (const table of Object.keys(manifest.tables)) {
    if (!present.has(table)) delete manifest.tables[table];
  }
  if (Object.keys(manifest.tables).length === 0) {
    await rm(path, { force: true });
    return;
  }
  await writeFileAtomic(path, `${JSON.stringify(manifest, null, 2)}\n`);
}

async function listTablesWithDate(dir: string, snapshotDate: string): Promise<string[]> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch {
    return [];
  }
  const tables: string[] = [];
  for (const table of entries) {
    if (table.startsWith('_') || table.startsWith('.')) continue;
    try {
      const files = await readdir(partitionDir(dir, table, snapshotDate));
      if (files.includes(PART_FILE_NAME)) tables.push(table);
    } catch {
      // No partition of that date for this table.
    }
  }
  return tables;
}

/**
 * Removes partition folders of `table` older than its `keep` newest complete dates, including
 * incomplete folders (crash leftovers) older than the oldest date kept.
 */
async function applyRetention(dir: string, table: string, keep: number): Promise<RemovedPartition[]> {
  const complete = await listSnapshotDates(dir, table);
  if (complete.length <= keep) return [];
  const oldestKept = complete[keep - 1]!;
  const entries = await readdir(join(dir, table));
  const doomed = entries
    .map((entry) => /^snapshot_date=(\d{4}-\d{2}-\d{2})$/.exec(entry)?.[1])
    .filter((date): date is string => date !== undefined && isSnapshotDate(date) && date < oldestKept)
    .sort();
  const removed: RemovedPartition[] = [];
  for (const snapshotDate of doomed) {
    const path = partitionDir(dir, table, snapshotDate);
    await rm(path, { recursive: true, force: true });
    removed.push({ table, snapshotDate, path });
  }
  return removed;
}

/**
 * Removes the `.<name>.tmp-*` files a killed writer of `<folder>/<name>` left behind (a data file
 * of a partition, or a manifest). Only one snapshot writes a mirror's snapshots at a time (the
 * mirror lock), so no live writer owns them.
 */
async function removeStaleTempFiles(folder: string, name: string): Promise<void> {
  let files: string[];
  try {
    files = await readdir(folder);
  } catch {
    return;
  }
  const prefix = `.${name}.tmp-`;
  for (const file of files) {
    if (file.startsWith(prefix)) await rm(join(folder, file), { force: true });
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
