import { createHash, type Hash } from 'node:crypto';
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { constants as zlibConstants, gzipSync, zstdCompressSync } from 'node:zlib';
import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import type { ColumnSource } from 'hyparquet-writer';
import { AbortedError, DomainSyncError } from '../util/domain-sync-error.js';
import { fsyncDir, tempPathFor } from '../util/atomic-file.js';
import { INVALID, prepareColumns, previewValue } from './column-spec.js';
import type { ColumnSpec, TimestampUnit } from './column-spec.js';
import { SnapshotSchemaError, SnapshotValueError, SnapshotWriteError } from './errors.js';

/** Compression codecs the writer offers without extra packages. */
export type ParquetCompression = 'ZSTD' | 'SNAPPY' | 'GZIP' | 'UNCOMPRESSED';

/** Every {@link ParquetCompression}, for validation and docs. */
export const PARQUET_COMPRESSIONS: readonly ParquetCompression[] = ['ZSTD', 'SNAPPY', 'GZIP', 'UNCOMPRESSED'];

/** The codec of a snapshot unless the caller chooses. */
export const DEFAULT_COMPRESSION: ParquetCompression = 'ZSTD';

/**
 * zstd level of ZSTD pages. Level 1 compresses the mirror's JSON and text about three times as
 * fast as hyparquet-writer's pure-JS SNAPPY and still to about 60 % of SNAPPY's size (measured on
 * a synced mirror's `raw_profile` column; docs/benchmarks.md "snapshot").
 */
const ZSTD_LEVEL = 1;

/**
 * Compressors handed to hyparquet-writer for the codecs that are not its built-in SNAPPY, all
 * from `node:zlib` (native). zstd is deterministic for a given level and zstd version, so an
 * unchanged table still gives the same bytes.
 */
const COMPRESSORS = {
  ZSTD: (input: Uint8Array): Uint8Array =>
    zstdCompressSync(input, { params: { [zlibConstants.ZSTD_c_compressionLevel]: ZSTD_LEVEL } }),
  GZIP: (input: Uint8Array): Uint8Array => gzipSync(input),
};

/** Rows per row group when the caller does not choose. */
export const DEFAULT_ROW_GROUP_SIZE = 100_000;

/**
 * One row: a plain object keyed by column name, or an array of the values in column order (what
 * better-sqlite3's `.raw()` gives; no object per row, no lookup by name).
 */
export type Row = Record<string, unknown> | readonly unknown[];

/** A row source, pulled lazily. */
export type RowSource = Iterable<Row> | AsyncIterable<Row>;

/** What {@link writeParquetFile} takes. */
export interface WriteParquetFileOptions {
  /** Final path of the file; its directory is created when missing. */
  path: string;
  /** Columns in file order; each row's values are read by these names. */
  columns: readonly ColumnSpec[];
  /**
   * Rows, pulled one at a time (an array, a generator, a better-sqlite3 `.iterate()`, an async
   * cursor). Object rows: extra keys are ignored, a missing key is a null. Array rows: value `i`
   * is column `i`; extra trailing values are ignored, missing ones are nulls.
   */
  rows: RowSource;
  /**
   * Name used in error messages and logs (the mirror table).
   * @default the file name
   */
  table?: string;
  /**
   * Rows per row group. Memory grows with it (one group is buffered, column-wise, before it is
   * encoded), not with the total row count.
   * @default 100_000
   */
  rowGroupSize?: number;
  /**
   * Also close a row group once its buffered values are estimated at this many bytes (string
   * length, or byte length for bytes, plus a fixed per-value overhead), so wide tables (long JSON
   * sections) get smaller groups instead of more memory. Peak RSS is several times this estimate, because
   * hyparquet-writer makes per-value copies while encoding (current figures: docs/benchmarks.md
   * "snapshot"). Licence-like rows (~370 estimated bytes) stay at 100,000 rows per group under
   * the default.
   * @default 48 MiB
   */
  maxRowGroupBytes?: number;
  /**
   * Compression codec. ZSTD (level 1) and GZIP go through `node:zlib` (native); SNAPPY is
   * hyparquet-writer's built-in (pure JS): larger files and slower to write than ZSTD, for readers
   * that predate ZSTD in Parquet (DuckDB, Spark ≥ 2.4 with its bundled zstd, pyarrow, polars and
   * Trino all read ZSTD).
   * @default 'ZSTD'
   */
  compression?: ParquetCompression;
  /**
   * Resolution of `timestamp` columns. MICROS is what Spark, pandas and DuckDB write themselves.
   * @default 'MICROS'
   */
  timestampUnit?: TimestampUnit;
  /** Extra key/value metadata stored in the file footer. */
  metadata?: Readonly<Record<string, string>>;
  /** Stops the write; the temporary file is removed and `AbortedError` (`ERR_ABORTED`) thrown. */
  signal?: AbortSignal;
}

