import { DomainSyncError } from '../../util/domain-sync-error.js';
import { cachedStatement, inTransaction } from '../database.js';
import type { Mirror } from '../database.js';
import type { EnrichmentRunInput } from '../inputs.js';
import type { EnrichmentIntentsTable, EnrichmentRunsTable } from '../schema.js';
import { recordCredits } from './credits.js';
import {
  integerColumn,
  jsonColumn,
  keyColumn,
  requiredInteger,
  requiredTimestamp,
  textColumn,
  timestampColumn,
} from './values.js';

/*
 * Enrichment bookkeeping for the `enrich` pipeline. A paid POST /enrichments is recorded as an
 * *intent* before it is sent, because the service only gives a run id after it
 * answers: if the answer is lost, the open intent is what tells the next run not to pay blindly
 * again. Runs (with the service's id) then live in `enrichment_runs`. What an answer, a refund or
 * a reconciliation changes is written in one transaction with its `credit_ledger` entry. The
 * planner's read-only queries are in `enrich-plan.ts`.
 */

/** Status values of `enrichment_intents.status` that this module writes; any string is accepted. */
export type EnrichmentIntentStatus = 'intended' | 'started' | 'cached' | 'failed' | 'unknown' | (string & {});

/** An `enrichment_intents` row. */
export type EnrichmentIntentRecord = Omit<EnrichmentIntentsTable, 'id'> & { id: number };

/** An `enrichment_runs` row. */
export type EnrichmentRunRecord = EnrichmentRunsTable;

/** Options of {@link recordEnrichmentIntent}. */
export interface EnrichmentIntentOptions {
  domain: string;
  /** @default null (the service's default, `full`) */
  strategy?: string | null;
  /** When the intent was recorded (any ISO 8601 spelling). */
  createdAt: string;
  /** @default null */
  pipelineRunId?: number | null;
  /** Credits reserved for it. @default null */
  estimatedCredits?: number | null;
}

/** Records that a POST /enrichments is about to be sent (`status = 'intended'`); returns its id. */
export function recordEnrichmentIntent(mirror: Mirror, options: EnrichmentIntentOptions): number {
  const result = cachedStatement(
    mirror,
    `INSERT INTO enrichment_intents (domain, strategy, status, created_at, pipeline_run_id, estimated_credits)
     VALUES (?, ?, 'intended', ?, ?, ?)`,
  ).run(
    keyColumn(options.domain, 'domain'),
    textColumn(options.strategy, 'strategy'),
    requiredTimestamp(options.createdAt, 'createdAt'),
    options.pipelineRunId ?? null,
    integerColumn(options.estimatedCredits, 'estimatedCredits'),
  );
  return Number(result.lastInsertRowid);
}

/** Options of {@link resolveEnrichmentIntent}. */
export interface ResolveEnrichmentIntentOptions {
  /** `started` (202, with `runId`), `cached` (200), `failed` (definite error), `unknown` (outcome lost). */
  status: EnrichmentIntentStatus;
  /** Time of the resolution (any ISO 8601 spelling). */
  at: string;
  /** The service's run id for `started`. @default null */
  runId?: number | bigint | null;
  /** @default null */
  note?: string | null;
}

/**
 * Records what became of an intent. `unknown` keeps it open (listed by
 * {@link listOpenEnrichmentIntents}) for reconciliation; `resolved_at` is set for the others.
 * Throws `ERR_MIRROR_NOT_FOUND` for an unknown id.
 */
export function resolveEnrichmentIntent(
  mirror: Mirror,
  intentId: number,
  options: ResolveEnrichmentIntentOptions,
): void {
  const status = keyColumn(options.status, 'status');
  const at = requiredTimestamp(options.at, 'at');
  const { changes } = cachedStatement(
    mirror,
    `UPDATE enrichment_intents SET status = ?, resolved_at = ?, run_id = coalesce(?, run_id), note = coalesce(?, note)
     WHERE id = ?`,
  ).run(
    status,
    status === 'unknown' ? null : at,
    integerColumn(options.runId, 'runId'),
    textColumn(options.note, 'note'),
    intentId,
  );
  if (changes === 0)
    throw new DomainSyncError('ERR_MIRROR_NOT_FOUND', `enrichment intent ${intentId} is not in the mirror`);
}

/** Intents whose outcome is not known (`intended` or `unknown`), oldest first. */
export function listOpenEnrichmentIntents(mirror: Mirror): EnrichmentIntentRecord[] {
  return cachedStatement(
    mirror,
    `SELECT * FROM enrichment_intents WHERE status IN ('intended', 'unknown') ORDER BY id`,
  ).all() as EnrichmentIntentRecord[];
}

/** Options of {@link upsertEnrichmentRun}. */
export interface UpsertEnrichmentRunOptions {
  /** When this state was observed (any ISO 8601 spelling): `mirror_updated_at`, `last_polled_at`. */
  at: string;
  /** When the run was requested; kept from the first call. @default null */
  requestedAt?: string | null;
  /** Credits billed for the run; kept from earlier calls when omitted. @default null */
  credits?: number | bigint | null;
  /** @default null */
  pipelineRunId?: number | null;
  /** @default null */
  intentId?: number | null;
}

