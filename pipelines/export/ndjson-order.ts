import { readSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { AbortedError } from '../../src/util/domain-sync-error.js';
import type { ExportRowInput } from '../../src/mirror/store/export-load.js';
import { DOMAIN_KEY_COLUMNS, NdjsonRowReader } from './format.js';

/*
 * Reading an NDJSON export file in the order of its keys (`domain_normalized`), not in the order
 * of its lines.
 *
 * The mirror's tables and their primary keys are keyed by domain. Rows written in the file's
 * order (the service's, which the API does not document) land all over each B-tree, and each
 * commit writes again every page its rows touched; rows written in key order fill each B-tree
 * at one edge. Measured on the same 200,000-row file (ad hoc, 2026-11-29): loaded as served
 * 29.4 s, sorted by domain first 22.3 s (docs/benchmarks.md "export").
 *
 * So a load first scans the file ({@link scanNdjsonKeys}): it finds where each line starts and
 * its key, without parsing the line when it can (below), then sorts the lines by key. The load
 * then reads each line at its offset, in that order ({@link readNdjsonInKeyOrder}), and parses
 * it as a line read in file order is parsed (NdjsonRowReader). Lines with the same key keep the
 * file's order, so the last one still wins.
 *
 * The key is found in the line's bytes when the line is a JSON object whose top level, before
 * anything nested, has `"domain_normalized":"<key>"` with no escape in the key, and nothing else
 * in the line looks like a key column. Any other line is parsed to find its key: the first one,
 * which must name the key column (as in file order), a line with the key spelled another way,
 * escaped, or after a nested value, and any line that is not a JSON object, which then fails the
 * scan, naming its line, before anything is written. The key found is used only to order the
 * rows: what is written is what the full parse of the line gives.
 *
 * Memory: the scan keeps each line's key bytes, offset, length and line number until it has
 * sorted them (about 40 bytes a line, outside the JavaScript heap), then offsets, lengths and
 * line numbers only (16 bytes a line). Sorting 1,000,000 lines takes about 2.5 s.
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

const NEWLINE = 0x0a;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const KEY_MEMBER = Buffer.from(`"${DOMAIN_KEY_COLUMNS[0]}":"`);
const KEY_NAMES = DOMAIN_KEY_COLUMNS.map((name) => Buffer.from(name));

/**
 * Where the key of the line `buf[start, end)` is in `buf` (its UTF-8 bytes), or undefined when it
 * cannot be read from the line's bytes with certainty (the line is then parsed: see the module
 * comment).
 */
function keyFromBytes(buf: Buffer, start: number, end: number): { start: number; end: number } | undefined {
  if (buf[start] !== OPEN_BRACE) return undefined;
  // Searches stay within the line: a search of the whole chunk would read to its end.
  const line = buf.subarray(start, end);
  const member = line.indexOf(KEY_MEMBER);
  if (member === -1) return undefined;
  // Nothing nested before it: a `{` or `[` (even inside a string) sends the line to the parser.
  for (let i = 1; i < member; i++) {
    if (line[i] === OPEN_BRACE || line[i] === OPEN_BRACKET) return undefined;
  }
  const valueStart = member + KEY_MEMBER.length;
  const valueEnd = line.indexOf(QUOTE, valueStart);
  if (valueEnd === -1) return undefined;
  const escape = line.indexOf(BACKSLASH, valueStart);
  if (escape !== -1 && escape < valueEnd) return undefined;
  // No other spelling of a key column anywhere else in the line (a repeated or second key column
  // would decide which value the parse keeps).
  for (const name of KEY_NAMES) {
    const first = line.indexOf(name);
    if (first !== -1 && first !== member + 1 && (first < valueStart || first >= valueEnd)) return undefined;
    if (line.indexOf(name, valueEnd) !== -1) return undefined;
  }
  return { start: start + valueStart, end: start + valueEnd };
}

/** Whether `buf[start, end)` holds only spaces, tabs and carriage returns (or a BOM alone). */
function blankBytes(buf: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const b = buf[i];
    if (b !== 0x20 && b !== 0x09 && b !== 0x0d) return false;
  }
  return true;
}

