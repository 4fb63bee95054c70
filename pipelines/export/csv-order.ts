import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { ExportRowInput } from '../../src/mirror/store/export-load.js';
import { csvHeader, csvRecordsOf, csvWhere, mapExportRecord, unreadableCsv } from './format.js';
import type { CsvHeader } from './format.js';
import { readRow, ScanRows, scanRecords } from './key-order.js';
import type { ExportKeyOrder, ScanOptions } from './key-order.js';

/*
 * Reading a CSV export file in the order of its keys, for the reason an NDJSON file is
 * (ndjson-order.ts): rows written in key order fill each of the mirror's B-trees at one edge.
 *
 * The scan finds each record in the file's bytes: a record ends at a newline outside double
 * quotes (RFC 4180: a quote inside a quoted cell is written twice, so counting quotes tells
 * inside from outside), and its key is the cell of the key column (the header's, read by the
 * same CSV reader as in file order). The load then feeds the header and the records, in key
 * order, to that CSV reader (csv-parse), so each record is parsed and checked as in file order,
 * with the same number of cells expected; records with the same key keep the file's order.
 *
 * The scan gives up, and the file is read in its own order, where its reading of the bytes could
 * differ from the reader's: a carriage return that does not end a line, lines ending in CRLF and
 * in LF alone in the same file, a quote left open at the end of the file, or a header without a
 * key column (refused in file order, with its message).
 *
 * The reader's column count comes from the header, as in file order: a record with another
 * number of cells is refused, naming its row.
 */

const NEWLINE = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const COMMA = 0x2c;

/** The rows of a CSV file in key order, and its header. */
export interface CsvKeyOrder extends ExportKeyOrder {
  /** The header record's bytes, without a byte-order mark or its line end. */
  readonly headerBytes: Buffer;
  /** The file's line end, given to the reader after each record. */
  readonly lineEnd: '\n' | '\r\n';
  readonly header: CsvHeader;
}

/**
 * Scans a CSV export file (see the module comment): where each record is and its key, sorted by
 * key. Undefined when the file is to be read in its own order. An `AbortedError` when `signal`
 * aborts; `onBytes` is told how far it got.
 */
export async function scanCsvKeys(path: string, options: ScanOptions = {}): Promise<CsvKeyOrder | undefined> {
  let header: CsvHeader | undefined;
  try {
    for await (const record of csvRecordsOf(createReadStream(path), { to: 1 }))
      header = csvHeader(path, record);
  } catch {
    return undefined; // the read in file order refuses it, naming what is wrong
  }
  if (header === undefined) return undefined;
  const { keyColumn } = header;

  const rows = new ScanRows();
  let headerBytes: Buffer | undefined;
  let row = 0;
  let crlf: boolean | undefined;
  // Where the key cell of the record findEnd last read is.
  let keyStart = -1;
  let keyEnd = -1;
  const findEnd = (buf: Buffer, start: number, filled: number, atEnd: boolean): number => {
    let inQuotes = false;
    let cell = 0;
    keyStart = keyColumn === 0 ? start : -1;
    keyEnd = -1;
    for (let i = start; i < filled; i++) {
      const b = buf[i];
      if (b === QUOTE) inQuotes = !inQuotes;
      else if (inQuotes) continue;
      else if (b === COMMA) {
        cell += 1;
        if (cell === keyColumn) keyStart = i + 1;
        else if (cell === keyColumn + 1) keyEnd = i;
      } else if (b === NEWLINE) {
        // A line's end: CRLF or LF, the same all through the file.
        const hasCr = i > start && buf[i - 1] === CR;
        if (crlf === undefined) crlf = hasCr;
        else if (crlf !== hasCr) throw new Unorderable();
        return i;
      } else if (b === CR && i + 1 < filled && buf[i + 1] !== NEWLINE) throw new Unorderable();
    }
    if (!atEnd) return -1; // the record goes on in the next read
    // The last record, with no line end after it: a quote still open, or a carriage return the
    // reader might keep, leave the file to the reader.
    if (inQuotes || (buf[filled - 1] === CR && crlf !== true)) throw new Unorderable();
    return filled;
  };
  const onRecord = (buf: Buffer, start: number, end: number, offset: number): void => {
    if (offset === 0 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) {
      start += 3;
      offset += 3;
      if (keyColumn === 0) keyStart = start;
    }
    const contentEnd = end > start && buf[end - 1] === CR ? end - 1 : end;
    if (contentEnd === start) return; // an empty line, which the reader skips
    if (headerBytes === undefined) {
      headerBytes = Buffer.from(buf.subarray(start, contentEnd));
      return;
    }
    row += 1;
    if (keyEnd === -1) keyEnd = contentEnd;
    const key = keyStart === -1 ? Buffer.alloc(0) : cellBytes(buf, keyStart, keyEnd);
    rows.push(key, 0, key.length, offset, contentEnd - start, row);
  };
  try {
    await scanRecords(path, options, findEnd, onRecord);
  } catch (error) {
    if (error instanceof Unorderable) return undefined;
    throw error;
  }
  if (headerBytes === undefined) return undefined;
  return { path, header, headerBytes, lineEnd: crlf === true ? '\r\n' : '\n', ...rows.sorted() };
}

/** Thrown inside the scan where the file is to be read in its own order. */
class Unorderable extends Error {}

/** The text of the cell `buf[start, end)`: its quotes taken off and doubled quotes made single. */
function cellBytes(buf: Buffer, start: number, end: number): Buffer {
  if (end - start >= 2 && buf[start] === QUOTE && buf[end - 1] === QUOTE)
    return Buffer.from(buf.toString('utf8', start + 1, end - 1).replaceAll('""', '"'));
  return buf.subarray(start, end);
}

/**
 * The rows of a scanned CSV file in key order: the header, then each record read at its offset,
 * fed to the CSV reader and mapped as in file order. `where` names the row as readExportRows does.
 */
export async function* readCsvInKeyOrder(
  order: CsvKeyOrder,
  options: { unknownColumns?: Set<string> } = {},
): AsyncGenerator<{ row: ExportRowInput; where: string }> {
  const { path, header } = order;
  // The header's unknown columns, as a read in file order collects them.
  csvHeader(path, header.names, options.unknownColumns);
  const file = await open(path, 'r');
  const chunks = async function* (): AsyncGenerator<Buffer> {
    const lineEnd = Buffer.from(order.lineEnd);
    yield Buffer.concat([order.headerBytes, lineEnd]);
    let chunk = Buffer.allocUnsafe(1 << 16);
    let used = 0;
    for (let i = 0; i < order.rows; i++) {
      const length = order.lengths[i]!;
      if (used + length + lineEnd.length > chunk.length) {
        if (used > 0) yield chunk.subarray(0, used);
        chunk = Buffer.allocUnsafe(Math.max(1 << 16, length + lineEnd.length));
        used = 0;
      }
      const got = readRow(file.fd, chunk, used, length, order.offsets[i]!);
      used += got;
      used += lineEnd.copy(chunk, used);
    }
    if (used > 0) yield chunk.subarray(0, used);
  };
  let emitted = -1; // the header comes first
  try {
    for await (const record of csvRecordsOf(Readable.from(chunks(), { objectMode: false }))) {
      if (emitted++ < 0) continue;
      const where = csvWhere(path, order.lines[emitted - 1]!);
      yield { row: mapExportRecord(header.names, record, header.roles, true, where), where };
    }
  } catch (error) {
    throw unreadableCsv(path, order.lines[Math.max(emitted, 0)] ?? order.rows + 1, error);
  } finally {
    await file.close();
  }
}
