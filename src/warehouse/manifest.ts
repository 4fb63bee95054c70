import { readFile } from 'node:fs/promises';
import type { ColumnType } from './column-spec.js';
import { SnapshotWriteError } from './errors.js';
import { assertSnapshotDate, manifestPath } from './snapshot-layout.js';

/*
 * A snapshot date's manifest, `_manifests/snapshot_date=YYYY-MM-DD.json`: its shape and its
 * reader. Written by writeSnapshot (./snapshot.ts); read also by `status` and the dashboard,
 * which this module lets do so without loading the Parquet writer.
 */

/** A column as recorded in the manifest. */
export interface ManifestColumn {
  name: string;
  type: ColumnType;
  nullable: boolean;
}

/** One table's entry in a snapshot manifest. */
export interface ManifestTable {
  /** Path of the file relative to the snapshots dir, with `/` separators. */
  path: string;
  rows: number;
  bytes: number;
  row_groups: number;
  columns: ManifestColumn[];
  /** When this table's file was renamed into place (UTC ISO 8601). */
  written_at: string;
  pipeline_run_id: string | number | null;
}

/**
 * The `_manifests/snapshot_date=YYYY-MM-DD.json` file: what is in that snapshot date.
 *
 * Several `writeSnapshot` calls on the same date merge: a table written again replaces its
 * entry, other tables keep theirs (as long as their file still exists).
 */
export interface SnapshotManifest {
  format_version: 1;
  snapshot_date: string;
  /** Time of the latest write to this manifest (UTC ISO 8601). */
  written_at: string;
  /** Run id of the latest write to this manifest. */
  pipeline_run_id: string | number | null;
  tables: Record<string, ManifestTable>;
}

/**
 * Reads the manifest of `snapshotDate`, or `null` when there is none.
 * Throws `SnapshotWriteError` when the file exists but is not a manifest.
 */
export async function readSnapshotManifest(
  dir: string,
  snapshotDate: string,
): Promise<SnapshotManifest | null> {
  assertSnapshotDate(snapshotDate);
  const path = manifestPath(dir, snapshotDate);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as SnapshotManifest;
    if (parsed.format_version !== 1 || typeof parsed.tables !== 'object' || parsed.tables === null) {
      throw new Error('not a format_version 1 manifest');
    }
    return parsed;
  } catch (error) {
    // JSON.parse's SyntaxError, a TypeError of a value that is no object, or the Error above.
    throw new SnapshotWriteError('_manifests', path, `unreadable manifest: ${(error as Error).message}`, {
      cause: error,
    });
  }
}
