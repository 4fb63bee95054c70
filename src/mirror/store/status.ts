import { cachedStatement, countOf, indexedBy, inTransaction } from '../database.js';
import type { Mirror } from '../database.js';
import { domainCounts, listedWithoutEnrichedAt, overviewCounts } from './ui-overview.js';

/** Result of {@link mirrorCounts}. */
export interface MirrorCounts {
  domains: { total: number; listed: number; unlisted: number; withProfile: number };
  licenses: { active: number; removed: number };
  paymentMethods: { active: number; removed: number };
  domainSections: number;
  /** Runs by status (any status string the service used). */
  enrichmentRuns: Record<string, number>;
  exports: number;
  pipelineRuns: number;
  creditLedgerEntries: number;
  accountSnapshots: number;
}

/*
 * Reads of `status`. Each count of `domains` comes from an index, as the dashboard's do (and
 * through the same functions of ui-overview.ts), never from the rows, each of which carries the
 * raw profile: at 1,000,000 domains the reads of the rows made `status` take 4.4 s with the
 * mirror in the page cache and 17 s without (migration 0008).
 */

/** Row counts per table (active vs removed where history is kept), for `status`. */
export function mirrorCounts(mirror: Mirror): MirrorCounts {
  // One read transaction: the differences below are of counts of the same state of the mirror.
  return inTransaction(mirror, () => readCounts(mirror));
}

function readCounts(mirror: Mirror): MirrorCounts {
  // Whole-table count(*)s, which count an index's cells without decoding them: about ten times
  // faster than count(removed_at) over the removed_at index (13 against 136 ms over 4,500,000
  // payment methods, page cache warm); the removed rows are a range of that index.
  const counts = overviewCounts(mirror);
  const { total, unlisted, withoutProfile } = counts.domains;
  const activeAndRemoved = ({ total, removed }: { total: number; removed: number }) => ({
    active: total - removed,
    removed,
  });
  const runs = cachedStatement(
    mirror,
    'SELECT status, count(*) AS n FROM enrichment_runs GROUP BY status ORDER BY status',
  ).all() as Array<{
    status: string;
    n: number;
  }>;
  return {
    domains: { total, listed: total - unlisted, unlisted, withProfile: total - withoutProfile },
    licenses: activeAndRemoved(counts.licences),
    paymentMethods: activeAndRemoved(counts.paymentMethods),
    domainSections: countOf(mirror, 'SELECT count(*) AS n FROM domain_sections'),
    enrichmentRuns: Object.fromEntries(runs.map((r) => [r.status, r.n])),
    exports: countOf(mirror, 'SELECT count(*) AS n FROM exports'),
    pipelineRuns: countOf(mirror, 'SELECT count(*) AS n FROM pipeline_runs'),
    creditLedgerEntries: countOf(mirror, 'SELECT count(*) AS n FROM credit_ledger'),
    accountSnapshots: countOf(mirror, 'SELECT count(*) AS n FROM account_snapshots'),
  };
}

/** Result of {@link freshness}. */
export interface MirrorFreshness {
  /** Listed (not unlisted) domains. */
  domains: number;
  /** Listed domains whose profile was never fetched. */
  profilesNeverFetched: number;
  /** Oldest / newest / median profile `last_enriched_at` of listed domains; null when none. */
  oldestEnrichedAt: string | null;
  newestEnrichedAt: string | null;
  medianEnrichedAt: string | null;
}

/**
 * How fresh the mirror's profiles are, for `status`. Only listed domains count. Each figure comes
 * from an index: `domains_last_enriched_at` is (last_enriched_at, unlisted_at), so the listed
 * domains' dates are read from it alone, in order.
 */
export function freshness(mirror: Mirror): MirrorFreshness {
  return inTransaction(mirror, () => readFreshness(mirror));
}

function readFreshness(mirror: Mirror): MirrorFreshness {
  const { total, unlisted, withoutProfile } = domainCounts(mirror);
  const domains = total - unlisted;
  // Never fetched and listed: all never fetched, less the unlisted ones (read through the
  // unlisted_at index, whose rows are few where the never-fetched ones may be the whole mirror).
  const profilesNeverFetched =
    withoutProfile -
    countOf(
      mirror,
      `SELECT count(*) AS n FROM domains ${indexedBy(mirror, 'domains_unlisted_at')}
       WHERE unlisted_at IS NOT NULL AND profile_synced_at IS NULL`,
    );
  const enriched = domains - listedWithoutEnrichedAt(mirror);
  const at = (order: 'ASC' | 'DESC', offset: number): string | null =>
    (
      cachedStatement(
        mirror,
        `SELECT last_enriched_at AS v FROM domains ${indexedBy(mirror, 'domains_last_enriched_at')}
         WHERE last_enriched_at IS NOT NULL AND unlisted_at IS NULL
         ORDER BY last_enriched_at ${order} LIMIT 1 OFFSET ?`,
      ).get(offset) as { v: string } | undefined
    )?.v ?? null;
  // Each is null when no listed domain has a date.
  return {
    domains,
    profilesNeverFetched,
    oldestEnrichedAt: at('ASC', 0),
    newestEnrichedAt: at('DESC', 0),
    // Lower median by OFFSET on the index: exact for text timestamps, no averaging.
    medianEnrichedAt: at('ASC', Math.max(0, Math.floor((enriched - 1) / 2))),
  };
}
