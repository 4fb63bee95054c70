import { SNAPSHOT_TABLES, type SnapshotTable } from '../src/mirror/store/snapshot.js';
import { UsageError } from '../src/util/domain-sync-error.js';

// Apart from snapshot.ts so that checking `--tables` (step-options, loaded by every command) does
// not load the Parquet writer.

/**
 * The tables a snapshot writes: every mirror table ({@link SNAPSHOT_TABLES}, contract order) when
 * `names` is undefined or empty, otherwise `names` deduplicated, in contract order.
 * Throws {@link UsageError} (exit 2) naming each unknown table and listing the valid names.
 */
export function resolveSnapshotTables(names?: readonly string[]): SnapshotTable[] {
  if (names === undefined || names.length === 0) return [...SNAPSHOT_TABLES];
  const valid = SNAPSHOT_TABLES as readonly string[];
  const unknown = names.filter((name) => !valid.includes(name));
  if (unknown.length > 0) {
    throw new UsageError(
      `--tables: unknown table${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => `"${n}"`).join(', ')}; ` +
        `valid tables are ${SNAPSHOT_TABLES.join(', ')}`,
    );
  }
  return SNAPSHOT_TABLES.filter((table) => names.includes(table));
}
