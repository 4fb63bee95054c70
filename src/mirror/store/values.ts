import { createHash } from 'node:crypto';
import { normalizeTimestamp } from '../../util/time.js';
import { DomainSyncError } from '../../util/domain-sync-error.js';

/*
 * Wire value → column value conversions shared by the stores. Every conversion that can fail
 * throws `ERR_MIRROR_INPUT` naming the field, and the stores convert a whole batch before they
 * open a transaction, so bad input never leaves a half-written mirror (docs/contract.md "Promises").
 */

/** Thrown for input the mirror cannot store; `field` names where it was. */
export class MirrorInputError extends DomainSyncError {
  /** Path of the bad field, e.g. `profiles[2] (example.com).licenses[0].first_seen_at`. */
  readonly field: string;
  constructor(field: string, message: string) {
    super('ERR_MIRROR_INPUT', `${field}: ${message}`);
    this.field = field;
  }
}

/** A timestamp normalised to `YYYY-MM-DDTHH:MM:SS.sssZ`; `null`/`undefined` → `null`. */
export function timestampColumn(value: unknown, field: string): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string')
    throw new MirrorInputError(field, `expected a timestamp string, got ${typeof value}`);
  const normalized = normalizeTimestamp(value);
  if (normalized === null)
    throw new MirrorInputError(field, `invalid timestamp ${JSON.stringify(value.slice(0, 64))}`);
  return normalized;
}

/** Like {@link timestampColumn} but the value must be present. */
export function requiredTimestamp(value: unknown, field: string): string {
  const normalized = timestampColumn(value, field);
  if (normalized === null) throw new MirrorInputError(field, 'timestamp is required');
  return normalized;
}

/**
 * An object whose fields go into columns (a profile's `operator`, `brand`, `meta`, a licence):
 * `null`/`undefined` → `{}`; anything else must be an object that is not an array.
 */
export function objectOrEmpty(value: unknown, field: string): Record<string, unknown> {
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value))
    throw new MirrorInputError(field, 'expected an object');
  return value as Record<string, unknown>;
}

/** A string column; `null`/`undefined` → `null`; anything else must be a string. */
export function textColumn(value: unknown, field: string): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string') throw new MirrorInputError(field, `expected a string, got ${typeof value}`);
  return value;
}

/** A non-empty string (a key column). */
export function keyColumn(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new MirrorInputError(
      field,
      `expected a non-empty string, got ${JSON.stringify(value) ?? typeof value}`,
    );
  }
  return value;
}

/** An integer column; bigints are kept (exact above 2^53); `null`/`undefined` → `null`. */
export function integerColumn(value: unknown, field: string): number | bigint | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  throw new MirrorInputError(field, `expected an integer, got ${JSON.stringify(value) ?? typeof value}`);
}

/** Like {@link integerColumn} but required. */
export function requiredInteger(value: unknown, field: string): number | bigint {
  const result = integerColumn(value, field);
  if (result === null) throw new MirrorInputError(field, 'integer is required');
  return result;
}

/** A boolean as 0/1; `null`/`undefined` → `null`. */
export function booleanColumn(value: unknown, field: string): 0 | 1 | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'boolean')
    throw new MirrorInputError(field, `expected a boolean, got ${typeof value}`);
  return value ? 1 : 0;
}

/** JSON text of any value (bigints as numbers); `undefined` → `null`. */
export function jsonColumn(value: unknown): string | null {
  if (value === undefined) return null;
  try {
    // The plain call is several times faster than one with a replacer; bigints are rare.
    return JSON.stringify(value);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? bigintToJson(v) : v));
  }
}

function bigintToJson(v: bigint): number | string {
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER)
    ? Number(v)
    : v.toString();
}

/**
 * JSON with object keys sorted recursively: the same data gives the same text whatever order the
 * service (or a config file) wrote its keys in. Used for hashes and scope keys.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)) ?? 'null';
}

function sortKeys(value: unknown): unknown {
  if (typeof value === 'bigint') return bigintToJson(value);
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortKeys(v);
    }
    return out;
  }
  return value;
}

/** sha256 hex of {@link canonicalJson}. */
export function hashJson(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

/**
 * The order the store writes a batch in (by domain key): the tables and most indexes are keyed by
 * domain, so a sorted batch walks each B-tree once instead of jumping between its pages.
 */
export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * {@link compareKeys} for `sort` on items carrying their key as `key`. The comparators are module
 * functions, not callbacks made per batch, which V8 compiled anew between batches
 * (child-history.ts).
 */
export function compareByKey(a: { key: string }, b: { key: string }): number {
  return compareKeys(a.key, b.key);
}

/** {@link compareKeys} for `sort` on rows carrying their key as `domain_normalized`. */
export function compareByDomain(a: { domain_normalized: string }, b: { domain_normalized: string }): number {
  return compareKeys(a.domain_normalized, b.domain_normalized);
}
