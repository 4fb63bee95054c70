import { cachedStatement, inTransaction } from '../database.js';
import type { Mirror } from '../database.js';
import { recordCredits } from './credits.js';
import { resolveEnrichmentIntent, upsertEnrichmentRun } from './enrichment.js';
import { requiredTimestamp } from './values.js';

/*
 * Mirror reads and writes of the `enrich` pipeline that `enrichment.ts` does not offer: the
 * one-transaction bookkeeping of a POST /enrichments answer, and the inputs of the planner.
 */

/** Options of {@link recordEnrichmentStarted}. */
export interface RecordEnrichmentStartedOptions {
  intentId: number;
  /** The service's `enrichment_run_id`. */
  runId: number;
  domain: string;
  strategy: string | null;
  /** When the 202 arrived (any ISO 8601 spelling). */
  at: string;
  /** Credits billed: 10, or 0 when the 202 said `billable: false`. */
  credits: number;
  pipelineRunId: number;
}

/**
 * Records an accepted 202 in one transaction: the intent becomes `started` with the run id, the
 * run is stored `pending` with its credits, and the ledger gets `enrichment:<runId>`. Nothing
 * else may happen between the answer and this call: the run id is what makes the run resumable
 * and keeps the domain from being paid for twice.
 */
export function recordEnrichmentStarted(mirror: Mirror, options: RecordEnrichmentStartedOptions): void {
  inTransaction(mirror, () => {
    resolveEnrichmentIntent(mirror, options.intentId, {
      status: 'started',
      at: options.at,
      runId: options.runId,
    });
    upsertEnrichmentRun(
      mirror,
      { id: options.runId, status: 'pending', domain: options.domain, strategy: options.strategy },
      {
        at: options.at,
        requestedAt: options.at,
        credits: options.credits,
        pipelineRunId: options.pipelineRunId,
        intentId: options.intentId,
      },
    );
    recordCredits(mirror, {
      at: options.at,
      operation: 'enrichment',
      credits: options.credits,
      estimatedCredits: 10,
      pipelineRunId: options.pipelineRunId,
      domain: options.domain,
      runId: options.runId,
      entryKey: `enrichment:${options.runId}`,
    });
  });
}

/** Options of {@link recordEnrichmentCached}. */
export interface RecordEnrichmentCachedOptions {
  intentId: number;
  domain: string;
  at: string;
  pipelineRunId: number;
}

/**
 * Records a cached 200 in one transaction: the intent becomes `cached` and the ledger gets a
 * 0-credit `enrichment_cached:<intentId>` entry. No run row: a cached answer starts no run
 * (docs/contract.md "Behaviour details").
 */
export function recordEnrichmentCached(mirror: Mirror, options: RecordEnrichmentCachedOptions): void {
  inTransaction(mirror, () => {
    resolveEnrichmentIntent(mirror, options.intentId, { status: 'cached', at: options.at });
    recordCredits(mirror, {
      at: options.at,
      operation: 'enrichment_cached',
      credits: 0,
      estimatedCredits: 10,
      pipelineRunId: options.pipelineRunId,
      domain: options.domain,
      entryKey: `enrichment_cached:${options.intentId}`,
    });
  });
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

/**
 * Sets the credits of a run and adds a ledger correction with `entryKey`, in one transaction,
 * e.g. a failed run the account shows was refunded (`enrichment_refund:<runId>`, −10). Does
 * nothing when the key was already recorded.
 */
export function correctEnrichmentRunCredits(
  mirror: Mirror,
  options: {
    runId: number;
    credits: number;
    delta: number;
    at: string;
    pipelineRunId: number;
    entryKey: string;
    note: string;
  },
): boolean {
  return inTransaction(mirror, () => {
    const row = cachedStatement(mirror, 'SELECT domain FROM enrichment_runs WHERE id = ?').get(
      options.runId,
    ) as { domain: string | null } | undefined;
    const { recorded } = recordCredits(mirror, {
      at: options.at,
      operation: 'enrichment_adjustment',
      credits: options.delta,
      pipelineRunId: options.pipelineRunId,
      domain: row?.domain ?? null,
      runId: options.runId,
      entryKey: options.entryKey,
      note: options.note,
    });
    if (recorded) {
      cachedStatement(mirror, 'UPDATE enrichment_runs SET credits = ? WHERE id = ?').run(
        options.credits,
        options.runId,
      );
    }
    return recorded;
  });
}

/**
 * Records that an intent whose answer was lost was billed after all (end-of-run
 * reconciliation): a ledger entry `enrichment_unknown:<intentId>` and the intent resolved.
 */
export function recordIntentReconciled(
  mirror: Mirror,
  options: {
    intentId: number;
    domain: string;
    billed: number;
    at: string;
    pipelineRunId: number;
    note: string;
  },
): void {
  inTransaction(mirror, () => {
    if (options.billed !== 0) {
      recordCredits(mirror, {
        at: options.at,
        operation: 'enrichment',
        credits: options.billed,
        estimatedCredits: 10,
        pipelineRunId: options.pipelineRunId,
        domain: options.domain,
        entryKey: `enrichment_unknown:${options.intentId}`,
        note: options.note,
      });
    }
    resolveEnrichmentIntent(mirror, options.intentId, {
      status: options.billed !== 0 ? 'reconciled_billed' : 'reconciled_not_billed',
      at: options.at,
      note: options.note,
    });
  });
}
