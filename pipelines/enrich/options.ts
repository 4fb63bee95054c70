/* What one `enrich` invocation is given, and the fixed figures it works with. */

/** Worst-case price of one `POST /enrichments` (docs/service-api.md, the credits table). */
export const ENRICHMENT_COST_CREDITS = 10;

/** Most candidates one invocation plans; a budget never buys more than a fraction of them. */
export const MAX_PLANNED_DOMAINS = 100_000;

/**
 * An intent older than this whose outcome is still unknown is checked against the domain's
 * profile. The service says a run takes at most 120 s (docs/service-api.md), so after 10 minutes
 * a run it started has ended.
 */
export const DEFAULT_INTENT_LAPSE_MS = 10 * 60_000;

/** What selects the domains of one invocation (`enrich`'s flags, an enrich step's options). */
export interface EnrichSelection {
  /** Credits this invocation may spend (`--budget`). @default config.enrich.budget */
  budget?: number;
  /** Domains enriched longer ago than this are stale (`--stale-after`). @default config.enrich.staleAfterMs */
  staleAfterMs?: number;
  /** `--domain`, enriched whatever their freshness. @default [] */
  domains?: readonly string[];
  /**
   * `--filter`: only `jurisdiction` and `payment_category` narrow the selection, read from the
   * mirror's licences and payment methods. @default {}
   */
  filters?: Readonly<Record<string, string | number | boolean>>;
  /** A failed domain is not retried before this. @default config.enrich.failureBackoffMs */
  failureBackoffMs?: number;
}

/** Filters `enrich` understands (the mirror holds licences and payment methods). */
export const ENRICH_FILTERS = ['jurisdiction', 'payment_category'] as const;

/** Options of the enrich pipeline (`enrichPipeline`). */
export interface EnrichOptions extends EnrichSelection {
  /** Runs in flight at most (`--concurrency`). @default config.enrich.concurrency */
  concurrency?: number;
  /** `--strategy`. @default config.enrich.strategy */
  strategy?: string;
  /** How long to wait for started or resumed runs (`--wait`). @default config.enrich.waitMs */
  waitMs?: number;
  /** Plan only the `--domain` domains (the CLI sets it when `--domain` is given without `--stale-after`). @default false */
  requestedOnly?: boolean;
  /** See {@link DEFAULT_INTENT_LAPSE_MS}. */
  intentLapseMs?: number;
}
