import { cachedStatement } from '../database.js';
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

/** Row counts per table (active vs removed where history is kept), for `status`. */
export function mirrorCounts(mirror: Mirror): MirrorCounts {
  const domains = cachedStatement(
    mirror,
    `SELECT count(*) AS total, count(*) - count(unlisted_at) AS listed, count(unlisted_at) AS unlisted,
            count(profile_synced_at) AS withProfile FROM domains`,
  ).get() as MirrorCounts['domains'];
  const licenses = cachedStatement(
    mirror,
    'SELECT count(*) - count(removed_at) AS active, count(removed_at) AS removed FROM licenses',
  ).get() as MirrorCounts['licenses'];
  const paymentMethods = cachedStatement(
    mirror,
    'SELECT count(*) - count(removed_at) AS active, count(removed_at) AS removed FROM payment_methods',
  ).get() as MirrorCounts['paymentMethods'];
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

/** How fresh the mirror's profiles are, for `status`. Only listed domains count. */
export function freshness(mirror: Mirror): MirrorFreshness {
  const row = cachedStatement(
    mirror,
    `SELECT count(*) AS domains, count(*) - count(profile_synced_at) AS profilesNeverFetched,
            min(last_enriched_at) AS oldestEnrichedAt, max(last_enriched_at) AS newestEnrichedAt,
            count(last_enriched_at) AS enriched
     FROM domains WHERE unlisted_at IS NULL`,
  ).get() as Omit<MirrorFreshness, 'medianEnrichedAt'> & { enriched: number };
  // Lower median by OFFSET on the indexed column: exact for text timestamps, no averaging.
  const median =
    row.enriched === 0
      ? undefined
      : (cachedStatement(
          mirror,
          `SELECT last_enriched_at AS v FROM domains WHERE unlisted_at IS NULL AND last_enriched_at IS NOT NULL
           ORDER BY last_enriched_at LIMIT 1 OFFSET ?`,
        ).get(Math.floor((row.enriched - 1) / 2)) as { v: string } | undefined);
  return {
    domains: row.domains,
    profilesNeverFetched: row.profilesNeverFetched,
    oldestEnrichedAt: row.oldestEnrichedAt,
    newestEnrichedAt: row.newestEnrichedAt,
    medianEnrichedAt: median?.v ?? null,
  };
}
