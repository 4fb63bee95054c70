import Database from 'better-sqlite3';
import { DomainSyncError } from '../../util/domain-sync-error.js';
import { cachedStatement, countOf, mirrorInternals } from '../database.js';
import type { Mirror } from '../database.js';

/*
 * What the Parquet snapshot pipeline reads. The logical type of every column is declared here
 * (not guessed from SQLite's affinity, which has no timestamp, boolean or JSON), so the snapshot
 * schema is stable and documented in docs/schema.md.
 */

/** The contract tables that `snapshot` writes (docs/contract.md "Mirror tables"). */
export const SNAPSHOT_TABLES = [
  'domains',
  'licenses',
  'payment_methods',
  'domain_sections',
  'enrichment_runs',
  'exports',
  'pipeline_runs',
] as const;

/** A table `snapshot` can write. */
export type SnapshotTable = (typeof SNAPSHOT_TABLES)[number];

/** Logical column types for Parquet: timestamps are ISO text in SQLite, booleans 0/1, JSON text. */
export type LogicalColumnType = 'text' | 'integer' | 'real' | 'timestamp' | 'boolean' | 'json';

/** A column of {@link describeTable}. */
export interface ColumnDescription {
  name: string;
  type: LogicalColumnType;
  /** False for primary-key / NOT NULL columns. */
  nullable: boolean;
}

const JSON_COLUMNS = new Set([
  'raw_profile',
  'profile_extra',
  'stats',
  'filters',
  'fields',
  'cursor',
  'data',
  'raw',
]);
const BOOLEAN_COLUMNS = new Set(['served_from_cache', 'billable']);

/**
 * The logical type of a mirror column, for Parquet snapshots and for `publish` alike: `*_at` (and
 * `at` alone, the time of a change_log or credit_ledger row) are timestamps, the JSON text and
 * 0/1 columns by name, the rest by their declared SQLite type.
 */
export function logicalType(name: string, declared: string): LogicalColumnType {
  if (name === 'at' || name.endsWith('_at')) return 'timestamp';
  if (JSON_COLUMNS.has(name)) return 'json';
  if (BOOLEAN_COLUMNS.has(name)) return 'boolean';
  const upper = declared.toUpperCase();
  if (upper === 'INTEGER') return 'integer';
  if (upper === 'REAL') return 'real';
  return 'text';
}

function assertSnapshotTable(table: string): asserts table is SnapshotTable {
  if (!(SNAPSHOT_TABLES as readonly string[]).includes(table)) {
    throw new DomainSyncError(
      'ERR_MIRROR_INPUT',
      `unknown snapshot table "${table}" (expected one of ${SNAPSHOT_TABLES.join(', ')})`,
    );
  }
}

/**
 * The columns of a snapshot table in table order with their logical types: every `*_at`
 * column is `timestamp` (ISO text in SQLite, UTC), JSON columns `json` (text), 0/1 flags
 * `boolean`, other INTEGER columns `integer` (int64), REAL `real`, the rest `text`. Columns added
 * by later migrations are picked up automatically.
 */
export function describeTable(mirror: Mirror, table: SnapshotTable): ColumnDescription[] {
  assertSnapshotTable(table);
  const info = cachedStatement(
    mirror,
    `SELECT name, type, "notnull" AS not_null, pk FROM pragma_table_info(?) ORDER BY cid`,
  ).all(table) as Array<{ name: string; type: string; not_null: number; pk: number }>;
  return info.map((c) => ({
    name: c.name,
    type: logicalType(c.name, c.type),
    nullable: c.not_null === 0 && c.pk === 0,
  }));
}

/** Rows in a snapshot table. */
export function tableRowCount(mirror: Mirror, table: SnapshotTable): number {
  assertSnapshotTable(table);
  return countOf(mirror, `SELECT count(*) AS n FROM "${table}"`);
}

/** Options of {@link iterateTableRows}. */
export interface IterateTableRowsOptions {
  /** Rows fetched per query; memory stays at about one batch. @default 10000 */
  batchSize?: number;
}

