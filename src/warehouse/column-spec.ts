import type { SchemaElement } from 'hyparquet-writer';
import { normalizeTimestamp } from '../util/time.js';
import { SnapshotSchemaError } from './errors.js';

/** Column types a snapshot can hold; each maps to one Parquet physical + logical type. */
export type ColumnType = 'text' | 'integer' | 'real' | 'timestamp' | 'boolean' | 'json';

/** All {@link ColumnType} values, for validation and docs. */
export const COLUMN_TYPES: readonly ColumnType[] = [
  'text',
  'integer',
  'real',
  'timestamp',
  'boolean',
  'json',
];

/**
 * One column of a Parquet file: its name (kept exactly, snake_case like the mirror) and type.
 *
 * What each type accepts and becomes (and what DuckDB reports when reading it back):
 *
 * | type | accepted JS input | Parquet | DuckDB |
 * |---|---|---|---|
 * | `text` | string | BYTE_ARRAY, STRING (UTF8) | VARCHAR |
 * | `json` | string or UTF-8 bytes (`Uint8Array`, kept as is) or any other value (`JSON.stringify`) | BYTE_ARRAY, STRING (UTF8) | VARCHAR |
 * | `integer` | safe-integer number or bigint in int64 range | INT64 | BIGINT |
 * | `real` | number, or bigint (converted to number) | DOUBLE | DOUBLE |
 * | `boolean` | true/false, 0/1, 0n/1n | BOOLEAN | BOOLEAN |
 * | `timestamp` | ISO 8601 text (`YYYY-MM-DDTHH:MM:SS.sssZ`; other offsets are normalised to UTC) or a `Date` | INT64, TIMESTAMP(isAdjustedToUTC=true, MICROS by default) | TIMESTAMP WITH TIME ZONE |
 *
 * `null` and `undefined` are written as Parquet nulls when the column is nullable.
 */
export interface ColumnSpec {
  /** Column name as it appears in the file. */
  name: string;
  /** Column type; see the table above. */
  type: ColumnType;
  /**
   * Whether the column may hold nulls (Parquet `OPTIONAL`); a null in a non-nullable
   * (`REQUIRED`) column is an `ERR_SNAPSHOT_VALUE` error.
   * @default true
   */
  nullable?: boolean;
}

/** Resolution of `timestamp` columns in the file. */
export type TimestampUnit = 'MILLIS' | 'MICROS';

/** Returned by a converter when a value does not fit its column type. */
export const INVALID: unique symbol = Symbol('invalid');

/**
 * Converts one input value to what hyparquet-writer expects for the column's physical type,
 * or returns {@link INVALID}. `null` means a Parquet null.
 */
export type ValueConverter = (value: unknown) => unknown;

