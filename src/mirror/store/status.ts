import { cachedStatement, inTransaction } from '../database.js';
import type { Mirror } from '../database.js';

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

const count = (mirror: Mirror, sqlText: string): number =>
  (cachedStatement(mirror, sqlText).get() as { n: number }).n;

/*
 * Reads of `status`. Like the dashboard's (ui-overview.ts), each count of `domains` comes from an
 * index (a whole-index count, or a range of a partial index of the few unlisted or never-profiled
 * rows), never from the rows, each of which carries the raw profile: at 1,000,000 domains the
 * reads of the rows made `status` take 4.4 s with the mirror in the page cache and 17 s without
 * (migration 0008).
 */

/** Row counts per table (active vs removed where history is kept), for `status`. */
export function mirrorCounts(mirror: Mirror): MirrorCounts {
  // One read transaction: the differences below are of counts of the same state of the mirror.
  return inTransaction(mirror, () => readCounts(mirror));
}

function readCounts(mirror: Mirror): MirrorCounts {
  const total = count(mirror, 'SELECT count(*) AS n FROM domains');
  const unlisted = count(mirror, 'SELECT count(*) AS n FROM domains WHERE unlisted_at IS NOT NULL');
  const withoutProfile = count(
    mirror,
    'SELECT count(*) AS n FROM domains INDEXED BY domains_without_profile WHERE profile_synced_at IS NULL',
  );
  const domains = { total, listed: total - unlisted, unlisted, withProfile: total - withoutProfile };
  // A whole-table count(*) counts the cells of the smallest index's pages without decoding a
  // row, several times faster than count(removed_at) over the same index; the removed rows are a
  // range of the removed_at index.
  const activeAndRemoved = (table: 'licenses' | 'payment_methods'): { active: number; removed: number } => {
    const removed = count(mirror, `SELECT count(*) AS n FROM ${table} WHERE removed_at IS NOT NULL`);
    return { active: count(mirror, `SELECT count(*) AS n FROM ${table}`) - removed, removed };
  };
  const licenses = activeAndRemoved('licenses');
  const paymentMethods = activeAndRemoved('payment_methods');
  const runs = cachedStatement(
    mirror,
    'SELECT status, count(*) AS n FROM enrichment_runs GROUP BY status ORDER BY status',
  ).all() as Array<{
    status: string;
    n: number;
  }>;
  return {
    domains,
    licenses,
    paymentMethods,
    domainSections: count(mirror, 'SELECT count(*) AS n FROM domain_sections'),
    enrichmentRuns: Object.fromEntries(runs.map((r) => [r.status, r.n])),
    exports: count(mirror, 'SELECT count(*) AS n FROM exports'),
    pipelineRuns: count(mirror, 'SELECT count(*) AS n FROM pipeline_runs'),
    creditLedgerEntries: count(mirror, 'SELECT count(*) AS n FROM credit_ledger'),
    accountSnapshots: count(mirror, 'SELECT count(*) AS n FROM account_snapshots'),
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
  const domains =
    count(mirror, 'SELECT count(*) AS n FROM domains') -
    count(mirror, 'SELECT count(*) AS n FROM domains WHERE unlisted_at IS NOT NULL');
  // Never fetched and listed: all never fetched, less the unlisted ones (read through the
  // unlisted_at index, whose rows are few where the never-fetched ones may be the whole mirror).
  const profilesNeverFetched =
    count(
      mirror,
      'SELECT count(*) AS n FROM domains INDEXED BY domains_without_profile WHERE profile_synced_at IS NULL',
    ) -
    count(
      mirror,
      `SELECT count(*) AS n FROM domains INDEXED BY domains_unlisted_at
       WHERE unlisted_at IS NOT NULL AND profile_synced_at IS NULL`,
    );
  const listedDates = `FROM domains INDEXED BY domains_last_enriched_at
     WHERE last_enriched_at IS NOT NULL AND unlisted_at IS NULL`;
  // Listed with a date: all domains, less those without a date (the start of the index) and the
  // unlisted ones with a date (their partial index).
  const enriched =
    count(mirror, 'SELECT count(*) AS n FROM domains') -
    count(
      mirror,
      'SELECT count(*) AS n FROM domains INDEXED BY domains_last_enriched_at WHERE last_enriched_at IS NULL',
    ) -
    count(
      mirror,
      `SELECT count(*) AS n FROM domains INDEXED BY domains_unlisted_by_last_enriched_at
       WHERE unlisted_at IS NOT NULL AND last_enriched_at IS NOT NULL`,
    );
  const at = (order: 'ASC' | 'DESC', offset: number): string | null =>
    (
      cachedStatement(
        mirror,
        `SELECT last_enriched_at AS v ${listedDates} ORDER BY last_enriched_at ${order} LIMIT 1 OFFSET ?`,
      ).get(offset) as { v: string } | undefined
    )?.v ?? null;
  if (enriched === 0) {
    return {
      domains,
      profilesNeverFetched,
      oldestEnrichedAt: null,
      newestEnrichedAt: null,
      medianEnrichedAt: null,
    };
  }
  return {
    domains,
    profilesNeverFetched,
    oldestEnrichedAt: at('ASC', 0),
    newestEnrichedAt: at('DESC', 0),
    // Lower median by OFFSET on the index: exact for text timestamps, no averaging.
    medianEnrichedAt: at('ASC', Math.floor((enriched - 1) / 2)),
  };
}
