import { PUBLISH_TABLES, type PublishTable } from '../src/mirror/store/publish.js';
import { UsageError } from '../src/util/domain-sync-error.js';

// Apart from publish.ts so that checking `--tables` (step-options, loaded by every command) does
// not load the PostgreSQL client.

/**
 * The tables to publish: every table of {@link PUBLISH_TABLES} when `names` is undefined or
 * empty, otherwise those named, in that list's order. Throws {@link UsageError} (exit 2) naming
 * each unknown table.
 */
export function resolvePublishTables(names?: readonly string[]): PublishTable[] {
  if (names === undefined || names.length === 0) return [...PUBLISH_TABLES];
  const valid = PUBLISH_TABLES as readonly string[];
  const unknown = names.filter((name) => !valid.includes(name));
  if (unknown.length > 0) {
    throw new UsageError(
      `--tables: unknown table${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => `"${n}"`).join(', ')}; ` +
        `valid tables are ${PUBLISH_TABLES.join(', ')}`,
    );
  }
  return PUBLISH_TABLES.filter((table) => names.includes(table));
}