/** What {@link writeParquetFile} returns. */
export interface WriteParquetFileResult {
  /** Final path of the file. */
  path: string;
  /** Rows written. */
  rows: number;
  /** File size in bytes. */
  bytes: number;
  /** Row groups written (0 for an empty table). */
  rowGroups: number;
  /** SHA-256 (hex) of the file's bytes, computed as they were written (an upload needs it). */
  sha256: string;
}

/** Default cap of the estimated bytes buffered for one row group. */
export const DEFAULT_MAX_ROW_GROUP_BYTES = 48 * 1024 * 1024;

/** Estimated fixed cost of one buffered value (JS value plus its later encoded copy). */
const VALUE_OVERHEAD_BYTES = 32;

/** Flush the encoded bytes to disk once this much has accumulated, to keep the buffer small. */
const FLUSH_BYTES = 4 * 1024 * 1024;

/** How often (in rows) the abort signal is checked between row groups. */
const ABORT_CHECK_ROWS = 4096;

/**
 * A hyparquet-writer sink that writes to a file descriptor as it goes.
 *
 * hyparquet-writer encodes synchronously into a `ByteWriter` and calls `ensure()` before every
 * append; writing out from there keeps memory at about one page plus {@link FLUSH_BYTES},
 * whatever the row group size. The writes are synchronous because `ensure()` is: the encoder
 * itself is synchronous CPU work, so an async write would not free the event loop anyway.
 */
class FileSink extends ByteWriter {
  private readonly fd: number;
  /** SHA-256 of everything written out, so nobody has to read the file again for it. */
  readonly hash: Hash = createHash('sha256');

  constructor(fd: number) {
    super(FLUSH_BYTES + 1024 * 1024);
    this.fd = fd;
  }

  override ensure(size: number): void {
    if (this.index > FLUSH_BYTES) this.writeOut();
    super.ensure(size);
  }

  override finish(): void {
    this.writeOut();
  }

  private writeOut(): void {
    this.hash.update(new Uint8Array(this.buffer, 0, this.index));
    let written = 0;
    while (written < this.index) {
      written += writeSync(this.fd, new Uint8Array(this.buffer, written, this.index - written));
    }
    this.index = 0;
  }
}