/**
 * Scans an NDJSON export file: where each non-blank line is and its key, sorted by key (lines
 * with the same key in file order). Throws `ERR_EXPORT_LAYOUT` when the first non-blank line has
 * no key column and `ERR_EXPORT_FILE_INVALID` for a line it had to parse that is not a JSON
 * object; an `AbortedError` when `signal` aborts. `onBytes` is told how far it got.
 */
export async function scanNdjsonKeys(
  path: string,
  options: { signal?: AbortSignal; onBytes?: (bytes: number) => void } = {},
): Promise<ExportKeyOrder> {
  const rows = new ScanRows();
  // Only the first row needs its layout checked; parsing lines for their keys collects nothing.
  let firstReader: NdjsonRowReader | undefined = new NdjsonRowReader(path);
  /** Records line `line`, `buf[start, end)`, unless it is blank. */
  const record = (buf: Buffer, start: number, end: number, offset: number, line: number): void => {
    if (firstReader === undefined) {
      const fast = keyFromBytes(buf, start, end);
      if (fast !== undefined) return rows.push(buf, fast.start, fast.end, offset, end - start, line);
      if (blankBytes(buf, start, end)) return;
    }
    const reader = firstReader ?? new NdjsonRowReader(path);
    const row = reader.row(buf.toString('utf8', start, end), line);
    if (row === null) return;
    firstReader = undefined;
    const key = row.profile.domain_normalized as unknown;
    // A row without a text key is refused when it is written, naming its line; any place will do.
    const bytes = Buffer.from(typeof key === 'string' ? key : '', 'utf8');
    rows.push(bytes, 0, bytes.length, offset, end - start, line);
  };

  // One buffer, read into again and again: a line cut by its end moves to its start (a stream's
  // chunks, each a new buffer, piled up outside the heap faster than the collector freed them).
  let buf = Buffer.allocUnsafe(1 << 20);
  let base = 0; // the file offset of buf[0]
  let filled = 0;
  let line = 0;
  const lineAt = (start: number, end: number): void => {
    line += 1;
    record(buf, start, end, base + start, line);
  };
  const file = await open(path, 'r');
  try {
    for (;;) {
      if (options.signal?.aborted) throw new AbortedError();
      if (filled === buf.length) {
        // One line longer than the buffer.
        const bigger = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(bigger, 0, 0, filled);
        buf = bigger;
      }
      const { bytesRead } = await file.read(buf, filled, buf.length - filled, base + filled);
      filled += bytesRead;
      let start = 0;
      for (let nl = buf.indexOf(NEWLINE); nl !== -1 && nl < filled; nl = buf.indexOf(NEWLINE, start)) {
        lineAt(start, nl);
        start = nl + 1;
      }
      if (bytesRead === 0) {
        // The last line, without a newline after it.
        if (start < filled) lineAt(start, filled);
        break;
      }
      buf.copyWithin(0, start, filled);
      base += start;
      filled -= start;
      options.onBytes?.(base);
    }
  } finally {
    await file.close();
  }

  return { path, ...rows.sorted() };
}

/**
 * A scan's rows as it finds them (this file's, and csv-order.ts's): each key's UTF-8 bytes in one
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
 * The rows of a scanned NDJSON file in key order, each line read at its offset and parsed as in
 * file order (NdjsonRowReader; `unknownColumns` collects the keys no column maps). `where` names
 * the line, as readExportRows does.
 */
export async function* readNdjsonInKeyOrder(
  order: ExportKeyOrder,
  options: { unknownColumns?: Set<string> } = {},
): AsyncGenerator<{ row: ExportRowInput; where: string }> {
  const reader = new NdjsonRowReader(order.path, { ...options, layoutChecked: true });
  const file = await open(order.path, 'r');
  try {
    let buf = Buffer.allocUnsafe(1 << 16);
    for (let i = 0; i < order.rows; i++) {
      const length = order.lengths[i]!;
      if (length > buf.length) buf = Buffer.allocUnsafe(length);
      // Read synchronously: a line is a few kilobytes, most often in the page cache, and an
      // asynchronous read per line costs more than the read.
      let got = 0;
      while (got < length) {
        const n = readSync(file.fd, buf, got, length - got, order.offsets[i]! + got);
        if (n === 0) break;
        got += n;
      }
      const line = order.lines[i]!;
      const row = reader.row(buf.toString('utf8', 0, got), line);
      if (row !== null) yield { row, where: reader.where(line) };
    }
  } finally {
    await file.close();
  }
}
