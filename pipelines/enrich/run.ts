import { setMaxListeners } from 'node:events';
import type { Account } from '../../src/api/index.js';
import {
  correctEnrichmentRunCredits,
  listPendingEnrichmentRuns,
  recordIntentReconciled,
} from '../../src/mirror/store/enrichment.js';
import { hasAllowance, readAllowance } from '../../src/runtime/allowance.js';
import { CreditBudget } from '../../src/runtime/credit-budget.js';
import { TaskQueue } from '../../src/runtime/queue.js';
import { errorCode, runPipeline } from '../../src/runtime/run.js';
import type { RunContext } from '../../src/runtime/run-context.js';
import type { ItemFailure, RunResult } from '../../src/runtime/run-result.js';
import { AbortedError } from '../../src/util/domain-sync-error.js';
import { isoFromMs } from '../../src/util/time.js';
import { StartGate } from './gate.js';
import { resolveLapsedIntents } from './intents.js';
import { DEFAULT_INTENT_LAPSE_MS, type EnrichOptions } from './options.js';
import { planEnrichment } from './plan.js';
import { readPlanInput } from './plan-input.js';
import { reconcileCredits } from './reconcile.js';
import { describe, noteAccount, type EnrichScope } from './scope.js';
import { emptyStats, type EnrichStats } from './stats.js';
import { RunWorker } from './worker.js';

const PIPELINE = 'enrich';

/**
 * `enrich`: re-enriches stale domains under a credit budget, never spending more than it, with
 * runs in flight counted (docs/contract.md).
 *
 * 1. Reads `GET /account`; resolves intents an earlier invocation left unresolved long enough
 *    ago (intents.ts); resumes every run left `pending` (polls it, never POSTs for its domain).
 * 2. Plans (plan.ts), then applies the plan through a {@link TaskQueue} of `concurrency` runs in
 *    flight. Each POST waits for a reservation of the start gate (gate.ts) and is recorded by
 *    the worker (worker.ts): an intent row first, a 202 (intent, pending run, ledger) in one
 *    transaction before anything else; runs are polled with backoff, completed profiles upserted.
 * 3. Reconciles the account's `credits_used + credits_reserved` delta with the ledger
 *    (reconcile.ts decides, {@link EnrichRun.reconcile} writes).
 *
 * Never throws for item failures or service stops: a 429 `quota_exceeded`, too few available
 * credits or a 401 give `stopped_by_service` (runs in flight still polled), reaching the budget
 * gives `budget_reached`, an aborted `ctx.signal` gives `interrupted` promptly with pending runs
 * left recorded for the next invocation.
 */
export async function enrichPipeline(
  ctx: RunContext,
  options: EnrichOptions = {},
): Promise<RunResult<EnrichStats>> {
  const stats = emptyStats(options.budget ?? ctx.config.enrich.budget);
  return runPipeline(
    ctx,
    PIPELINE,
    (run) => new EnrichRun(run.ctx, run.id, options, stats).execute(),
    () => stats,
  );
}

/** How an invocation that did not throw ended. */
type Outcome = {
  status: 'done' | 'budget_reached' | 'stopped_by_service' | 'interrupted';
  stats: EnrichStats;
  failures: ItemFailure[];
  creditsSpent: number;
  error?: { code: string; message: string };
};

/** One invocation: the order of its phases, and its outcome. The work is in the modules above. */
class EnrichRun {
  private readonly scope: EnrichScope;
  private readonly waitDeadlineMs: number;
  private readonly queue: TaskQueue;

  private readonly ctx: RunContext;
  private readonly options: EnrichOptions;
  private readonly stats: EnrichStats;

  // Fields assigned one by one, as in every class here: tsconfig's erasableSyntaxOnly rules out
  // constructor parameter properties, so constructors look alike by design.
  constructor(ctx: RunContext, runId: number, options: EnrichOptions, stats: EnrichStats) {
    this.ctx = ctx;
    this.options = options;
    this.stats = stats;
    this.scope = { ctx, runId, stats, failures: [], nowIso: () => isoFromMs(ctx.clock()) };
    this.waitDeadlineMs = ctx.clock() + (options.waitMs ?? ctx.config.enrich.waitMs);
    // Every run in flight polls with this signal: `concurrency` listeners at once is expected.
    setMaxListeners(0, ctx.signal);
    this.queue = new TaskQueue({ concurrency: options.concurrency ?? ctx.config.enrich.concurrency });
  }

