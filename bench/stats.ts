/* Small helpers the benchmarks share. */

/** The median of `values` (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** `value` rounded to `digits` decimal places. */
export function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** A Markdown table of `rows` under `header`, for the notes of docs/benchmarks.md. */
export function markdownTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
  return [line(header), `|${header.map(() => '---').join('|')}|`, ...rows.map(line)].join('\n');
}

/** `n` rounded to `digits` decimals, as text; anything not a number as it is. */
export const fmt = (n: unknown, digits = 2): string =>
  typeof n === 'number' ? String(Math.round(n * 10 ** digits) / 10 ** digits) : String(n);
