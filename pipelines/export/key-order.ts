import { readSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { AbortedError } from '../../src/util/domain-sync-error.js';

/*
 * What the scans of an export file for its keys share (ndjson-order.ts, csv-order.ts): reading
 * the file once through one buffer, record by record, and the rows found, sorted by key.
 */

/** Where the rows of an export file are, in the order of their keys. */
export interface ExportKeyOrder {
  readonly path: string;
  /** Rows found (an NDJSON file's non-blank lines, a CSV file's records after its header). */
  readonly rows: number;
  /**
   * Byte offset, byte length and number of each row, in key order: its line (1-based) in an
   * NDJSON file, its row (1-based, the header not counted) in a CSV file.
   */
  readonly offsets: Float64Array;
  readonly lengths: Uint32Array;
  readonly lines: Uint32Array;
}

/** What a scan is told: to stop, and how far it got. */
export interface ScanOptions {
  signal?: AbortSignal;
  onBytes?: (bytes: number) => void;
}

/**
 * Reads the file at `path` once, through one buffer read into again and again (a record cut by
 * its end moves to its start; a stream's chunks, each a new buffer, piled up outside the heap
 * faster than the collector freed them), and hands each record to `onRecord`: `buf[start, end)`,
 * at file offset `offset`. `findEnd(buf, start, filled, atEnd)` says where the record starting at
 * `start` ends (the index of its newline), or -1 when it goes on past `filled`; at the end of the
 * file (`atEnd`) it must say where the last one ends. Throws an `AbortedError` when the signal
 * aborts.
 */
export async function scanRecords(
  path: string,
  options: ScanOptions,
  findEnd: (buf: Buffer, start: number, filled: number, atEnd: boolean) => number,
  onRecord: (buf: Buffer, start: number, end: number, offset: number) => void,
): Promise<void> {
  let buf = Buffer.allocUnsafe(1 << 20);
  let base = 0; // the file offset of buf[0]
  let filled = 0;
  const file = await open(path, 'r');
  try {
    for (;;) {
      if (options.signal?.aborted) throw new AbortedError();
      if (filled === buf.length) {
        // One record longer than the buffer.
        const bigger = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(bigger, 0, 0, filled);
        buf = bigger;
      }
      const { bytesRead } = await file.read(buf, filled, buf.length - filled, base + filled);
      filled += bytesRead;
      const atEnd = bytesRead === 0;
      let start = 0;
      while (start < filled) {
        const end = findEnd(buf, start, filled, atEnd);
        if (end === -1) break;
        onRecord(buf, start, end, base + start);
        start = end + 1;
      }
      if (atEnd) break;
      buf.copyWithin(0, start, filled);
      base += start;
      filled -= start;
      options.onBytes?.(base);
    }
  } finally {
    await file.close();
  }
}

/**
 * A scan's rows as it finds them: each key's UTF-8 bytes in one
 * growing buffer, and its row's offset, length and number in typed arrays, about 40 bytes a row
 * and no object per row.
 */
export class ScanRows {
  private count = 0;
  private keyBytes = Buffer.allocUnsafe(1 << 16);
  private keyUsed = 0;
  private keyStarts = new Uint32Array(1024);
  private offsets = new Float64Array(1024);
  private lengths = new Uint32Array(1024);
  private lines = new Uint32Array(1024);

  push(buf: Buffer, keyStart: number, keyEnd: number, offset: number, length: number, line: number): void {
    const keyLength = keyEnd - keyStart;
    if (this.keyUsed + keyLength > this.keyBytes.length) {
      const bigger = Buffer.allocUnsafe(Math.max(this.keyBytes.length * 2, this.keyUsed + keyLength));
      this.keyBytes.copy(bigger, 0, 0, this.keyUsed);
      this.keyBytes = bigger;
    }
    if (this.count + 1 >= this.keyStarts.length) {
      const grow = <T extends Uint32Array | Float64Array>(a: T, make: (n: number) => T): T => {
        const b = make(a.length * 2);
        b.set(a);
        return b;
      };
      this.keyStarts = grow(this.keyStarts, (n) => new Uint32Array(n));
      this.offsets = grow(this.offsets, (n) => new Float64Array(n));
      this.lengths = grow(this.lengths, (n) => new Uint32Array(n));
      this.lines = grow(this.lines, (n) => new Uint32Array(n));
    }
    this.keyStarts[this.count] = this.keyUsed;
    this.keyUsed += buf.copy(this.keyBytes, this.keyUsed, keyStart, keyEnd);
    this.keyStarts[this.count + 1] = this.keyUsed;
    this.offsets[this.count] = offset;
    this.lengths[this.count] = length;
    this.lines[this.count] = line;
    this.count += 1;
  }

  /**
   * The rows sorted by their keys' UTF-8 bytes (the order of SQLite's BINARY collation, so of the
   * mirror's B-trees), rows with the same key in file order.
   */
  sorted(): Omit<ExportKeyOrder, 'path'> {
    const { count, keyBytes, keyStarts } = this;
    const order = new Uint32Array(count);
    for (let i = 0; i < count; i++) order[i] = i;
    order.sort(
      (a, b) =>
        keyBytes.compare(keyBytes, keyStarts[b]!, keyStarts[b + 1]!, keyStarts[a]!, keyStarts[a + 1]!) ||
        a - b,
    );
    const offsets = new Float64Array(count);
    const lengths = new Uint32Array(count);
    const lines = new Uint32Array(count);
    order.forEach((index, i) => {
      offsets[i] = this.offsets[index]!;
      lengths[i] = this.lengths[index]!;
      lines[i] = this.lines[index]!;
    });
    return { rows: count, offsets, lengths, lines };
  }
}

/**
 * Reads the `length` bytes at `position` of the file `fd` into `buf` at `offset`, synchronously:
 * a row is a few kilobytes, most often in the page cache, and an asynchronous read per row costs
 * more than the read. Returns how many it read (fewer only at the end of the file).
 */
export function readRow(fd: number, buf: Buffer, offset: number, length: number, position: number): number {
  let got = 0;
  while (got < length) {
    const n = readSync(fd, buf, offset + got, length - got, position + got);
    if (n === 0) break;
    got += n;
  }
  return got;
}

/**
 * Bytes of rows read in key order between two turns of the event loop. The rows are read
 * synchronously (readRow), so a load in key order would otherwise never turn it from its first
 * row to its last: nothing else of the process would run, and the CLI's run-time cap on the young
 * generation (src/util/heap-growth.ts), which acts on garbage-collection notices delivered on the
 * event loop, would never act (what that cost in memory, and what a turn costs: docs/exports.md
 * "Loading"). This is about one turn per hundred rows.
 */
export const ROW_BYTES_PER_TURN = 256 * 1024;

/**
 * Counts the bytes a key-order reader reads and says when the event loop is due a turn, which the
 * reader then gives it (`await setImmediate()` of node:timers/promises).
 */
export class EventLoopTurns {
  #since = 0;

  /** Notes `bytes` more read; true (and the count starts again) when a turn is due. */
  due(bytes: number): boolean {
    this.#since += bytes;
    if (this.#since < ROW_BYTES_PER_TURN) return false;
    this.#since = 0;
    return true;
  }
}