  async execute(): Promise<Outcome> {
    const { ctx, stats, scope } = this;
    let account: Account;
    try {
      account = await ctx.api.getAccount({ signal: ctx.signal });
    } catch (error) {
      return this.finishEarly(error);
    }
    const figures = noteAccount(scope, account, 'start');
    stats.accountStart = figures;
    if (hasAllowance(ctx.config.credits)) {
      stats.allowance = readAllowance(ctx.mirror, ctx.config.credits, ctx.clock());
      ctx.logger.info('credit allowances', {
        remaining: stats.allowance.remaining,
        day: stats.allowance.day,
        month: stats.allowance.month,
      });
    }
    const budget = new CreditBudget({
      budget: stats.budget,
      accountAvailable: account.credits_granted === null ? null : account.available_credits,
    });
    const gate = new StartGate(scope, budget, this.waitDeadlineMs, figures);
    const worker = new RunWorker(
      scope,
      gate,
      this.options.strategy ?? ctx.config.enrich.strategy,
      this.waitDeadlineMs,
    );

    await resolveLapsedIntents(scope, this.options.intentLapseMs ?? DEFAULT_INTENT_LAPSE_MS);

    // Pending work first: every run an earlier invocation left pending is polled again; its
    // domain is blocked from a new POST by the planner.
    const pending = listPendingEnrichmentRuns(ctx.mirror);
    stats.resumed = pending.length;
    for (const row of pending) {
      this.queue.add(() => worker.followRun(row.id, row.domain ?? null, true, row.requested_at ?? null));
    }

    const plan = planEnrichment(
      readPlanInput(ctx.mirror, ctx.config, this.options, ctx.clock(), {
        requestedOnly: this.options.requestedOnly ?? false,
      }),
    );
    stats.planned = plan.entries.length;
    stats.skippedInFlight = plan.skipped.filter((s) => s.reason === 'in_flight').length;
    stats.skippedBackoff = plan.skipped.filter((s) => s.reason === 'failure_backoff').length;
    ctx.logger.info('enrichment planned', {
      planned: plan.entries.length,
      worstCaseCredits: plan.worstCaseCredits,
      budget: plan.budget,
      resumed: pending.length,
      skipped: plan.skipped.length,
    });

    let tried = 0;
    for (const entry of plan.entries) {
      if (gate.startsStopped()) break;
      tried += 1;
      this.queue.add(() => worker.enrichDomain(entry.domain));
      await this.queue.waitForRoom();
    }
    await this.queue.drain();
    await worker.finishProfileRefreshes();
    // Tasks that were queued but returned without a POST once starts stopped.
    stats.notTried = plan.entries.length - tried + worker.skippedInQueue;
    const snapshot = budget.snapshot();
    stats.creditsSpent = snapshot.spent;
    stats.creditsUnknown = snapshot.unknown;

    if (!ctx.signal.aborted) await this.reconcile(worker);
    else stats.stopReason ??= 'interrupted';
    // A lost answer the reconciliation could not settle stays an open intent (the domain is
    // held back) and is reported as an item failure.
    const settled = stats.reconciliation?.explanation.startsWith('unknown_posts') === true;
    if (!settled) {
      for (const u of worker.unknownPosts)
        scope.failures.push({ item: u.domain, code: u.code, message: u.message });
    }
    return this.outcome(gate.stopError);
  }

  private outcome(stopError: { code: string; message: string } | undefined): Outcome {
    const { ctx, stats } = this;
    const { failures } = this.scope;
    if (ctx.signal.aborted && stopError === undefined) {
      const error = describe(new AbortedError());
      return { status: 'interrupted', stats, failures, creditsSpent: stats.creditsSpent, error };
    }
    if (stopError !== undefined) {
      const status = stats.stopReason === 'interrupted' ? 'interrupted' : 'stopped_by_service';
      return { status, stats, failures, creditsSpent: stats.creditsSpent, error: stopError };
    }
    const stoppedByLimit = stats.stopReason === 'budget' || stats.stopReason === 'allowance';
    const status = stoppedByLimit && stats.notTried > 0 ? 'budget_reached' : 'done';
    return { status, stats, failures, creditsSpent: stats.creditsSpent };
  }

  /** The first account read failed: an abort or a rejected key ends the invocation; the rest throws. */
  private finishEarly(error: unknown): Outcome {
    const code = errorCode(error);
    const { stats } = this;
    const failures = this.scope.failures;
    if (error instanceof AbortedError || code === 'ERR_ABORTED') {
      stats.stopReason = 'interrupted';
      return { status: 'interrupted', stats, failures, creditsSpent: 0, error: describe(error) };
    }
    if (code === 'ERR_AUTH') {
      stats.stopReason = 'auth';
      return { status: 'stopped_by_service', stats, failures, creditsSpent: 0, error: describe(error) };
    }
    throw error;
  }

  /**
   * Reads the account once more, asks {@link reconcileCredits} how to explain the difference with
   * the ledger, and writes the ledger entries the decision asks for.
   */
  private async reconcile(worker: RunWorker): Promise<void> {
    const { ctx, stats, scope } = this;
    const start = stats.accountStart;
    if (start === null) return;
    let end: Account;
    try {
      end = await ctx.api.getAccount();
    } catch (error) {
      ctx.logger.warn('reconciliation skipped: account not readable', { code: errorCode(error) });
      return;
    }
    stats.accountEnd = noteAccount(scope, end, 'end');
    const decision = reconcileCredits({
      start,
      end: stats.accountEnd,
      believedSpent: stats.creditsSpent,
      unknownPosts: worker.unknownPosts.length,
      failedRunsInWindow: worker.failedInWindow.length,
    });
    const at = scope.nowIso();
    const { ledger } = decision;
    if (ledger.kind === 'settle_unknown_posts') {
      for (const { intentId, domain } of worker.unknownPosts) {
        recordIntentReconciled(ctx.mirror, {
          intentId,
          domain,
          billed: ledger.credits,
          at,
          pipelineRunId: scope.runId,
          note: `reconciled with the account: ${ledger.credits === 0 ? 'not billed' : 'billed'}`,
        });
      }
    } else if (ledger.kind === 'refund_failed_runs') {
      for (const runId of worker.failedInWindow) {
        correctEnrichmentRunCredits(ctx.mirror, {
          runId,
          credits: 0,
          delta: ledger.delta,
          at,
          pipelineRunId: scope.runId,
          entryKey: `enrichment_refund:${runId}`,
          note: 'failed run refunded (seen in the account delta)',
        });
      }
    }
    stats.reconciliation = decision.reconciliation;
    stats.creditsSpent = decision.creditsSpent;
    stats.creditsUnknown = decision.creditsUnknown;
    if (decision.reconciliation.explanation === 'unexplained')
      ctx.logger.warn('credits reconciled', { ...stats.reconciliation });
    else ctx.logger.info('credits reconciled', { ...stats.reconciliation });
  }
}
