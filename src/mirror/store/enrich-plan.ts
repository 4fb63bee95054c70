import { cachedStatement } from '../database.js';
import type { Mirror } from '../database.js';
import { requiredTimestamp, timestampColumn } from './values.js';

/*
 * The read-only queries of the `enrich` planner: which domains are stale, which failed lately,
 * and which must not be POSTed for now. What an enrichment writes (intents, runs, their ledger
 * entries) is in `enrichment.ts`.
 */

/** Options of {@link selectStaleDomains}. */
export interface SelectStaleDomainsOptions {
  /** Domains last enriched before this time (or never) are stale. Omit to ignore freshness (`--domain`). */
  staleBeforeIso?: string;
  /** At most this many. */
  limit: number;
  /** Only these domains (`domain_normalized`). @default all */
  domains?: readonly string[];
  /** Only domains with an active (not removed) licence in this jurisdiction. @default any */
  jurisdiction?: string;
  /** Only domains with an active payment method of this category. @default any */
  paymentCategory?: string;
  /** Include domains the service no longer lists. @default false */
  includeUnlisted?: boolean;
  /** Leave out domains with a pending run or an open intent, so nothing is paid twice. @default true */
  excludeInFlight?: boolean;
}

/** A row of {@link selectStaleDomains}. */
export interface StaleDomain {
  domain_normalized: string;
  domain: string | null;
  /** Profile's `last_enriched_at`, else the listing's; null when never enriched. */
  last_enriched_at: string | null;
}

/**
 * Picks enrichment candidates, oldest first (never-enriched first), up to `limit`. Freshness is
 * the profile's `last_enriched_at`, falling back to the listing's for domains whose profile was
 * not fetched. Read-only.
 */
export function selectStaleDomains(mirror: Mirror, options: SelectStaleDomainsOptions): StaleDomain[] {
  const staleBefore = timestampColumn(options.staleBeforeIso, 'staleBeforeIso');
  const clauses: string[] = [];
  const params: Record<string, unknown> = { limit: Math.max(0, Math.trunc(options.limit)) };
  if (staleBefore !== null) {
    clauses.push('(e.enriched_at IS NULL OR e.enriched_at < @staleBefore)');
    params.staleBefore = staleBefore;
  }
  if (options.domains !== undefined) {
    clauses.push('e.domain_normalized IN (SELECT value FROM json_each(@domains))');
    params.domains = JSON.stringify(options.domains);
  }
  if (options.jurisdiction !== undefined) {
    clauses.push(`EXISTS (SELECT 1 FROM licenses l WHERE l.domain_normalized = e.domain_normalized
                  AND l.jurisdiction = @jurisdiction AND l.removed_at IS NULL)`);
    params.jurisdiction = options.jurisdiction;
  }
  if (options.paymentCategory !== undefined) {
    clauses.push(`EXISTS (SELECT 1 FROM payment_methods p WHERE p.domain_normalized = e.domain_normalized
                  AND p.category = @paymentCategory AND p.removed_at IS NULL)`);
    params.paymentCategory = options.paymentCategory;
  }
  if (options.includeUnlisted !== true) clauses.push('e.unlisted_at IS NULL');
  if (options.excludeInFlight !== false) {
    clauses.push(`NOT EXISTS (SELECT 1 FROM enrichment_runs r WHERE r.status NOT IN ('completed', 'failed')
                  AND (r.domain = e.domain_normalized OR r.domain = e.domain))`);
    clauses.push(`NOT EXISTS (SELECT 1 FROM enrichment_intents i WHERE i.status IN ('intended', 'unknown')
                  AND (i.domain = e.domain_normalized OR i.domain = e.domain))`);
  }
  const sqlText = `
    SELECT e.domain_normalized, e.domain, e.enriched_at AS last_enriched_at
    FROM (SELECT domain_normalized, domain, unlisted_at,
                 coalesce(last_enriched_at, listing_last_enriched_at) AS enriched_at FROM domains) e
    ${clauses.length ? `WHERE ${clauses.join(' AND ')}` : ''}
    ORDER BY e.enriched_at IS NOT NULL, e.enriched_at, e.domain_normalized
    LIMIT @limit`;
  // A handful of distinct shapes (one per filter combination), so caching by text stays small.
  return cachedStatement(mirror, sqlText).all(params) as StaleDomain[];
}

/** A domain whose last enrichment run failed, with when we saw it fail (our clock). */
export interface RecentEnrichmentFailure {
  domain: string;
  failedAt: string;
}

/**
 * Domains whose most recent run is `failed` and was seen failing at or after `sinceIso`
 * (`mirror_updated_at`, our clock, so the service's clock skew does not matter). A later
 * successful run of the same domain hides an earlier failure.
 */
export function listRecentEnrichmentFailures(
  mirror: Mirror,
  options: { sinceIso: string },
): RecentEnrichmentFailure[] {
  const since = requiredTimestamp(options.sinceIso, 'sinceIso');
  return cachedStatement(
    mirror,
    `SELECT r.domain AS domain, r.mirror_updated_at AS failedAt FROM enrichment_runs r
     WHERE r.status = 'failed' AND r.domain IS NOT NULL AND r.mirror_updated_at >= ?
       AND r.id = (SELECT max(x.id) FROM enrichment_runs x WHERE x.domain = r.domain)`,
  ).all(since) as RecentEnrichmentFailure[];
}

/**
 * Domains that must not be POSTed for now: a run not yet settled, an intent whose outcome is not
 * known (`intended`, `unknown`), or an intent reconciled as billed since `reconciledSinceIso`.
 * The last one is a run the service started and billed whose id was lost with its answer: it
 * may still be pending, and POSTing again would start (and bill) a second run. Callers pass the
 * start of the failure back-off window, which is far longer than a run lasts (30–120 s,
 * docs/service-api.md). Names as stored (the requested spelling).
 */
export function listBlockedEnrichmentDomains(
  mirror: Mirror,
  options: { reconciledSinceIso: string },
): Set<string> {
  const since = requiredTimestamp(options.reconciledSinceIso, 'reconciledSinceIso');
  const rows = cachedStatement(
    mirror,
    `SELECT domain FROM enrichment_runs WHERE status NOT IN ('completed', 'failed') AND domain IS NOT NULL
     UNION SELECT domain FROM enrichment_intents WHERE status IN ('intended', 'unknown')
     UNION SELECT domain FROM enrichment_intents
       WHERE status = 'reconciled_billed' AND coalesce(resolved_at, created_at) >= ?`,
  ).all(since) as Array<{ domain: string }>;
  return new Set(rows.map((r) => r.domain));
}
