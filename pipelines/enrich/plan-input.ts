import type { Mirror } from '../../src/mirror/database.js';
import {
  listBlockedEnrichmentDomains,
  listRecentEnrichmentFailures,
  selectStaleDomains,
} from '../../src/mirror/store/enrich-plan.js';
import type { RunContext } from '../../src/runtime/run-context.js';
import { DomainSyncError } from '../../src/util/domain-sync-error.js';
import { isoFromMs } from '../../src/util/time.js';
import { ENRICH_FILTERS, MAX_PLANNED_DOMAINS, type EnrichSelection } from './options.js';
import type { PlanCandidate, PlanInput } from './plan.js';

/**
 * Reads the planner's inputs from the mirror (read-only). With `requestedOnly`, only the
 * requested domains are planned, no stale ones.
 */
export function readPlanInput(
  mirror: Mirror,
  config: RunContext['config'],
  selection: EnrichSelection,
  nowMs: number,
  options: { requestedOnly?: boolean } = {},
): PlanInput {
  const budget = selection.budget ?? config.enrich.budget;
  const staleAfterMs = selection.staleAfterMs ?? config.enrich.staleAfterMs;
  const failureBackoffMs = selection.failureBackoffMs ?? config.enrich.failureBackoffMs;
  const filters = selection.filters ?? {};
  for (const name of Object.keys(filters)) {
    if (!(ENRICH_FILTERS as readonly string[]).includes(name)) {
      throw new DomainSyncError(
        'ERR_USAGE',
        `--filter ${name}: enrich selects from the mirror and understands only ${ENRICH_FILTERS.join(', ')}`,
      );
    }
  }
  const narrow = {
    ...(filters.jurisdiction !== undefined
      ? { jurisdiction: String(filters.jurisdiction).toLowerCase() }
      : {}),
    ...(filters.payment_category !== undefined
      ? { paymentCategory: String(filters.payment_category).toLowerCase() }
      : {}),
  };
  const requestedNames = [...(selection.domains ?? [])];
  const known = new Map<string, PlanCandidate>();
  if (requestedNames.length > 0) {
    const variants = [...new Set(requestedNames.flatMap((d) => [d, d.toLowerCase()]))];
    for (const row of selectStaleDomains(mirror, {
      limit: variants.length * 2,
      domains: variants,
      excludeInFlight: false,
      includeUnlisted: true,
    })) {
      known.set(row.domain_normalized, {
        domain: row.domain_normalized,
        lastEnrichedAt: row.last_enriched_at,
      });
    }
  }
  const stale = options.requestedOnly
    ? []
    : selectStaleDomains(mirror, {
        staleBeforeIso: isoFromMs(nowMs - staleAfterMs),
        limit: MAX_PLANNED_DOMAINS,
        // Blocked domains are reported as skipped by the planner, so they are selected here.
        excludeInFlight: false,
        ...narrow,
      }).map((row) => ({ domain: row.domain_normalized, lastEnrichedAt: row.last_enriched_at }));
  const failures = new Map<string, string>();
  for (const f of listRecentEnrichmentFailures(mirror, { sinceIso: isoFromMs(nowMs - failureBackoffMs) })) {
    failures.set(f.domain, f.failedAt);
  }
  return {
    stale,
    requested: requestedNames.map((d) => ({
      domain: d,
      known: known.get(d) ?? known.get(d.toLowerCase()) ?? null,
    })),
    blocked: listBlockedEnrichmentDomains(mirror, {
      reconciledSinceIso: isoFromMs(nowMs - failureBackoffMs),
    }),
    recentFailures: failures,
    nowMs,
    failureBackoffMs,
    budget,
  };
}
