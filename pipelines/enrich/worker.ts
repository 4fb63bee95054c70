import type { EnrichmentRun } from '../../src/api/index.js';
import type { QuotaExceededError } from '../../src/api/errors.js';
import { redactText } from '../../src/log/redact.js';
import { upsertProfiles } from '../../src/mirror/store/profiles.js';
import {
  recordEnrichmentCached,
  recordEnrichmentIntent,
  recordEnrichmentStarted,
  resolveEnrichmentIntent,
  upsertEnrichmentRun,
} from '../../src/mirror/store/enrichment.js';
import type { CreditReservation } from '../../src/runtime/credit-budget.js';
import { errorCode } from '../../src/runtime/run.js';
import { AbortedError } from '../../src/util/domain-sync-error.js';
import type { StartGate } from './gate.js';
import { ENRICHMENT_COST_CREDITS } from './options.js';
import { describe, type EnrichScope } from './scope.js';

/** Codes of a POST failure that prove the service did not process (nor bill) the request. */
const DEFINITE_POST_FAILURES = new Set([
  'ERR_QUOTA_EXCEEDED',
  'ERR_NOT_FOUND',
  'ERR_BAD_REQUEST',
  'ERR_AUTH',
  'ERR_RATE_LIMITED',
  'ERR_INVALID_ARGUMENT',
  'ERR_FOREIGN_ORIGIN',
  'ERR_CLIENT_CONFIG',
]);

/** A POST of this invocation whose answer was lost: it may have cost 0 or 10 credits. */
export interface UnknownPost {
  intentId: number;
  domain: string;
  code: string;
  message: string;
}

/**
 * The work on one domain or one run: POST once under a reservation and record the answer, or
 * follow a run until it settles and refresh the domain's profile. Remembers what the end-of-run
 * reconciliation needs: the POSTs whose answer was lost and the runs seen failing.
 */
export class RunWorker {
  /** POSTs of this invocation whose outcome is unknown. */
  readonly unknownPosts: UnknownPost[] = [];
  /** Runs seen failed that were seen pending first during this invocation. */
  readonly failedInWindow: number[] = [];
  /** Queued domains that returned without a POST once starts stopped. */
  skippedInQueue = 0;
  /** Profile refreshes of completed runs still going on (they hold no run slot). */
  private readonly refreshes = new Set<Promise<void>>();
  /** The first error of a refresh's mirror write, rethrown once all refreshes are done. */
  private refreshFailure: { error: unknown } | undefined;

  private readonly scope: EnrichScope;
  private readonly gate: StartGate;
  private readonly strategy: string;
  private readonly waitDeadlineMs: number;

  // Fields assigned one by one, as in every class here: tsconfig's erasableSyntaxOnly rules out
  // constructor parameter properties, so constructors look alike by design.
  constructor(scope: EnrichScope, gate: StartGate, strategy: string, waitDeadlineMs: number) {
    this.scope = scope;
    this.gate = gate;
    this.strategy = strategy;
    this.waitDeadlineMs = waitDeadlineMs;
  }

