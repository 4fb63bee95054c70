/**
 * Reading Parquet back with DuckDB, the independent reader of every snapshot test.
 *
 * Tests must not read our files with the library that wrote them (hyparquet), or a shared
 * misunderstanding of the format could hide. DuckDB is what analysts use, so it is the judge.
 *
 * Values come back as plain JS, chosen so that `expect(rows).toEqual(...)` against mirror rows
 * works without per-test conversion:
 *
 * | DuckDB type | JS value |
 * |---|---|
 * | VARCHAR | string |
 * | BIGINT, HUGEINT, UBIGINT | bigint (exact above 2^53) |
 * | INTEGER, SMALLINT, TINYINT, DOUBLE, FLOAT | number |
 * | BOOLEAN | boolean |
 * | TIMESTAMP WITH TIME ZONE, TIMESTAMP, TIMESTAMP_MS/_S/_NS | ISO string `YYYY-MM-DDTHH:MM:SS.sssZ` (UTC, sub-ms digits dropped) |
 * | DATE (e.g. a hive `snapshot_date` partition column) | string `YYYY-MM-DD` |
 * | NULL of any type | null |
 *
 * Other types come through `@duckdb/node-api`'s JS converter unchanged.
 */
import { DuckDBInstance, DuckDBTypeId } from '@duckdb/node-api';
import type { DuckDBConnection } from '@duckdb/node-api';

/** A column of a query result as DuckDB describes it. */
export interface ParquetColumn {
  /** Column name. */
  name: string;
  /** DuckDB type name as `DESCRIBE` prints it, e.g. `VARCHAR`, `BIGINT`, `TIMESTAMP WITH TIME ZONE`. */
  type: string;
}

/** Columns and rows of a query, with values converted as in the table at the top of this file. */
export interface ParquetReadResult {
  columns: ParquetColumn[];
  rows: Array<Record<string, unknown>>;
}

/** Options of {@link readParquet}. */
export interface ReadParquetOptions {
  /**
   * Read `key=value` folders as columns (`snapshot_date`). DuckDB types such a column itself
   * (a `YYYY-MM-DD` value becomes DATE, returned here as a `YYYY-MM-DD` string).
   * @default false
   */
  hivePartitioning?: boolean;
  /** SQL `ORDER BY` clause body (e.g. `'snapshot_date, domain_normalized'`); without it, file order. */
  orderBy?: string;
}

/**
 * Reads one Parquet file or a glob of them through DuckDB (`read_parquet`).
 *
 * Column names and types come from `DESCRIBE`; rows are converted to plain JS values (BIGINT as
 * bigint, timestamps as ISO strings). Each call uses its own in-memory DuckDB, closed before
 * returning, so tests never share state. Throws DuckDB's error when no file matches the glob.
 *
 * @example
 * const { columns, rows } = await readParquet(`${dir}/licenses/*\/*.parquet`, { hivePartitioning: true });
 */
export async function readParquet(
  globOrPath: string,
  options: ReadParquetOptions = {},
): Promise<ParquetReadResult> {
  const source = `read_parquet(${sqlString(globOrPath)}, hive_partitioning = ${options.hivePartitioning === true})`;
  const orderBy = options.orderBy === undefined ? '' : ` ORDER BY ${options.orderBy}`;
  return withConnection(async (connection) => {
    const columns = await describe(connection, `SELECT * FROM ${source}`);
    const rows = await queryRows(connection, `SELECT * FROM ${source}${orderBy}`);
    return { columns, rows };
  });
}

/**
 * Runs any SQL in a fresh in-memory DuckDB and returns its columns and converted rows.
 * Statements before the last one may set things up (`CREATE TABLE …; SELECT …`) as long as the
 * whole string is passed as separate statements; only the last result is returned.
 *
 * @example
 * const { rows } = await duckdbQuery(`SELECT count(*) AS n FROM read_parquet('${file}')`);
 * expect(rows[0]!.n).toBe(3n);
 */
export async function duckdbQuery(sql: string): Promise<ParquetReadResult> {
  return withConnection(async (connection) => {
    const reader = await connection.runAndReadAll(sql);
    const names = reader.columnNames();
    const types = reader.columnTypes();
    const columns = names.map((name, i) => ({ name, type: types[i]!.toString() }));
    return {
      columns,
      rows: convertRows(
        reader.getRowObjectsJS(),
        names,
        types.map((t) => t.typeId),
      ),
    };
  });
}

/** A SQL string literal for `value` (single quotes doubled). */
export function sqlString(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

async function withConnection<T>(fn: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    return await fn(connection);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

async function describe(connection: DuckDBConnection, select: string): Promise<ParquetColumn[]> {
  const reader = await connection.runAndReadAll(`DESCRIBE ${select}`);
  return reader
    .getRowObjectsJS()
    .map((row) => ({ name: String(row.column_name), type: String(row.column_type) }));
}

async function queryRows(connection: DuckDBConnection, sql: string): Promise<Array<Record<string, unknown>>> {
  const reader = await connection.runAndReadAll(sql);
  return convertRows(
    reader.getRowObjectsJS(),
    reader.columnNames(),
    reader.columnTypes().map((t) => t.typeId),
  );
}

const TIMESTAMP_TYPES = new Set<DuckDBTypeId>([
  DuckDBTypeId.TIMESTAMP,
  DuckDBTypeId.TIMESTAMP_TZ,
  DuckDBTypeId.TIMESTAMP_MS,
  DuckDBTypeId.TIMESTAMP_S,
  DuckDBTypeId.TIMESTAMP_NS,
]);

function convertRows(
  rows: Array<Record<string, unknown>>,
  names: string[],
  typeIds: DuckDBTypeId[],
): Array<Record<string, unknown>> {
  return rows.map((row) => {
    const out: Record<string, unknown> = {};
    names.forEach((name, i) => {
      const value = row[name];
      const typeId = typeIds[i]!;
      if (value instanceof Date && TIMESTAMP_TYPES.has(typeId)) out[name] = value.toISOString();
      else if (value instanceof Date && typeId === DuckDBTypeId.DATE)
        out[name] = value.toISOString().slice(0, 10);
      else out[name] = value ?? null;
    });
    return out;
  });
}