/**
 * Writes rows to a Parquet file atomically, streaming them in row groups.
 *
 * Rows are pulled from `rows` (sync or async iterable), converted and checked per column type
 * (see {@link ColumnSpec}), buffered column-wise up to `rowGroupSize` rows, then encoded by
 * hyparquet-writer with an explicit schema, so memory stays flat for millions of rows.
 *
 * The bytes go to a hidden temporary file in the same directory (`.part-0.parquet.tmp-xxxx`,
 * which no `*.parquet` glob matches), which is fsynced, renamed over `path` and followed by a
 * directory fsync. A reader therefore sees either the previous file or the complete new one.
 * On any failure (a bad value, the rows source throwing, an abort, an I/O error) the temporary
 * file is removed, the rows iterator is closed (`return()`), the previous file is left untouched,
 * and the error is thrown: `SnapshotValueError` (`ERR_SNAPSHOT_VALUE`),
 * `SnapshotSchemaError` (`ERR_SNAPSHOT_SCHEMA`), `AbortedError` (`ERR_ABORTED`), or
 * `SnapshotWriteError` (`ERR_SNAPSHOT_WRITE`, with the original error as `cause`).
 * A table with zero rows still produces a valid file with the full schema.
 *
 * @example
 * await writeParquetFile({
 *   path: 'data/snapshots/licenses/snapshot_date=2024-05-01/part-0.parquet',
 *   columns: [{ name: 'domain_normalized', type: 'text', nullable: false },
 *             { name: 'removed_at', type: 'timestamp' }],
 *   rows: db.prepare('SELECT * FROM licenses').iterate(),
 * });
 */
