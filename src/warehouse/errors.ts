import { DomainSyncError } from '../util/domain-sync-error.js';

/**
 * A Parquet file or snapshot could not be written (I/O error, the rows source threw, rename
 * failed). Code `ERR_SNAPSHOT_WRITE`. The previous file under the final name, if any, is left
 * untouched and the temporary file is removed before this is thrown.
 */
export class SnapshotWriteError extends DomainSyncError {
  /** Table (or file label) being written. */
  readonly table: string;
  /** Final path of the file that was being written. */
  readonly path: string;

  constructor(table: string, path: string, message: string, options: { cause?: unknown } = {}) {
    super('ERR_SNAPSHOT_WRITE', `snapshot of table "${table}" to ${path} failed: ${message}`, options);
    this.table = table;
    this.path = path;
  }
}

/**
 * A row value does not fit its declared column type (an unparsable timestamp, a fractional
 * integer, a null in a non-nullable column…). Code `ERR_SNAPSHOT_VALUE`. Names the table, the
 * column and the zero-based row index; the offending value is shown shortened.
 */
export class SnapshotValueError extends DomainSyncError {
  /** Table (or file label) being written. */
  readonly table: string;
  /** Final path of the file that was being written. */
  readonly path: string;
  /** Column whose value was rejected. */
  readonly column: string;
  /** Zero-based index of the row in the rows source. */
  readonly row: number;

  constructor(table: string, path: string, column: string, row: number, message: string) {
    super(
      'ERR_SNAPSHOT_VALUE',
      `table "${table}", column "${column}", row ${row}: ${message} (writing ${path})`,
    );
    this.table = table;
    this.path = path;
    this.column = column;
    this.row = row;
  }
}

/**
 * The write request itself is invalid: an empty or duplicated column list, an unknown column
 * type, a table name that is not a safe path segment, a malformed snapshot date, a bad option.
 * Code `ERR_SNAPSHOT_SCHEMA`. Raised before anything is written.
 */
export class SnapshotSchemaError extends DomainSyncError {
  /** Table (or file label) concerned, when known. */
  readonly table: string | undefined;

  constructor(message: string, table?: string) {
    super('ERR_SNAPSHOT_SCHEMA', table === undefined ? message : `table "${table}": ${message}`);
    this.table = table;
  }
}
