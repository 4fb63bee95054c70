import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { parse as parseCsvSync } from 'csv-parse/sync';
import type { ExportRowInput } from '../../src/mirror/store/export-load.js';
import { CSV_OPTIONS, csvHeader, csvRecordsOf, csvWhere, mapExportRecord, unreadableCsv } from './format.js';
import type { CsvHeader } from './format.js';
import { EventLoopTurns, readRow, ScanRows, scanRecords } from './key-order.js';
import type { ExportKeyOrder, ScanOptions } from './key-order.js';

/*
 * Reading a CSV export file in the order of its keys, for the reason an NDJSON file is
 * (ndjson-order.ts): rows written in key order fill each of the mirror's B-trees at one edge.
 *
 * The scan finds each record in the file's bytes: a record ends at a newline outside double
 * quotes (RFC 4180: a quote inside a quoted cell is written twice, so counting quotes tells
 * inside from outside), and its key is the cell of the key column (the header's, read by the
 * same CSV reader as in file order). The load then reads each record at its offset, in key
 * order, and splits it into its cells itself (splitCsvRecord): csv-parse took more than half the
 * time of reading and mapping an export's records. Only a record that is not plain RFC 4180, or
 * has another number of cells than the header, goes to csv-parse, with the header before it, so
 * that it is read or refused as in file order. Records with the same key keep the file's order.
 *
 * The scan gives up, and the file is read in its own order, where its reading of the bytes could
 * differ from the reader's: a carriage return that does not end a line, lines ending in CRLF and
 * in LF alone in the same file, a quote left open at the end of the file, or a header without a
 * key column (refused in file order, with its message).
 *
 * The column count comes from the header, as in file order: a record with another number of
 * cells is refused, naming its row.
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
 * The rows of a scanned CSV file in key order, each record read at its offset, split into its
 * cells (splitCsvRecord) and mapped as in file order. A record the splitter leaves to the CSV
 * reader goes to csv-parse with the header before it, so it is accepted or refused as in file
 * order. `where` names the row as readExportRows does.
 */
export async function* readCsvInKeyOrder(
  order: CsvKeyOrder,
  options: { unknownColumns?: Set<string> } = {},
): AsyncGenerator<{ row: ExportRowInput; where: string }> {
  const { path, header } = order;
  // The header's unknown columns, as a read in file order collects them.
  csvHeader(path, header.names, options.unknownColumns);
  const columns = header.names.length;
  const file = await open(path, 'r');
  try {
    let buf = Buffer.allocUnsafe(1 << 16);
    const turns = new EventLoopTurns();
    for (let i = 0; i < order.rows; i++) {
      const length = order.lengths[i]!;
      if (length > buf.length) buf = Buffer.allocUnsafe(length);
      const got = readRow(file.fd, buf, 0, length, order.offsets[i]!);
      if (turns.due(got)) await nextTurn();
      const row = order.lines[i]!;
      const text = buf.toString('utf8', 0, got);
      const cells = splitCsvRecord(text, columns) ?? parseIrregular(order, text, row);
      const where = csvWhere(path, row);
      yield { row: mapExportRecord(header.names, cells, header.roles, true, where), where };
    }
  } finally {
    await file.close();
  }
}

const QUOTE_CODE = 0x22;
const COMMA_CODE = 0x2c;

/**
 * The cells of one CSV record (`text`, its line end taken off) as RFC 4180 reads them: a cell in
 * double quotes holds anything, a quote in it written twice; any other cell holds no quote and no
 * line break. Undefined for a record that is not so, or has other than `columns` cells: the CSV
 * reader judges it (parseIrregular), so that such a record is read, or refused, as in file order.
 */
export function splitCsvRecord(text: string, columns: number): string[] | undefined {
  const cells: string[] = [];
  const end = text.length;
  let pos = 0;
  for (;;) {
    if (text.charCodeAt(pos) === QUOTE_CODE) {
      const start = pos + 1;
      let doubled = false;
      let q = text.indexOf('"', start);
      while (q !== -1 && text.charCodeAt(q + 1) === QUOTE_CODE) {
        doubled = true;
        q = text.indexOf('"', q + 2);
      }
      if (q === -1) return undefined;
      const cell = text.slice(start, q);
      cells.push(doubled ? cell.replaceAll('""', '"') : cell);
      pos = q + 1;
      if (pos === end) break;
      if (text.charCodeAt(pos) !== COMMA_CODE) return undefined;
      pos += 1;
    } else {
      const comma = text.indexOf(',', pos);
      const cell = text.slice(pos, comma === -1 ? end : comma);
      if (cell.includes('"') || cell.includes('\n') || cell.includes('\r')) return undefined;
      cells.push(cell);
      if (comma === -1) break;
      pos = comma + 1;
    }
  }
  return cells.length === columns ? cells : undefined;
}

/**
 * The cells of a record splitCsvRecord left to the CSV reader: csv-parse reads the header and the
 * record, with the options of a read in file order, and its refusal names the record's row.
 */
function parseIrregular(order: CsvKeyOrder, text: string, row: number): string[] {
  let records: string[][];
  try {
    records = parseCsvSync(`${order.headerBytes.toString('utf8')}${order.lineEnd}${text}`, CSV_OPTIONS);
  } catch (error) {
    // Its line number counts the two lines it was given, not the file's.
    if (error instanceof Error) error.message = error.message.replace(/ (at|on) line \d+/g, '');
    throw unreadableCsv(order.path, row, error);
  }
  if (records.length !== 2) throw unreadableCsv(order.path, row, new Error('not one record'));
  return records[1]!;
}
