import { PUBLISH_TABLES, type PublishTable } from '../src/mirror/store/publish.js';
import { SNAPSHOT_TABLES, type SnapshotTable } from '../src/mirror/store/snapshot.js';
import { UsageError } from '../src/util/domain-sync-error.js';

// The `--tables` of `snapshot` and `publish` (and of their steps). Apart from the pipelines so
// that checking a step's options (step-options, loaded by every command) loads neither the
// Parquet writer nor the PostgreSQL client.

/**
 * The tables a snapshot writes: every mirror table ({@link SNAPSHOT_TABLES}, contract order) when
 * `names` is undefined or empty, otherwise `names` deduplicated, in contract order.
 * Throws {@link UsageError} (exit 2) naming each unknown table and listing the valid names.
 */
export function resolveSnapshotTables(names?: readonly string[]): SnapshotTable[] {
  return resolveTables(names, SNAPSHOT_TABLES);
}

/**
 * The tables to publish: every table of {@link PUBLISH_TABLES} when `names` is undefined or
 * empty, otherwise those named, deduplicated, in that list's order. Throws {@link UsageError}
 * (exit 2) naming each unknown table and listing the valid names.
 */
export function resolvePublishTables(names?: readonly string[]): PublishTable[] {
  return resolveTables(names, PUBLISH_TABLES);
}

function resolveTables<T extends string>(names: readonly string[] | undefined, all: readonly T[]): T[] {
  if (names === undefined || names.length === 0) return [...all];
  const valid = all as readonly string[];
  const unknown = names.filter((name) => !valid.includes(name));
  if (unknown.length > 0) {
    throw new UsageError(
      `--tables: unknown table${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => `"${n}"`).join(', ')}; ` +
        `valid tables are ${all.join(', ')}`,
    );
  }
  return all.filter((table) => names.includes(table));
}