export async function writeParquetFile(options: WriteParquetFileOptions): Promise<WriteParquetFileResult> {
  const { path, columns, rows, signal } = options;
  const table = options.table ?? basename(path);
  const rowGroupSize = options.rowGroupSize ?? DEFAULT_ROW_GROUP_SIZE;
  const compression = options.compression ?? DEFAULT_COMPRESSION;
  const maxRowGroupBytes = options.maxRowGroupBytes ?? DEFAULT_MAX_ROW_GROUP_BYTES;
  if (!(maxRowGroupBytes > 0)) {
    throw new SnapshotSchemaError(
      `maxRowGroupBytes must be positive, got ${String(maxRowGroupBytes)}`,
      table,
    );
  }
  if (!Number.isSafeInteger(rowGroupSize) || rowGroupSize < 1) {
    throw new SnapshotSchemaError(
      `rowGroupSize must be a positive integer, got ${String(rowGroupSize)}`,
      table,
    );
  }
  if (!PARQUET_COMPRESSIONS.includes(compression)) {
    throw new SnapshotSchemaError(
      `unsupported compression "${String(compression)}" (${PARQUET_COMPRESSIONS.join(', ')})`,
      table,
    );
  }
  const { schema, prepared } = prepareColumns(columns, table, options.timestampUnit ?? 'MICROS');
  if (signal?.aborted) throw new AbortedError(`snapshot of table "${table}" aborted before it started`);

  await mkdir(dirname(path), { recursive: true });
  const tmp = tempPathFor(path);
  let fd: number | undefined;
  let rowIndex = 0;
  let rowGroups = 0;
  let sha256: string;
  const iterator = openIterator(rows);
  try {
    fd = openSync(tmp, 'wx');
    const sink = new FileSink(fd);
    const writer = new ParquetWriter({
      writer: sink,
      schema,
      codec: compression,
      compressors: COMPRESSORS,
      createdBy: 'domain-sync (hyparquet-writer)',
      kvMetadata: Object.entries(options.metadata ?? {}).map(([key, value]) => ({ key, value })),
    });

    const width = prepared.length;
    const names = prepared.map((column) => column.spec.name);
    // text and json columns keep a string as it is (their converters return it unchanged), so
    // the most common cell skips the converter call.
    const keepsStrings = prepared.map((column) => column.spec.type === 'text' || column.spec.type === 'json');
    let buffers: unknown[][] = prepared.map(() => []);
    let buffered = 0;
    let bufferedBytes = 0;

    const flushGroup = (): void => {
      const columnData: ColumnSource[] = prepared.map((column, c) => ({
        name: column.spec.name,
        data: buffers[c] as ColumnSource['data'],
      }));
      // One call = one row group: rowGroupSize equals what we buffered.
      void writer.write({ columnData, rowGroupSize: buffered });
      rowGroups++;
      buffers = prepared.map(() => []);
      buffered = 0;
      bufferedBytes = 0;
    };

    for (;;) {
      const step = iterator.sync ? iterator.sync.next() : await iterator.async.next();
      if (step.done === true) break;
      const row = step.value as Row;
      if (row === null || typeof row !== 'object') {
        throw new SnapshotValueError(
          table,
          path,
          '*',
          rowIndex,
          `expected a row object, got ${previewValue(row)}`,
        );
      }
      const values = Array.isArray(row) ? (row as readonly unknown[]) : undefined;
      for (let c = 0; c < width; c++) {
        const column = prepared[c]!;
        const raw = values ? values[c] : (row as Record<string, unknown>)[names[c]!];
        let value: unknown;
        if (raw === null || raw === undefined) {
          if (!column.nullable) {
            throw new SnapshotValueError(
              table,
              path,
              column.spec.name,
              rowIndex,
              'null in a non-nullable column',
            );
          }
          value = null;
        } else if (typeof raw === 'string' && keepsStrings[c]) {
          value = raw;
        } else {
          value = column.convert(raw);
          if (value === INVALID) {
            throw new SnapshotValueError(
              table,
              path,
              column.spec.name,
              rowIndex,
              `expected ${column.expected} for a ${column.spec.type} column, got ${previewValue(raw)}`,
            );
          }
        }
        buffers[c]!.push(value);
        bufferedBytes +=
          typeof value === 'string'
            ? value.length + VALUE_OVERHEAD_BYTES
            : value instanceof Uint8Array
              ? value.byteLength + VALUE_OVERHEAD_BYTES
              : VALUE_OVERHEAD_BYTES;
      }
      rowIndex++;
      buffered++;
      if (buffered >= rowGroupSize || bufferedBytes >= maxRowGroupBytes) flushGroup();
      if (rowIndex % ABORT_CHECK_ROWS === 0 && signal?.aborted) {
        throw new AbortedError(`snapshot of table "${table}" aborted after ${rowIndex} rows`);
      }
    }
    if (buffered > 0) flushGroup();
    if (signal?.aborted)
      throw new AbortedError(`snapshot of table "${table}" aborted after ${rowIndex} rows`);
    // With zero rows no row group is written: the footer alone carries the schema, which
    // every reader accepts as an empty table.
    void writer.finish();
    sha256 = sink.hash.digest('hex');
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    await rename(tmp, path);
  } catch (error) {
    if (fd !== undefined) {
      try {
        closeSync(fd);
      } catch {
        // Already failing; the original error is the one worth reporting.
      }
    }
    await rm(tmp, { force: true }).catch(() => undefined);
    await closeIterator(iterator);
    if (error instanceof DomainSyncError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new SnapshotWriteError(table, path, `after ${rowIndex} rows: ${message}`, { cause: error });
  }
  await fsyncDir(dirname(path));
  const { size } = await stat(path);
  return { path, rows: rowIndex, bytes: size, rowGroups, sha256 };
}

type OpenIterator =
  { sync: Iterator<Row>; async?: undefined } | { sync?: undefined; async: AsyncIterator<Row> };

function openIterator(rows: RowSource): OpenIterator {
  // Pull sync sources synchronously: awaiting each of a million rows would cost a microtask
  // per row for nothing.
  if (typeof (rows as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function') {
    return { async: (rows as AsyncIterable<Row>)[Symbol.asyncIterator]() };
  }
  if (typeof (rows as Iterable<unknown>)[Symbol.iterator] === 'function') {
    return { sync: (rows as Iterable<Row>)[Symbol.iterator]() };
  }
  throw new SnapshotSchemaError('rows must be an iterable or an async iterable');
}

/**
 * Releases the source after a failure: a better-sqlite3 `.iterate()` keeps its connection busy
 * until the iterator is closed, so a failed snapshot must not leave it open.
 */
async function closeIterator(iterator: OpenIterator): Promise<void> {
  try {
    if (iterator.sync) iterator.sync.return?.();
    else await iterator.async.return?.();
  } catch {
    // The source failing to close does not change the outcome being reported.
  }
}
