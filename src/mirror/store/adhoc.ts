import { cachedStatement } from '../database.js';
import type { Mirror } from '../database.js';

/**
 * Runs one read-only SQL statement (a SELECT or a view) and returns its rows: for the demo and
 * the documented analyst queries, not for pipelines (which use the typed store functions).
 * A statement that would write is refused by SQLite (`stmt.readonly` is checked first).
 */
export function queryReadOnly(
  mirror: Mirror,
  sqlText: string,
  ...params: unknown[]
): Array<Record<string, unknown>> {
  const stmt = cachedStatement(mirror, sqlText);
  if (!stmt.readonly) throw new Error('queryReadOnly: only read-only statements are allowed');
  return stmt.all(...params) as Array<Record<string, unknown>>;
}
