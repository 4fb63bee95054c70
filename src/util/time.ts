/** A source of the current time, injectable for tests. */
export type Clock = () => number;

/** The real clock. */
export const systemClock: Clock = () => Date.now();

/** `ms` since the epoch as `YYYY-MM-DDTHH:MM:SS.sssZ`. */
export function isoFromMs(ms: number): string {
  return new Date(ms).toISOString();
}

const ISO_LIKE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:Z|z|[+-]\d{2}:?\d{2})?$/;

/**
 * Normalises an ISO 8601 timestamp with any offset spelling (`Z`, `+00:00`, `+0000`, no
 * milliseconds, more than three fraction digits) to UTC `YYYY-MM-DDTHH:MM:SS.sssZ`, so that
 * text comparison orders timestamps (PRODUCT.md, "Behaviour details").
 * Returns `null` when `value` is not a timestamp.
 */
export function normalizeTimestamp(value: string): string | null {
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
  return new Date(ms).toISOString();
}

/** Parses a timestamp to epoch ms, or `null`. */
export function timestampMs(value: string): number | null {
  const normalized = normalizeTimestamp(value);
  return normalized === null ? null : Date.parse(normalized);
}