/** Options of {@link iterateTableRowArrays}. */
export interface IterateTableRowArraysOptions extends IterateTableRowsOptions {
  /**
   * Read `json` columns as their UTF-8 bytes (a `Buffer`, SQLite's own text bytes) instead of JS
   * strings: for a writer that wants bytes anyway (Parquet), this skips decoding the largest
   * values into strings and encoding them back.
   * @default false
   */
  jsonAsBytes?: boolean;
}

/**
 * Streams every row of a snapshot table as `{column: value}` in rowid (insertion) order, from ONE
 * read transaction (a consistent snapshot even while another process writes).
 *
 * Values by logical type ({@link describeTable}):
 * - `integer` → `bigint` always (read with better-sqlite3 `safeIntegers`, exact above 2^53);
 * - `boolean` → `true`/`false`; `real` → number;
 * - `timestamp` → the stored `YYYY-MM-DDTHH:MM:SS.sssZ` string; `json`/`text` → string;
 * - SQL NULL → `null`.
 *
 * It reads through its own read-only connection, so the mirror's connection stays free for other
 * work while the caller consumes rows (awaiting between rows is fine). Finish or `return()` the
 * iterator (a `for … of` loop does) to release it. Not supported for `:memory:` mirrors.
 */
export function* iterateTableRows(
  mirror: Mirror,
  table: SnapshotTable,
  options: IterateTableRowsOptions = {},
): IterableIterator<Record<string, unknown>> {
  const columns = describeTable(mirror, table);
  const booleans = columns.flatMap((c, i) => (c.type === 'boolean' ? [i] : []));
  for (const values of iterateTableRowArrays(mirror, table, options)) {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < columns.length; i++) row[columns[i]!.name] = values[i];
    for (const i of booleans) {
      const v = values[i];
      if (v !== null) row[columns[i]!.name] = v === 1n;
    }
    yield row;
  }
}

/**
 * {@link iterateTableRows} without the objects: each row is an array of its values in
 * {@link describeTable} order, as SQLite holds them (integers as `bigint`, booleans as `0n`/`1n`,
 * timestamps and JSON as text, or JSON as UTF-8 bytes with `jsonAsBytes`, NULL as `null`). What
 * the snapshot writer reads: no object per
 * row, no key lookups. Same transaction, batching and release rules as {@link iterateTableRows}.
 */
export function* iterateTableRowArrays(
  mirror: Mirror,
  table: SnapshotTable,
  options: IterateTableRowArraysOptions = {},
): IterableIterator<unknown[]> {
  assertSnapshotTable(table);
  const columns = describeTable(mirror, table);
  const batchSize = Math.max(1, Math.trunc(options.batchSize ?? 10_000));
  mirrorInternals(mirror); // throws if closed
  const reader = new Database(mirror.path, { readonly: true, fileMustExist: true });
  try {
    reader.pragma('busy_timeout = 5000');
    const columnList = columns
      .map((c) =>
        options.jsonAsBytes === true && c.type === 'json' ? `CAST("${c.name}" AS BLOB)` : `"${c.name}"`,
      )
      .join(', ');
    // Keyset pagination on rowid: each batch is a short query, and BEGIN … COMMIT pins all of
    // them to the same WAL snapshot. The rowid comes last, so popping it leaves the row.
    const page = reader
      .prepare(`SELECT ${columnList}, rowid FROM "${table}" WHERE rowid > ? ORDER BY rowid LIMIT ?`)
      .raw(true)
      .safeIntegers(true);
    reader.exec('BEGIN');
    let after = -1n;
    for (;;) {
      const rows = page.all(after, batchSize) as unknown[][];
      for (const row of rows) {
        after = row.pop() as bigint;
        yield row;
      }
      if (rows.length < batchSize) break;
    }
    reader.exec('COMMIT');
  } finally {
    reader.close();
  }
}
