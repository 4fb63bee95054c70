import { ENRICHMENT_COST_CREDITS } from './options.js';

/*
 * The enrichment planner: which domains to POST, in which order, and what that costs at worst.
 * Pure: no I/O, no clock. Its inputs are read from the mirror by plan-input.ts.
 */

/** A domain the mirror knows, as the planner sees it. */
export interface PlanCandidate {
  domain: string;
  /** Last enrichment (profile's, else the listing's); null when never enriched. */
  lastEnrichedAt: string | null;
}

/** Everything {@link planEnrichment} decides from; built from the mirror by `readPlanInput` (plan-input.ts). */
export interface PlanInput {
  /** Stale domains matching the filters, any order. */
  stale: readonly PlanCandidate[];
  /** `--domain` values in the order given, with what the mirror knows of each (null when unknown). */
  requested: ReadonlyArray<{ domain: string; known: PlanCandidate | null }>;
  /** Domains with a run not settled or an intent not resolved: never POSTed again. */
  blocked: ReadonlySet<string>;
  /** Domain → ISO time its last run was seen failing. */
  recentFailures: ReadonlyMap<string, string>;
  /** Now, in ms (our clock). */
  nowMs: number;
  /** A failed domain waits this long before it is tried again. */
  failureBackoffMs: number;
  /** Credits this invocation may spend. */
  budget: number;
}

/** Why a domain is in the plan. */
export type PlanReason = 'requested' | 'stale';

/** One domain to enrich, in order. */
export interface PlanEntry {
  domain: string;
  reason: PlanReason;
  lastEnrichedAt: string | null;
}

/** Why a domain was left out. */
export type SkipReason = 'in_flight' | 'failure_backoff' | 'duplicate';

/** The plan: what to POST, in order, and what it costs at worst. */
export interface EnrichmentPlan {
  entries: PlanEntry[];
  skipped: Array<{ domain: string; reason: SkipReason }>;
  /** 10 credits per entry: what the plan costs if nothing is cached. */
  worstCaseCredits: number;
  budget: number;
  /** Paid runs the budget allows at most (`floor(budget / 10)`). */
  affordableRuns: number;
}

/**
 * Orders the domains to enrich. Priority: the `--domain` domains first, in the order given,
 * whatever their freshness; then the stale domains, never-enriched first, then oldest
 * `last_enriched_at` first, then by name (a stable order for equal times). A domain with a run in
 * flight or an unresolved intent is left out (no double payment); a stale domain whose last run
 * failed less than `failureBackoffMs` ago is left out too (a requested one is not: the user asked
 * for it). Pure: no I/O, no clock.
 */
export function planEnrichment(input: PlanInput): EnrichmentPlan {
  const entries: PlanEntry[] = [];
  const skipped: EnrichmentPlan['skipped'] = [];
  const seen = new Set<string>();
  const isBlocked = (domain: string): boolean =>
    input.blocked.has(domain) || input.blocked.has(domain.toLowerCase());

  for (const { domain, known } of input.requested) {
    const key = known?.domain ?? domain;
    if (seen.has(key)) {
      skipped.push({ domain, reason: 'duplicate' });
      continue;
    }
    seen.add(key);
    if (isBlocked(key) || isBlocked(domain)) {
      skipped.push({ domain: key, reason: 'in_flight' });
      continue;
    }
    entries.push({ domain: key, reason: 'requested', lastEnrichedAt: known?.lastEnrichedAt ?? null });
  }

  const stale = [...input.stale].sort(
    (a, b) =>
      (a.lastEnrichedAt === null ? 0 : 1) - (b.lastEnrichedAt === null ? 0 : 1) ||
      compareText(a.lastEnrichedAt ?? '', b.lastEnrichedAt ?? '') ||
      compareText(a.domain, b.domain),
  );
  for (const candidate of stale) {
    if (seen.has(candidate.domain)) continue;
    seen.add(candidate.domain);
    if (isBlocked(candidate.domain)) {
      skipped.push({ domain: candidate.domain, reason: 'in_flight' });
      continue;
    }
    const failedAt = input.recentFailures.get(candidate.domain);
    if (failedAt !== undefined && Date.parse(failedAt) + input.failureBackoffMs > input.nowMs) {
      skipped.push({ domain: candidate.domain, reason: 'failure_backoff' });
      continue;
    }
    entries.push({ domain: candidate.domain, reason: 'stale', lastEnrichedAt: candidate.lastEnrichedAt });
  }

  return {
    entries,
    skipped,
    worstCaseCredits: entries.length * ENRICHMENT_COST_CREDITS,
    budget: input.budget,
    affordableRuns: Math.floor(input.budget / ENRICHMENT_COST_CREDITS),
  };
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
