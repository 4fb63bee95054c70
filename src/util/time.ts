/** A source of the current time, injectable for tests. */
export type Clock = () => number;

/** The real clock. */
export const systemClock: Clock = () => Date.now();

/** `ms` since the epoch as `YYYY-MM-DDTHH:MM:SS.sssZ`. */
export function isoFromMs(ms: number): string {
  return new Date(ms).toISOString();
}

const CANONICAL_UP_TO_28TH =
  /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|1\d|2[0-8])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/;

const ISO_LIKE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:Z|z|[+-]\d{2}:?\d{2})?$/;

/**
 * Normalises an ISO 8601 timestamp with any offset spelling (`Z`, `+00:00`, `+0000`, no
 * milliseconds, more than three fraction digits) to UTC `YYYY-MM-DDTHH:MM:SS.sssZ`, so that
 * text comparison orders timestamps (PRODUCT.md, "Behaviour details").
 * Returns `null` when `value` is not a timestamp.
 */
export function normalizeTimestamp(value: string): string | null {
  // Fast path for the form the service (and this function) writes: a day of month up to 28 is
  // valid in every month, so such a value is already normalised. It skips Date parsing for most
  // timestamps of a sync, where this ran for every licence and payment method.
  if (CANONICAL_UP_TO_28TH.test(value)) return value;
  const trimmed = value.trim();
  if (!ISO_LIKE.test(trimmed)) return null;
  // Date.parse treats a date-time without offset as local time; the spec says UTC.
  const hasOffset = /(?:Z|z|[+-]\d{2}:?\d{2})$/.test(trimmed) && trimmed.length > 10;
  let text = trimmed.replace(' ', 'T');
  if (!hasOffset && text.length > 10) text += 'Z';
  // "+0000" is not accepted by every Date.parse; add the colon.
  text = text.replace(/([+-]\d{2})(\d{2})$/, '$1:$2');
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) return null;
  // Date.parse rolls an impossible day over (2026-02-29 becomes March 1st): refuse it instead.
  const year = Number(text.slice(0, 4));
  const month = Number(text.slice(5, 7));
  const day = Number(text.slice(8, 10));
  if (day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return null;
  return new Date(ms).toISOString();
}

/** Parses a timestamp to epoch ms, or `null`. */
export function timestampMs(value: string): number | null {
  const normalized = normalizeTimestamp(value);
  return normalized === null ? null : Date.parse(normalized);
}