/** Result of {@link upsertEnrichmentRun}. */
export type UpsertEnrichmentRunResult = 'inserted' | 'updated' | 'unchanged';

/**
 * Inserts or updates a run from its wire shape (a 202 answer turned into `{id, status:
 * 'pending', domain, strategy}`, or a `GET /enrichment_runs/:id` poll). Fields absent from a
 * later shape (a failed run has no `domain`) keep their stored values. `status` is stored as
 * given, whatever its value. Timestamps are normalised; a bad one throws `ERR_MIRROR_INPUT`
 * before anything is written.
 */
export function upsertEnrichmentRun(
  mirror: Mirror,
  run: EnrichmentRunInput,
  options: UpsertEnrichmentRunOptions,
): UpsertEnrichmentRunResult {
  const id = requiredInteger(run.id, 'run.id');
  const where = `run ${String(id)}`;
  const at = requiredTimestamp(options.at, 'at');
  const values = {
    id,
    domain: textColumn(run.domain, `${where}.domain`),
    status: keyColumn(run.status, `${where}.status`),
    strategy: textColumn(run.strategy, `${where}.strategy`),
    started_at: timestampColumn(run.started_at, `${where}.started_at`),
    completed_at: timestampColumn(run.completed_at, `${where}.completed_at`),
    error: textColumn(run.error_details?.error, `${where}.error_details.error`),
    error_type: textColumn(run.error_details?.error_type, `${where}.error_details.error_type`),
    credits: integerColumn(options.credits, 'credits'),
    result_domain_normalized: textColumn(
      run.enrichment?.domain_normalized,
      `${where}.enrichment.domain_normalized`,
    ),
    result_status: textColumn(run.enrichment?.status, `${where}.enrichment.status`),
    result_last_enriched_at: timestampColumn(
      run.enrichment?.last_enriched_at,
      `${where}.enrichment.last_enriched_at`,
    ),
    requested_at: timestampColumn(options.requestedAt, 'requestedAt'),
    pipeline_run_id: options.pipelineRunId ?? null,
    intent_id: options.intentId ?? null,
    raw: jsonColumn(run),
    at,
  };
  return inTransaction(mirror, () => {
    const existed =
      cachedStatement(mirror, 'SELECT 1 FROM enrichment_runs WHERE id = ?').get(id) !== undefined;
    // coalesce(excluded.x, x): a later, thinner shape never erases what an earlier one told us.
    const { changes } = cachedStatement(
      mirror,
      `INSERT INTO enrichment_runs (id, domain, status, strategy, started_at, completed_at, error, error_type, credits,
         result_domain_normalized, result_status, result_last_enriched_at, requested_at, last_polled_at,
         pipeline_run_id, intent_id, raw, mirror_updated_at)
       VALUES (@id, @domain, @status, @strategy, @started_at, @completed_at, @error, @error_type, @credits,
         @result_domain_normalized, @result_status, @result_last_enriched_at, @requested_at, @at,
         @pipeline_run_id, @intent_id, @raw, @at)
       ON CONFLICT (id) DO UPDATE SET
         domain = coalesce(excluded.domain, domain),
         status = excluded.status,
         strategy = coalesce(excluded.strategy, strategy),
         started_at = coalesce(excluded.started_at, started_at),
         completed_at = coalesce(excluded.completed_at, completed_at),
         error = coalesce(excluded.error, error),
         error_type = coalesce(excluded.error_type, error_type),
         credits = coalesce(excluded.credits, credits),
         result_domain_normalized = coalesce(excluded.result_domain_normalized, result_domain_normalized),
         result_status = coalesce(excluded.result_status, result_status),
         result_last_enriched_at = coalesce(excluded.result_last_enriched_at, result_last_enriched_at),
         requested_at = coalesce(requested_at, excluded.requested_at),
         pipeline_run_id = coalesce(pipeline_run_id, excluded.pipeline_run_id),
         intent_id = coalesce(intent_id, excluded.intent_id),
         raw = excluded.raw,
         last_polled_at = excluded.last_polled_at,
         mirror_updated_at = excluded.mirror_updated_at
       WHERE status IS NOT excluded.status
          OR raw IS NOT excluded.raw
          OR (excluded.credits IS NOT NULL AND credits IS NOT excluded.credits)`,
    ).run(values);
    if (!existed) return 'inserted';
    return changes > 0 ? 'updated' : 'unchanged';
  });
}

/** One run by the service's id, or `undefined`. */
export function getEnrichmentRun(mirror: Mirror, id: number | bigint): EnrichmentRunRecord | undefined {
  return cachedStatement(mirror, 'SELECT * FROM enrichment_runs WHERE id = ?').get(id) as
    EnrichmentRunRecord | undefined;
}

/**
 * Runs not yet settled: any status other than `completed` and `failed` (`pending`, and values
 * the spec does not show), oldest first. These are the runs `enrich` resumes polling.
 */
export function listPendingEnrichmentRuns(mirror: Mirror): EnrichmentRunRecord[] {
  return cachedStatement(
    mirror,
    `SELECT * FROM enrichment_runs WHERE status NOT IN ('completed', 'failed') ORDER BY id`,
  ).all() as EnrichmentRunRecord[];
}

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