/** A column ready for writing: its spec, Parquet schema element, converter and error hint. */
export interface PreparedColumn {
  spec: ColumnSpec;
  nullable: boolean;
  element: SchemaElement;
  convert: ValueConverter;
  /** What the converter accepts, for error messages ("an ISO 8601 timestamp"). */
  expected: string;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * Validates `columns` and builds the Parquet schema plus one converter per column.
 *
 * Throws {@link SnapshotSchemaError} for an empty list, a duplicated or empty name, or an
 * unknown type, before anything is written.
 */
export function prepareColumns(
  columns: readonly ColumnSpec[],
  table: string,
  timestampUnit: TimestampUnit = 'MICROS',
): { schema: SchemaElement[]; prepared: PreparedColumn[] } {
  if (columns.length === 0) throw new SnapshotSchemaError('at least one column is required', table);
  const seen = new Set<string>();
  const prepared = columns.map((spec): PreparedColumn => {
    if (typeof spec.name !== 'string' || spec.name === '') {
      throw new SnapshotSchemaError('a column has an empty name', table);
    }
    if (seen.has(spec.name)) throw new SnapshotSchemaError(`column "${spec.name}" is listed twice`, table);
    seen.add(spec.name);
    if (!COLUMN_TYPES.includes(spec.type)) {
      throw new SnapshotSchemaError(
        `column "${spec.name}" has unknown type "${String(spec.type)}" (expected one of ${COLUMN_TYPES.join(', ')})`,
        table,
      );
    }
    const nullable = spec.nullable ?? true;
    const repetition_type = nullable ? 'OPTIONAL' : 'REQUIRED';
    const base = { name: spec.name, repetition_type } as const;
    switch (spec.type) {
      case 'text':
        return {
          spec,
          nullable,
          element: { ...base, type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' } },
          convert: convertText,
          expected: 'a string',
        };
      // One case per column kind: the cases share their shape (spec, nullability, Parquet element,
      // converter, description) by design.
      case 'json':
        // JSON goes in as a plain STRING rather than the JSON logical type: every reader
        // (pandas, polars, Spark, DuckDB without its json extension) then sees ordinary text.
        return {
          spec,
          nullable,
          element: { ...base, type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' } },
          convert: convertJson,
          expected: 'a JSON string or a JSON-serialisable value',
        };
      case 'integer':
        return {
          spec,
          nullable,
          element: { ...base, type: 'INT64' },
          convert: convertInteger,
          expected: 'a safe integer number or a bigint in the int64 range',
        };
      case 'real':
        return {
          spec,
          nullable,
          element: { ...base, type: 'DOUBLE' },
          convert: convertReal,
          expected: 'a number',
        };
      case 'boolean':
        return {
          spec,
          nullable,
          element: { ...base, type: 'BOOLEAN' },
          convert: convertBoolean,
          expected: 'true/false or 0/1',
        };
      case 'timestamp':
        return {
          spec,
          nullable,
          // The legacy converted_type is set next to the logical type because readers that
          // predate logical types (old Spark, old pyarrow) only understand converted types,
          // and TIMESTAMP_MILLIS/MICROS are by definition UTC-adjusted, so both agree.
          element: {
            ...base,
            type: 'INT64',
            converted_type: timestampUnit === 'MILLIS' ? 'TIMESTAMP_MILLIS' : 'TIMESTAMP_MICROS',
            logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: timestampUnit },
          },
          convert: timestampUnit === 'MILLIS' ? convertTimestampMillis : convertTimestampMicros,
          expected: 'an ISO 8601 timestamp like 2024-01-31T12:00:00.000Z',
        };
    }
  });
  const schema: SchemaElement[] = [
    { name: 'root', num_children: prepared.length },
    ...prepared.map((column) => column.element),
  ];
  return { schema, prepared };
}

function convertText(value: unknown): unknown {
  return typeof value === 'string' ? value : INVALID;
}

function convertJson(value: unknown): unknown {
  if (typeof value === 'string') return value;
  // The UTF-8 bytes of the JSON text (SQLite's own bytes, read as a BLOB): written as they are,
  // with no decoding into a JS string and no encoding back.
  if (value instanceof Uint8Array) return value;
  try {
    const text = JSON.stringify(value, (_key, inner: unknown) =>
      typeof inner === 'bigint' ? inner.toString() : inner,
    );
    return typeof text === 'string' ? text : INVALID;
  } catch {
    return INVALID;
  }
}

function convertInteger(value: unknown): unknown {
  if (typeof value === 'bigint') return value >= INT64_MIN && value <= INT64_MAX ? value : INVALID;
  // A number above 2^53 has already lost precision before it reached us, so refuse it rather
  // than write a silently wrong value; callers with big integers pass bigint.
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  return INVALID;
}

function convertReal(value: unknown): unknown {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  return INVALID;
}

function convertBoolean(value: unknown): unknown {
  // SQLite has no boolean type; the mirror stores 0/1 (as bigint under safeIntegers).
  if (value === true || value === 1 || value === 1n) return true;
  if (value === false || value === 0 || value === 0n) return false;
  return INVALID;
}

const CANONICAL_ISO = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?Z$/;
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Epoch microseconds of a timestamp as a number, or `null` when it is not one.
 *
 * The mirror stores `YYYY-MM-DDTHH:MM:SS.sssZ`, so that spelling has a fast path (no Date
 * object, no string rebuilding; it runs once per timestamp cell, millions of times per
 * snapshot). Anything else goes through the shared normaliser, which accepts other ISO 8601
 * offset spellings at millisecond precision.
 */
export function timestampMicros(value: unknown): number | null {
  if (value instanceof Date) {
    const ms = value.getTime();
    return Number.isNaN(ms) ? null : ms * 1000;
  }
  if (typeof value !== 'string') return null;
  if (value.length === 24) {
    const fast = canonicalMillisMicros(value);
    if (fast !== null) return fast;
  }
  const m = CANONICAL_ISO.exec(value);
  if (m !== null) {
    const year = Number(m[1]);
    const month = Number(m[2]);
    const day = Number(m[3]);
    const hour = Number(m[4]);
    const minute = Number(m[5]);
    const second = Number(m[6]);
    // Date.UTC silently rolls 2024-02-30 over into March; reject impossible fields instead.
    // Years below 100 are mapped to 19xx by Date.UTC, so they take the slow path.
    const leapOk = month !== 2 || day < 29 || (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0));
    if (
      year >= 100 &&
      month >= 1 &&
      month <= 12 &&
      day >= 1 &&
      day <= (DAYS_IN_MONTH[month - 1] ?? 0) &&
      leapOk &&
      hour < 24 &&
      minute < 60 &&
      second < 60
    ) {
      const fraction = m[7] === undefined ? 0 : Number(m[7].padEnd(6, '0'));
      return Date.UTC(year, month - 1, day, hour, minute, second) * 1000 + fraction;
    }
    if (year >= 100) return null;
  }
  const normalized = normalizeTimestamp(value);
  if (normalized === null) return null;
  // normalizeTimestamp accepts a bare date; a snapshot timestamp column wants a date-time.
  if (!/T/.test(value) && !/ /.test(value.trim())) return null;
  return Date.parse(normalized) * 1000;
}

/** `'0'`…`'9'` of `text` at `at`, or -1. */
function digit(text: string, at: number): number {
  const d = text.charCodeAt(at) - 48;
  return d >= 0 && d <= 9 ? d : -1;
}

/**
 * The two digits of `text` at `at` as a number, or -1. A module function, not a closure made per
 * value: V8 compiled such a closure anew 18 times in one snapshot.
 */
function twoDigits(text: string, at: number): number {
  const a = digit(text, at);
  const b = digit(text, at + 1);
  return a < 0 || b < 0 ? -1 : a * 10 + b;
}

/**
 * The mirror's own spelling, `YYYY-MM-DDTHH:MM:SS.sssZ` (24 characters, year ≥ 1000), read
 * with character codes: no regular expression, no substring, no Date. Returns `null` for anything
 * else (other spellings, impossible fields), which then takes the general path.
 */
function canonicalMillisMicros(v: string): number | null {
  if (
    v.charCodeAt(4) !== 45 || // -
    v.charCodeAt(7) !== 45 ||
    v.charCodeAt(10) !== 84 || // T
    v.charCodeAt(13) !== 58 || // :
    v.charCodeAt(16) !== 58 ||
    v.charCodeAt(19) !== 46 || // .
    v.charCodeAt(23) !== 90 // Z
  ) {
    return null;
  }
  const century = twoDigits(v, 0);
  const yearOfCentury = twoDigits(v, 2);
  const month = twoDigits(v, 5);
  const day = twoDigits(v, 8);
  const hour = twoDigits(v, 11);
  const minute = twoDigits(v, 14);
  const second = twoDigits(v, 17);
  const m0 = digit(v, 20);
  const m1 = digit(v, 21);
  const m2 = digit(v, 22);
  if ((century | yearOfCentury | month | day | hour | minute | second | m0 | m1 | m2) < 0) return null;
  const year = century * 100 + yearOfCentury;
  if (year < 1000) return null;
  const leapOk = month !== 2 || day < 29 || (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0));
  if (
    month < 1 ||
    month > 12 ||
    day < 1 ||
    day > (DAYS_IN_MONTH[month - 1] ?? 0) ||
    !leapOk ||
    hour > 23 ||
    minute > 59 ||
    second > 59
  ) {
    return null;
  }
  return Date.UTC(year, month - 1, day, hour, minute, second, m0 * 100 + m1 * 10 + m2) * 1000;
}

// Timestamps stay numbers (safe integers) while a row group is buffered: hyparquet-writer turns
// an INT64 TIMESTAMP column's numbers into bigints itself when it encodes the column, so the
// bigints live for one column write instead of being promoted with the buffered group (less GC),
// and the bytes are the same as with bigints.
function convertTimestampMicros(value: unknown): unknown {
  const micros = timestampMicros(value);
  return micros === null || !Number.isSafeInteger(micros) ? INVALID : micros;
}

function convertTimestampMillis(value: unknown): unknown {
  const micros = timestampMicros(value);
  return micros === null || !Number.isSafeInteger(micros) ? INVALID : BigInt(Math.floor(micros / 1000));
}

/** A short, safe rendering of a rejected value for error messages. */
export function previewValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (typeof value === 'bigint') return `${value}n`;
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'object') return Object.prototype.toString.call(value);
  return String(value);
}
