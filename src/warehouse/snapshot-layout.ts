import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { SnapshotSchemaError } from './errors.js';

/** Name of the one data file in each partition (docs/contract.md "Snapshots"). */
export const PART_FILE_NAME = 'part-0.parquet';

/**
 * Folder under the snapshots dir that holds one manifest per snapshot date. It starts with `_`
 * so no table can be called that, and it sits beside the table folders, so the documented
 * `read_parquet('<dir>/<table>/*\/*.parquet', hive_partitioning = true)` never sees it.
 */
export const MANIFESTS_DIR_NAME = '_manifests';

const SNAPSHOT_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const PARTITION_DIR = /^snapshot_date=(\d{4}-\d{2}-\d{2})$/;
const TABLE_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

/** The UTC calendar date of `ms` (epoch milliseconds) as `YYYY-MM-DD`; snapshot dates are UTC. */
export function utcDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Whether `value` is a real calendar date spelt `YYYY-MM-DD` (2024-02-30 is not). */
export function isSnapshotDate(value: string): boolean {
  const m = SNAPSHOT_DATE.exec(value);
  if (m === null) return false;
  const date = new Date(`${value}T00:00:00.000Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
}

/** Throws `SnapshotSchemaError` unless `date` is a valid `YYYY-MM-DD` date. */
export function assertSnapshotDate(date: string): void {
  if (!isSnapshotDate(date)) {
    throw new SnapshotSchemaError(
      `snapshot date must be a real UTC date spelt YYYY-MM-DD, got ${JSON.stringify(date)}`,
    );
  }
}

/**
 * Throws `SnapshotSchemaError` unless `table` is a safe folder name: a letter, then letters,
 * digits or `_`. This keeps table names from escaping the snapshots dir (`..`, `/`) and from
 * colliding with `_manifests` or hidden temporary names.
 */
export function assertTableName(table: string): void {
  if (!TABLE_NAME.test(table)) {
    throw new SnapshotSchemaError(
      `table name must start with a letter and contain only letters, digits and _, got ${JSON.stringify(table)}`,
    );
  }
}

/** `<dir>/<table>/snapshot_date=YYYY-MM-DD`: the Hive-style partition folder. */
export function partitionDir(dir: string, table: string, snapshotDate: string): string {
  return join(dir, table, `snapshot_date=${snapshotDate}`);
}

/** `<dir>/<table>/snapshot_date=YYYY-MM-DD/part-0.parquet`: the snapshot file of one table. */
export function snapshotFilePath(dir: string, table: string, snapshotDate: string): string {
  return join(partitionDir(dir, table, snapshotDate), PART_FILE_NAME);
}

/** `<dir>/_manifests/snapshot_date=YYYY-MM-DD.json`: the manifest of one snapshot date. */
export function manifestPath(dir: string, snapshotDate: string): string {
  return join(dir, MANIFESTS_DIR_NAME, `snapshot_date=${snapshotDate}.json`);
}

/**
 * Snapshot dates of `table` that have a complete file, newest first.
 *
 * A partition folder without `part-0.parquet` (left by a crash during the first write of that
 * date) does not count. Returns `[]` when the table has no folder.
 */
export async function listSnapshotDates(dir: string, table: string): Promise<string[]> {
  let entries: string[];
  try {
    entries = await readdir(join(dir, table));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const dates: string[] = [];
  for (const entry of entries) {
    const m = PARTITION_DIR.exec(entry);
    if (m === null || !isSnapshotDate(m[1]!)) continue;
    let files: string[];
    try {
      files = await readdir(join(dir, table, entry));
    } catch {
      continue;
    }
    if (files.includes(PART_FILE_NAME)) dates.push(m[1]!);
  }
  // YYYY-MM-DD sorts as text.
  return dates.sort().reverse();
}

/**
 * Snapshot dates that have a manifest under `<dir>/_manifests`, newest first (`[]` when the
 * folder is missing). Hidden temporary files of a manifest being written do not count.
 */
export async function listManifestDates(dir: string): Promise<string[]> {
  let entries: string[];
  try {
    entries = await readdir(join(dir, MANIFESTS_DIR_NAME));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return entries
    .map((name) => /^snapshot_date=(\d{4}-\d{2}-\d{2})\.json$/.exec(name)?.[1])
    .filter((date): date is string => date !== undefined && isSnapshotDate(date))
    .sort()
    .reverse();
}