  /** One planned domain: reserve, record the intent, POST once, record the answer, follow the run. */
  async enrichDomain(domain: string): Promise<void> {
    const reservation = await this.gate.reserve();
    if (reservation === null) {
      this.skippedInQueue += 1;
      return;
    }
    const { ctx, stats } = this.scope;
    const intentId = await this.gate.openIntent(reservation, () =>
      recordEnrichmentIntent(ctx.mirror, {
        domain,
        strategy: this.strategy,
        createdAt: this.scope.nowIso(),
        pipelineRunId: this.scope.runId,
        estimatedCredits: ENRICHMENT_COST_CREDITS,
      }),
    );
    if (intentId === null) {
      this.skippedInQueue += 1;
      return;
    }
    stats.posts += 1;
    let answer;
    try {
      // No abort signal: once sent, a POST is allowed to finish so its outcome is known rather
      // than lost; it is one short request.
      answer = await ctx.api.startEnrichment({ domain, strategy: this.strategy });
    } catch (error) {
      this.handlePostError(error, domain, intentId, reservation);
      return;
    }
    const at = this.scope.nowIso();
    if (answer.kind === 'started') {
      const credits = answer.billable ? ENRICHMENT_COST_CREDITS : 0;
      recordEnrichmentStarted(ctx.mirror, {
        intentId,
        runId: answer.runId,
        domain,
        strategy: this.strategy,
        at,
        credits,
        pipelineRunId: this.scope.runId,
      });
      this.gate.budget.settle(reservation, credits);
      stats.started += 1;
      ctx.logger.info('enrichment started', { domain, enrichmentRunId: answer.runId, credits });
      await this.followRun(answer.runId, domain, false);
      return;
    }
    recordEnrichmentCached(ctx.mirror, { intentId, domain, at, pipelineRunId: this.scope.runId });
    this.gate.budget.settle(reservation, 0);
    stats.cached += 1;
    ctx.logger.info('enrichment served from cache', { domain });
    // The cache means a recent enrichment exists: refresh the profile (0 credits) so the mirror
    // stops calling the domain stale.
    await this.refreshProfile(domain);
  }

  private handlePostError(
    error: unknown,
    domain: string,
    intentId: number,
    reservation: CreditReservation,
  ): void {
    const code = errorCode(error);
    const at = this.scope.nowIso();
    const message = redactText(error instanceof Error ? error.message : String(error));
    const requestNeverSent =
      code === 'ERR_NETWORK' && (error as { requestSent?: boolean }).requestSent === false;
    if (DEFINITE_POST_FAILURES.has(code) || requestNeverSent) {
      resolveEnrichmentIntent(this.scope.ctx.mirror, intentId, {
        status: 'failed',
        at,
        note: `${code}: ${message}`,
      });
      this.gate.budget.release(reservation);
      if (code === 'ERR_QUOTA_EXCEEDED') {
        const q = error as QuotaExceededError;
        this.gate.stopStarts('quota', {
          code,
          message: `the service refused a new run: credit quota exhausted (granted ${q.granted ?? '?'}, used ${q.used ?? '?'}, reserved ${q.reserved ?? '?'}); runs already started are kept`,
        });
        return;
      }
      if (code === 'ERR_AUTH') {
        this.gate.stopStarts('auth', { code, message });
        return;
      }
      this.scope.stats.refused += 1;
      this.scope.failures.push({ item: domain, code, message });
      this.scope.ctx.logger.warn('enrichment refused', { domain, code });
      return;
    }
    // The service may have processed and billed it: keep the reservation, never POST again for
    // this domain in this invocation (the open intent blocks later ones until reconciled).
    resolveEnrichmentIntent(this.scope.ctx.mirror, intentId, {
      status: 'unknown',
      at,
      note: `${code}: ${message}`,
    });
    this.gate.budget.markUnknown(reservation);
    this.unknownPosts.push({ intentId, domain, code, message });
    this.scope.stats.unknown += 1;
    this.scope.ctx.logger.warn('enrichment outcome unknown; not retried', { domain, code });
  }

