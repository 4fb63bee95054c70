import { cachedStatement } from '../database.js';
import type { Mirror } from '../database.js';
import { requiredTimestamp } from './values.js';

/*
 * What the credit allowances (`credits.maxPerDay`, `credits.maxPerMonth`) count, read from the
 * mirror every process shares: the ledger, plus every paid request whose cost is not in the
 * ledger yet. Those are the open enrichment intents (a POST about to be sent, in flight, or with a
 * lost answer), the intents closed as enriched with unknown billing, and the export intents whose
 * export has no ledger entry yet, each at its estimate. A cached answer is a 0-credit ledger entry
 * and counts nothing.
 */

/** Enrichment intent statuses whose credits are not in the ledger and may have been billed. */
const UNSETTLED_INTENTS = "('intended', 'unknown', 'enriched_unattributed')";

/** Credits committed since `since`: settled in the ledger, and still in flight or unknown. */
export interface CommittedCredits {
  /** Ledger entries at or after `since` (refunds subtract). */
  settled: number;
  /** Paid requests since `since` not yet in the ledger, at their estimate. */
  unsettled: number;
}

/** Credits committed at or after `since` (ISO 8601), for an allowance window starting then. */
export function committedCredits(mirror: Mirror, since: string): CommittedCredits {
  const at = requiredTimestamp(since, 'since');
  const row = cachedStatement(
    mirror,
    `SELECT
       (SELECT coalesce(sum(credits), 0) FROM credit_ledger WHERE at >= @at) AS settled,
       (SELECT coalesce(sum(coalesce(estimated_credits, 10)), 0) FROM enrichment_intents
         WHERE created_at >= @at AND status IN ${UNSETTLED_INTENTS}) AS enrichments,
       (SELECT coalesce(sum(coalesce(json_extract(s.cursor, '$.estimatedCredits'), 0)), 0) FROM sync_state s
         WHERE s.pipeline = 'export' AND json_valid(s.cursor)
           AND json_extract(s.cursor, '$.requestedAt') >= @at
           AND NOT EXISTS (SELECT 1 FROM credit_ledger c
                           WHERE c.entry_key = 'export:' || json_extract(s.cursor, '$.exportId'))) AS exports`,
  ).get({ at }) as { settled: number; enrichments: number; exports: number };
  return { settled: row.settled, unsettled: row.enrichments + row.exports };
}
