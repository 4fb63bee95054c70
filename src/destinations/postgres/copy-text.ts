import type { LogicalColumnType } from '../../mirror/store/snapshot.js';

/*
 * Rows in PostgreSQL's COPY text format (the `COPY … FROM STDIN` default): columns separated by
 * a tab, rows ended by a newline, NULL written `\N`, and backslash, tab, newline and carriage
 * return escaped with a backslash. Every value is written the way the mirror stores it:
 * PostgreSQL parses the ISO 8601 UTC text of a timestamp column into timestamptz and the JSON
 * text of a json column into jsonb itself, so nothing is converted on our side but booleans.
 */

const NEEDS_ESCAPE = /[\\\t\n\r]/;
const ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** One value in COPY text format. */
export function copyTextValue(value: unknown, type: LogicalColumnType): string {
  if (value === null || value === undefined) return '\\N';
  if (type === 'boolean') return value === 1n || value === 1 || value === true ? 't' : 'f';
  if (typeof value === 'string') {
    return NEEDS_ESCAPE.test(value) ? value.replace(/[\\\t\n\r]/g, (c) => ESCAPES[c]!) : value;
  }
  if (typeof value === 'bigint' || typeof value === 'number') return String(value);
  if (value instanceof Uint8Array) {
    // The mirror keeps no BLOB columns; a stray one goes as text of its bytes rather than failing.
    return copyTextValue(Buffer.from(value).toString('utf8'), type);
  }
  return copyTextValue(String(value), type);
}

/** One row (values in column order) as a COPY text line, newline included. */
export function copyTextRow(values: readonly unknown[], types: readonly LogicalColumnType[]): string {
  let line = copyTextValue(values[0], types[0]!);
  for (let i = 1; i < types.length; i++) line += `\t${copyTextValue(values[i], types[i]!)}`;
  return `${line}\n`;
}
