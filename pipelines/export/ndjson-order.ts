import { open } from 'node:fs/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { ExportRowInput } from '../../src/mirror/store/export-load.js';
import { DOMAIN_KEY_COLUMNS, NdjsonRowReader } from './format.js';
import { EventLoopTurns, readRow, ScanRows, scanRecords } from './key-order.js';
import type { ExportKeyOrder, ScanOptions } from './key-order.js';

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
export async function scanNdjsonKeys(path: string, options: ScanOptions = {}): Promise<ExportKeyOrder> {
  const rows = new ScanRows();
  // Parses the lines whose key is not read from their bytes. The first non-blank line always is, so
  // that this reader checks the file's layout on it, as a read in file order does.
  const reader = new NdjsonRowReader(path);
  let layoutChecked = false;
  /** Records line `line`, `buf[start, end)`, unless it is blank. */
  const record = (buf: Buffer, start: number, end: number, offset: number, line: number): void => {
    if (layoutChecked) {
      const fast = keyFromBytes(buf, start, end);
      if (fast !== undefined) return rows.push(buf, fast.start, fast.end, offset, end - start, line);
      if (blankBytes(buf, start, end)) return;
    }
    const row = reader.row(buf.toString('utf8', start, end), line);
    if (row === null) return;
    layoutChecked = true;
    const key = row.profile.domain_normalized as unknown;
    // A row without a text key is refused when it is written, naming its line; any place will do.
    const bytes = Buffer.from(typeof key === 'string' ? key : '', 'utf8');
    rows.push(bytes, 0, bytes.length, offset, end - start, line);
  };

  let line = 0;
  await scanRecords(
    path,
    options,
    (buf, start, filled, atEnd) => {
      const nl = buf.indexOf(NEWLINE, start);
      // The last line may have no newline after it.
      return nl !== -1 && nl < filled ? nl : atEnd ? filled : -1;
    },
    (buf, start, end, offset) => record(buf, start, end, offset, ++line),
  );
  return { path, ...rows.sorted() };
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
    const turns = new EventLoopTurns();
    for (let i = 0; i < order.rows; i++) {
      const length = order.lengths[i]!;
      if (length > buf.length) buf = Buffer.allocUnsafe(length);
      const got = readRow(file.fd, buf, 0, length, order.offsets[i]!);
      if (turns.due(got)) await nextTurn();
      const line = order.lines[i]!;
      const row = reader.row(buf.toString('utf8', 0, got), line);
      if (row !== null) yield { row, where: reader.where(line) };
    }
  } finally {
    await file.close();
  }
}
