/**
 * How much of each resilience suite to run. `npm test` runs a fast slice of every suite;
 * `npm run test:resilience` sets RESILIENCE_FULL=1 and runs the full matrix.
 */
export const FULL = process.env.RESILIENCE_FULL === '1';

/** `full` under `npm run test:resilience`, `fast` under `npm test`. */
export function scale(fast: number, full: number): number {
  return FULL ? full : fast;
}