  /** Polls a run until it settles (or the wait ends, or an abort), then records the outcome. */
  async followRun(
    runId: number,
    domain: string | null,
    resumed: boolean,
    requestedAt: string | null = null,
  ): Promise<void> {
    const { ctx, stats } = this.scope;
    let sawPending = !resumed;
    // A resumed run has been going since its request: the 10 % rule may widen its waits at once.
    const requestedMs = requestedAt === null ? Number.NaN : Date.parse(requestedAt);
    const alreadyElapsedMs = Number.isNaN(requestedMs) ? 0 : Math.max(0, ctx.clock() - requestedMs);
    let run: EnrichmentRun;
    try {
      run = await ctx.api.waitForEnrichmentRun(runId, {
        signal: ctx.signal,
        pollIntervalMs: ctx.config.api.pollIntervalMs,
        maxPollIntervalMs: ctx.config.enrich.maxPollIntervalMs,
        alreadyElapsedMs,
        deadlineMs: Math.max(0, this.waitDeadlineMs - ctx.clock()),
        onPoll: (value) => {
          stats.pollRequests += 1;
          if (value.status !== 'completed' && value.status !== 'failed') sawPending = true;
        },
      });
    } catch (error) {
      const code = errorCode(error);
      if (error instanceof AbortedError || code === 'ERR_ABORTED') {
        stats.leftPending += 1;
        return;
      }
      if (code === 'ERR_POLL_TIMEOUT') {
        stats.leftPending += 1;
        ctx.logger.info('run still pending; resumed by the next enrich', { enrichmentRunId: runId, domain });
        return;
      }
      if (code === 'ERR_NOT_FOUND') {
        // The service does not know the id (its docs do not say why, docs/service-api.md): the
        // run can never be followed, so it is closed as failed rather than resumed forever.
        upsertEnrichmentRun(
          ctx.mirror,
          {
            id: runId,
            status: 'failed',
            error_details: { error: 'the service does not know this run id', error_type: 'not_found' },
          },
          { at: this.scope.nowIso() },
        );
      } else {
        stats.leftPending += 1;
      }
      if (code === 'ERR_AUTH') this.gate.stopStarts('auth', describe(error));
      this.scope.failures.push({ item: `run ${runId}`, code, message: describe(error).message });
      ctx.logger.warn('run could not be followed', { enrichmentRunId: runId, domain, code });
      return;
    }
    const at = this.scope.nowIso();
    if (run.status === 'completed') {
      // Profile first, run row second: a crash in between leaves the run pending, and the next
      // invocation polls it again and fetches the profile then. The run is over, so its slot is
      // freed for the next POST now; the free profile GET goes on beside it
      // (awaited by finishProfileRefreshes before the invocation ends).
      const name = domain ?? run.domain ?? run.enrichment?.domain_normalized ?? null;
      const refresh = (async () => {
        if (name !== null) await this.refreshProfile(name);
        upsertEnrichmentRun(ctx.mirror, run, { at: this.scope.nowIso() });
        stats.completed += 1;
      })()
        // refreshProfile never throws; a mirror error is rethrown by finishProfileRefreshes.
        .catch((error: unknown) => {
          this.refreshFailure ??= { error };
        })
        .finally(() => this.refreshes.delete(refresh));
      this.refreshes.add(refresh);
      return;
    }
    // failed: error_details stored; the domain backs off (planEnrichment reads these rows).
    upsertEnrichmentRun(ctx.mirror, run, { at });
    stats.failedRuns += 1;
    if (sawPending) this.failedInWindow.push(runId);
    const details = run.error_details;
    this.scope.failures.push({
      item: domain ?? `run ${runId}`,
      code: 'ERR_RUN_FAILED',
      message: `enrichment run ${runId} failed: ${details?.error_type ?? 'unknown'}${details?.error ? ` (${details.error})` : ''}`,
    });
  }

  /** Waits for every profile refresh still going on; rethrows the first mirror error of one. */
  async finishProfileRefreshes(): Promise<void> {
    while (this.refreshes.size > 0) await Promise.all([...this.refreshes]);
    if (this.refreshFailure !== undefined) throw this.refreshFailure.error;
  }

  private async refreshProfile(domain: string): Promise<void> {
    try {
      const profile = await this.scope.ctx.api.getDomain(domain, { signal: this.scope.ctx.signal });
      upsertProfiles(this.scope.ctx.mirror, [profile], { syncedAt: this.scope.nowIso() });
      this.scope.stats.profilesUpdated += 1;
    } catch (error) {
      const code = errorCode(error);
      if (error instanceof AbortedError || code === 'ERR_ABORTED') return;
      this.scope.failures.push({ item: domain, code, message: describe(error).message });
      this.scope.ctx.logger.warn('profile not refreshed after enrichment', { domain, code });
    }
  }
}
