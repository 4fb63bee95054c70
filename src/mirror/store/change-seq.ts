import { cachedStatement } from '../database.js';
import type { Mirror } from '../database.js';

/*
 * The mirror's change sequence (migration 0005): the writers of the published tables on the
 * sync's hot path stamp every row they change with the value this returns, once per transaction.
 */

/**
 * Bumps the change counter and returns its new value, for the rows the current transaction
 * writes. Call it inside the writing transaction (`inTransaction`), before the first write: a
 * transaction that commits later then always stamps a higher value, which is what lets `publish`
 * take "every row above the last value it sent" as "every row changed since".
 */
export function nextChangeSeq(mirror: Mirror): number {
  const row = cachedStatement(
    mirror,
    'UPDATE mirror_change_seq SET value = value + 1 WHERE id = 1 RETURNING value',
  ).get() as { value: number };
  return row.value;
}

/**
 * The value {@link nextChangeSeq} would return, without taking it: for a writer that learns only
 * from its statements whether it changed a row. Stamp the rows with it, then call
 * {@link takeChangeSeq} if anything changed, in the same transaction.
 */
export function peekNextChangeSeq(mirror: Mirror): number {
  const row = cachedStatement(
    mirror,
    'SELECT value + 1 AS next FROM mirror_change_seq WHERE id = 1',
  ).get() as {
    next: number;
  };
  return row.next;
}

/** Takes `value` from {@link peekNextChangeSeq} (the counter moves to it; never backwards). */
export function takeChangeSeq(mirror: Mirror, value: number): void {
  cachedStatement(mirror, 'UPDATE mirror_change_seq SET value = ? WHERE id = 1 AND value < ?').run(
    value,
    value,
  );
}
