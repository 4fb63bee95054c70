import { setMaxListeners } from 'node:events';
import type { Account, DomainServiceApi, EnrichmentRun } from '../src/api/index.js';
import type { QuotaExceededError } from '../src/api/errors.js';
import { redactText } from '../src/log/redact.js';
import type { Mirror } from '../src/mirror/database.js';
import { recordAccountSnapshot } from '../src/mirror/store/credits.js';
import { upsertProfiles } from '../src/mirror/store/domains.js';
import {
  listOpenEnrichmentIntents,
  listPendingEnrichmentRuns,
  recordEnrichmentIntent,
  resolveEnrichmentIntent,
  selectStaleDomains,
  upsertEnrichmentRun,
} from '../src/mirror/store/enrichment.js';
import {
  correctEnrichmentRunCredits,
  listBlockedEnrichmentDomains,
  listRecentEnrichmentFailures,
  recordEnrichmentCached,
  recordEnrichmentStarted,
  recordIntentReconciled,
} from '../src/mirror/store/enrich-plan.js';
import { CreditBudget, type CreditReservation } from '../src/runtime/credit-budget.js';
import { TaskQueue } from '../src/runtime/queue.js';
import { errorCode, runPipeline } from '../src/runtime/run.js';
import type { RunContext } from '../src/runtime/run-context.js';
import type { ItemFailure, RunResult } from '../src/runtime/run-result.js';
import { AbortedError, DomainSyncError } from '../src/util/domain-sync-error.js';
import { isoFromMs, normalizeTimestamp } from '../src/util/time.js';

/** Worst-case price of one `POST /enrichments` (api-spec.md "Limits", Credits table). */
export const ENRICHMENT_COST_CREDITS = 10;

/** Most candidates one invocation plans; a budget never buys more than a fraction of them. */
export const MAX_PLANNED_DOMAINS = 100_000;

/**
 * An intent older than this whose outcome is still unknown is checked against the domain's
 * profile. api-spec.md "Limits" says a run takes at most 120 s, so after 10 minutes a run it
 * started has ended.
 */
export const DEFAULT_INTENT_LAPSE_MS = 10 * 60_000;

// ---------------------------------------------------------------------------------------------
// Planning (pure)
// ---------------------------------------------------------------------------------------------

/** A domain the mirror knows, as the planner sees it. */
export interface PlanCandidate {
  domain: string;
  /** Last enrichment (profile's, else the listing's); null when never enriched. */
  lastEnrichedAt: string | null;
}

/** Everything {@link planEnrichment} decides from; built from the mirror by {@link readPlanInput}. */
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

/** What selects the domains of one invocation (the CLI maps `enrich`'s flags onto these). */
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

/**
 * Reads the planner's inputs from the mirror (read-only). With `--domain` and no
 * `--stale-after`/`--filter` given by the caller, only the requested domains are planned.
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

// ---------------------------------------------------------------------------------------------
// Applying the plan
// ---------------------------------------------------------------------------------------------

/** Options of {@link enrichPipeline}. */
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

/** Credit figures of an account reading. */
export interface AccountFigures {
  granted: number | null;
  used: number;
  reserved: number;
  available: number;
}

/** End-of-run comparison of what we believe we spent with the account's own figures. */
export interface Reconciliation {
  /** `(credits_used + credits_reserved)` at the end minus at the start. */
  accountDelta: number;
  /** Credits this invocation recorded as billed (ledger, before reconciliation). */
  believedSpent: number;
  /** `accountDelta − believedSpent`. */
  difference: number;
  /** POSTs whose answer was lost (each may have cost 0 or 10). */
  unknownPosts: number;
  /** Runs seen failing during this invocation (the service may have refunded them). */
  failedRunsInWindow: number;
  /** How the difference was explained, or `unexplained`. */
  explanation:
    | 'none_needed'
    | 'unknown_posts_billed'
    | 'unknown_posts_not_billed'
    | 'failed_runs_refunded'
    | 'unexplained';
  /** Ledger entries added by the reconciliation (credits). */
  ledgerCorrection: number;
  /** One line for people. */
  message: string;
}

/** Counts and figures of one `enrich` invocation, stored in `pipeline_runs.stats`. */
export interface EnrichStats {
  budget: number;
  /** Domains in the plan. */
  planned: number;
  /** Left out by the planner: run in flight / intent unresolved, or failure back-off. */
  skippedInFlight: number;
  skippedBackoff: number;
  /** Runs left pending by earlier invocations, polled again. */
  resumed: number;
  /** POSTs sent. */
  posts: number;
  /** 202: runs started (billed). */
  started: number;
  /** 200: served from cache (0 credits). */
  cached: number;
  /** Runs (started or resumed) seen `completed`, and profiles upserted. */
  completed: number;
  profilesUpdated: number;
  /** Runs seen `failed` (the domain backs off). */
  failedRuns: number;
  /** POSTs whose outcome is unknown. */
  unknown: number;
  /** POSTs refused definitely (404 domain, 400…). */
  refused: number;
  /** Runs still pending when the wait ended or the invocation stopped: resumed next time. */
  leftPending: number;
  /** Planned domains never tried (budget, quota, interrupt, wait over). */
  notTried: number;
  /** Earlier intents found lapsed (no run happened) or enriched, and resolved. */
  intentsResolved: number;
  /** Poll requests (`GET /enrichment_runs/:id`). */
  pollRequests: number;
  /** Credits recorded as billed by this invocation (ledger). */
  creditsSpent: number;
  /** Credits kept reserved for POSTs whose outcome is unknown. */
  creditsUnknown: number;
  /** Why new starts stopped early, or null. */
  stopReason: 'budget' | 'account' | 'quota' | 'auth' | 'interrupted' | 'wait' | null;
  accountStart: AccountFigures | null;
  accountEnd: AccountFigures | null;
  reconciliation: Reconciliation | null;
}

/** Raised when `GET /account` shows too few available credits to start another run (exit 3). */
export class InsufficientCreditsError extends DomainSyncError {
  constructor(message: string) {
    super('ERR_INSUFFICIENT_CREDITS', message);
  }
}

const PIPELINE = 'enrich';

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

/**
 * `enrich`: re-enriches stale domains under a credit budget (STYLE.md §6, PRODUCT.md
 * "Promises").
 *
 * 1. Reads `GET /account`; resolves intents an earlier invocation left unresolved long enough
 *    ago; resumes every run left `pending` (polls it, never POSTs for its domain).
 * 2. Plans ({@link planEnrichment}), then applies the plan through a {@link TaskQueue} of
 *    `concurrency` runs in flight. Each POST is preceded by a {@link CreditBudget} reservation
 *    and an intent row; a 202 is recorded (intent, pending run, ledger) in one transaction
 *    before anything else; runs are polled with backoff, completed profiles upserted.
 * 3. Reconciles the account's `credits_used + credits_reserved` delta with the ledger.
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

function emptyStats(budget: number): EnrichStats {
  return {
    budget,
    planned: 0,
    skippedInFlight: 0,
    skippedBackoff: 0,
    resumed: 0,
    posts: 0,
    started: 0,
    cached: 0,
    completed: 0,
    profilesUpdated: 0,
    failedRuns: 0,
    unknown: 0,
    refused: 0,
    leftPending: 0,
    notTried: 0,
    intentsResolved: 0,
    pollRequests: 0,
    creditsSpent: 0,
    creditsUnknown: 0,
    stopReason: null,
    accountStart: null,
    accountEnd: null,
    reconciliation: null,
  };
}

function figuresOf(account: Account): AccountFigures {
  return {
    granted: account.credits_granted,
    used: account.credits_used,
    reserved: account.credits_reserved,
    available: account.available_credits,
  };
}

function describeFigures(f: AccountFigures): string {
  return `granted ${f.granted ?? 'unlimited'}, used ${f.used}, reserved ${f.reserved}, available ${f.available}`;
}

class EnrichRun {
  private readonly ctx: RunContext;
  private readonly api: DomainServiceApi;
  private readonly runId: number;
  private readonly options: EnrichOptions;
  private readonly stats: EnrichStats;
  private readonly strategy: string;
  private readonly waitDeadlineMs: number;
  private readonly queue: TaskQueue;
  private readonly failures: ItemFailure[] = [];
  private budget!: CreditBudget;
  /** Set once new starts must stop; runs in flight are still polled. */
  private stopError: { code: string; message: string } | undefined;
  /** Intents of this invocation whose POST outcome is unknown. */
  private readonly unknownIntents: Array<{
    intentId: number;
    domain: string;
    code: string;
    message: string;
  }> = [];
  /** Runs seen failed that were seen pending first during this invocation. */
  private readonly failedInWindow: number[] = [];
  /** One shared `GET /account` re-read at a time. */
  private reread: Promise<void> | undefined;
  private committedAtLastReread = -1;
  private lastAccount: AccountFigures | null = null;

  constructor(ctx: RunContext, runId: number, options: EnrichOptions, stats: EnrichStats) {
    this.ctx = ctx;
    this.api = ctx.api;
    this.runId = runId;
    this.options = options;
    this.stats = stats;
    this.strategy = options.strategy ?? ctx.config.enrich.strategy;
    this.waitDeadlineMs = ctx.clock() + (options.waitMs ?? ctx.config.enrich.waitMs);
    // Every run in flight polls with this signal: `concurrency` listeners at once is expected.
    setMaxListeners(0, ctx.signal);
    this.queue = new TaskQueue({ concurrency: options.concurrency ?? ctx.config.enrich.concurrency });
  }

  async execute() {
    const { ctx, stats } = this;
    let account: Account;
    try {
      account = await this.api.getAccount({ signal: ctx.signal });
    } catch (error) {
      return this.finishEarly(error);
    }
    this.noteAccount(account, 'start');
    stats.accountStart = figuresOf(account);
    this.budget = new CreditBudget({
      budget: stats.budget,
      accountAvailable: account.credits_granted === null ? null : account.available_credits,
    });

    await this.resolveLapsedIntents();

    // Pending work first (STYLE.md §6): every run an earlier invocation left pending is polled
    // again; its domain is blocked from a new POST by the planner.
    const pending = listPendingEnrichmentRuns(ctx.mirror);
    stats.resumed = pending.length;
    for (const row of pending) {
      this.queue.add(() => this.followRun(row.id, row.domain ?? null, true));
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
      if (this.startsStopped()) break;
      tried += 1;
      this.queue.add(() => this.enrichDomain(entry.domain));
      await this.queue.waitForRoom();
    }
    await this.queue.drain();
    // Tasks that were queued but returned without a POST once starts stopped.
    stats.notTried = plan.entries.length - tried + this.skippedInQueue;
    const snapshot = this.budget.snapshot();
    stats.creditsSpent = snapshot.spent;
    stats.creditsUnknown = snapshot.unknown;

    if (!ctx.signal.aborted) await this.reconcile();
    else stats.stopReason ??= 'interrupted';
    // A lost answer the reconciliation could not settle stays an open intent (the domain is
    // held back) and is reported as an item failure.
    const settled = stats.reconciliation?.explanation.startsWith('unknown_posts') === true;
    if (!settled) {
      for (const u of this.unknownIntents)
        this.failures.push({ item: u.domain, code: u.code, message: u.message });
    }

    if (ctx.signal.aborted && this.stopError === undefined) {
      const error = new AbortedError();
      return {
        status: 'interrupted' as const,
        stats,
        failures: this.failures,
        creditsSpent: stats.creditsSpent,
        error: describe(error),
      };
    }
    if (this.stopError !== undefined) {
      const status =
        stats.stopReason === 'interrupted' ? ('interrupted' as const) : ('stopped_by_service' as const);
      return {
        status,
        stats,
        failures: this.failures,
        creditsSpent: stats.creditsSpent,
        error: this.stopError,
      };
    }
    const status =
      stats.stopReason === 'budget' && stats.notTried > 0 ? ('budget_reached' as const) : ('done' as const);
    return { status, stats, failures: this.failures, creditsSpent: stats.creditsSpent };
  }

  private skippedInQueue = 0;

  private finishEarly(error: unknown) {
    const code = errorCode(error);
    if (error instanceof AbortedError || code === 'ERR_ABORTED') {
      this.stats.stopReason = 'interrupted';
      return {
        status: 'interrupted' as const,
        stats: this.stats,
        failures: this.failures,
        creditsSpent: 0,
        error: describe(error),
      };
    }
    if (code === 'ERR_AUTH') {
      this.stats.stopReason = 'auth';
      return {
        status: 'stopped_by_service' as const,
        stats: this.stats,
        failures: this.failures,
        creditsSpent: 0,
        error: describe(error),
      };
    }
    throw error;
  }

  private startsStopped(): boolean {
    return this.stopError !== undefined || this.ctx.signal.aborted || this.stats.stopReason !== null;
  }

  private stopStarts(
    reason: NonNullable<EnrichStats['stopReason']>,
    error?: { code: string; message: string },
  ): void {
    if (this.stats.stopReason !== null) return;
    this.stats.stopReason = reason;
    if (error !== undefined) this.stopError = error;
    this.ctx.logger.warn('no new enrichment runs', { reason, ...(error ? { error } : {}) });
  }

  /** Reserves 10 credits, waiting while POSTs in flight may still free some; null = stop. */
  private async reserve(): Promise<CreditReservation | null> {
    for (;;) {
      if (this.startsStopped()) return null;
      if (this.ctx.clock() >= this.waitDeadlineMs) {
        this.stopStarts('wait');
        return null;
      }
      const result = this.budget.tryReserve(ENRICHMENT_COST_CREDITS);
      if (result.ok) return result.reservation;
      if (result.inFlight > 0) {
        // A POST in flight may come back cached (0 credits) and free its reservation.
        await this.budget.waitForChange();
        continue;
      }
      if (result.reason === 'budget') {
        this.stopStarts('budget');
        return null;
      }
      // The account looks too poor: re-read it once per change of our own spending ("re-read
      // when in doubt"), since refunds or a new grant may have happened meanwhile.
      const snap = this.budget.snapshot();
      const committed = snap.spent + snap.unknown;
      if (committed !== this.committedAtLastReread) {
        this.committedAtLastReread = committed;
        this.reread ??= this.rereadAccount().finally(() => {
          this.reread = undefined;
        });
        await this.reread;
        continue;
      }
      const f = this.lastAccount;
      this.stopStarts('account', {
        code: 'ERR_INSUFFICIENT_CREDITS',
        message: `the account has too few credits for another run (${ENRICHMENT_COST_CREDITS} needed): ${f ? describeFigures(f) : 'unknown'}; this invocation spent ${snap.spent} of its budget ${snap.budget}`,
      });
      return null;
    }
  }

  private async rereadAccount(): Promise<void> {
    try {
      const account = await this.api.getAccount({ signal: this.ctx.signal });
      this.noteAccount(account, 'reread');
      if (this.budget.snapshot().reserved === 0) {
        this.budget.refreshAccount(account.credits_granted === null ? null : account.available_credits);
      }
    } catch (error) {
      this.handleStopError(error);
    }
  }

  private noteAccount(account: Account, when: string): void {
    this.lastAccount = figuresOf(account);
    recordAccountSnapshot(this.ctx.mirror, account, { at: this.nowIso(), pipelineRunId: this.runId });
    this.ctx.logger.debug('account read', { when, ...this.lastAccount });
  }

  /** One planned domain: reserve, record the intent, POST once, record the answer, follow the run. */
  private async enrichDomain(domain: string): Promise<void> {
    const reservation = await this.reserve();
    if (reservation === null) {
      this.skippedInQueue += 1;
      return;
    }
    const { ctx, stats } = this;
    const intentId = recordEnrichmentIntent(ctx.mirror, {
      domain,
      strategy: this.strategy,
      createdAt: this.nowIso(),
      pipelineRunId: this.runId,
      estimatedCredits: ENRICHMENT_COST_CREDITS,
    });
    stats.posts += 1;
    let answer;
    try {
      // No abort signal: once sent, a POST is allowed to finish so its outcome is known rather
      // than lost; it is one short request.
      answer = await this.api.startEnrichment({ domain, strategy: this.strategy });
    } catch (error) {
      this.handlePostError(error, domain, intentId, reservation);
      return;
    }
    const at = this.nowIso();
    if (answer.kind === 'started') {
      const credits = answer.billable ? ENRICHMENT_COST_CREDITS : 0;
      recordEnrichmentStarted(ctx.mirror, {
        intentId,
        runId: answer.runId,
        domain,
        strategy: this.strategy,
        at,
        credits,
        pipelineRunId: this.runId,
      });
      this.budget.settle(reservation, credits);
      stats.started += 1;
      ctx.logger.info('enrichment started', { domain, enrichmentRunId: answer.runId, credits });
      await this.followRun(answer.runId, domain, false);
      return;
    }
    recordEnrichmentCached(ctx.mirror, { intentId, domain, at, pipelineRunId: this.runId });
    this.budget.settle(reservation, 0);
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
    const at = this.nowIso();
    const message = redactText(error instanceof Error ? error.message : String(error));
    const requestNeverSent =
      code === 'ERR_NETWORK' && (error as { requestSent?: boolean }).requestSent === false;
    if (DEFINITE_POST_FAILURES.has(code) || requestNeverSent) {
      resolveEnrichmentIntent(this.ctx.mirror, intentId, {
        status: 'failed',
        at,
        note: `${code}: ${message}`,
      });
      this.budget.release(reservation);
      if (code === 'ERR_QUOTA_EXCEEDED') {
        const q = error as QuotaExceededError;
        this.stopStarts('quota', {
          code,
          message: `the service refused a new run: credit quota exhausted (granted ${q.granted ?? '?'}, used ${q.used ?? '?'}, reserved ${q.reserved ?? '?'}); runs already started are kept`,
        });
        return;
      }
      if (code === 'ERR_AUTH') {
        this.stopStarts('auth', { code, message });
        return;
      }
      this.stats.refused += 1;
      this.failures.push({ item: domain, code, message });
      this.ctx.logger.warn('enrichment refused', { domain, code });
      return;
    }
    // The service may have processed and billed it: keep the reservation, never POST again for
    // this domain in this invocation (the open intent blocks later ones until reconciled).
    resolveEnrichmentIntent(this.ctx.mirror, intentId, {
      status: 'unknown',
      at,
      note: `${code}: ${message}`,
    });
    this.budget.markUnknown(reservation);
    this.unknownIntents.push({ intentId, domain, code, message });
    this.stats.unknown += 1;
    this.ctx.logger.warn('enrichment outcome unknown; not retried', { domain, code });
  }

  /** Polls a run until it settles (or the wait ends, or an abort), then records the outcome. */
  private async followRun(runId: number, domain: string | null, resumed: boolean): Promise<void> {
    const { ctx, stats } = this;
    let sawPending = !resumed;
    let run: EnrichmentRun;
    try {
      run = await this.api.waitForEnrichmentRun(runId, {
        signal: ctx.signal,
        pollIntervalMs: ctx.config.api.pollIntervalMs,
        maxPollIntervalMs: ctx.config.enrich.maxPollIntervalMs,
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
        // The service does not know the id ("not shown" in api-spec.md): the run can never be
        // followed, so it is closed as failed rather than resumed forever.
        upsertEnrichmentRun(
          ctx.mirror,
          {
            id: runId,
            status: 'failed',
            error_details: { error: 'the service does not know this run id', error_type: 'not_found' },
          },
          { at: this.nowIso() },
        );
      } else {
        stats.leftPending += 1;
      }
      if (code === 'ERR_AUTH') this.stopStarts('auth', describe(error));
      this.failures.push({ item: `run ${runId}`, code, message: describe(error).message });
      ctx.logger.warn('run could not be followed', { enrichmentRunId: runId, domain, code });
      return;
    }
    const at = this.nowIso();
    if (run.status === 'completed') {
      // Profile first, run row second: a crash in between leaves the run pending, and the next
      // invocation polls it again and fetches the profile then.
      const name = domain ?? run.domain ?? run.enrichment?.domain_normalized ?? null;
      if (name !== null) await this.refreshProfile(name);
      upsertEnrichmentRun(ctx.mirror, run, { at });
      stats.completed += 1;
      return;
    }
    // failed: error_details stored; the domain backs off (planEnrichment reads these rows).
    upsertEnrichmentRun(ctx.mirror, run, { at });
    stats.failedRuns += 1;
    if (sawPending) this.failedInWindow.push(runId);
    const details = run.error_details;
    this.failures.push({
      item: domain ?? `run ${runId}`,
      code: 'ERR_RUN_FAILED',
      message: `enrichment run ${runId} failed: ${details?.error_type ?? 'unknown'}${details?.error ? ` (${details.error})` : ''}`,
    });
  }

  private async refreshProfile(domain: string): Promise<void> {
    try {
      const profile = await this.api.getDomain(domain, { signal: this.ctx.signal });
      upsertProfiles(this.ctx.mirror, [profile], { syncedAt: this.nowIso() });
      this.stats.profilesUpdated += 1;
    } catch (error) {
      const code = errorCode(error);
      if (error instanceof AbortedError || code === 'ERR_ABORTED') return;
      this.failures.push({ item: domain, code, message: describe(error).message });
      this.ctx.logger.warn('profile not refreshed after enrichment', { domain, code });
    }
  }

  /**
   * Intents an earlier invocation could not resolve (crash mid-POST, lost answer). Once a run
   * would have ended, the domain's profile tells: enriched after the intent → something was
   * enriched (billing unknown, reported); not enriched → nothing ran, the domain is free again.
   */
  private async resolveLapsedIntents(): Promise<void> {
    const lapseMs = this.options.intentLapseMs ?? DEFAULT_INTENT_LAPSE_MS;
    const cutoff = isoFromMs(this.ctx.clock() - lapseMs);
    for (const intent of listOpenEnrichmentIntents(this.ctx.mirror)) {
      if (intent.created_at > cutoff) continue;
      let lastEnrichedAt: string | null = null;
      try {
        const profile = await this.api.getDomain(intent.domain, { signal: this.ctx.signal });
        lastEnrichedAt = profile.last_enriched_at ? normalizeTimestamp(profile.last_enriched_at) : null;
        upsertProfiles(this.ctx.mirror, [profile], { syncedAt: this.nowIso() });
      } catch (error) {
        if (errorCode(error) !== 'ERR_NOT_FOUND') continue;
      }
      // The intent's time is our clock and last_enriched_at the service's, so the label may be
      // wrong under clock skew; either way the intent is closed and the mirror holds the
      // profile just read, whose freshness decides whether the domain is stale again.
      const enriched = lastEnrichedAt !== null && lastEnrichedAt > intent.created_at;
      resolveEnrichmentIntent(this.ctx.mirror, intent.id, {
        status: enriched ? 'enriched_unattributed' : 'lapsed',
        at: this.nowIso(),
        note: enriched
          ? `profile enriched at ${lastEnrichedAt} after the intent; whether it was billed is unknown`
          : 'no enrichment followed the intent; treated as not started',
      });
      this.stats.intentsResolved += 1;
      this.ctx.logger.warn('unresolved enrichment intent closed', {
        domain: intent.domain,
        intentId: intent.id,
        enriched,
      });
    }
  }

  /** Compares the account's delta with what this invocation recorded, and explains it if it can. */
  private async reconcile(): Promise<void> {
    const { ctx, stats } = this;
    const start = stats.accountStart;
    if (start === null) return;
    let end: Account;
    try {
      end = await this.api.getAccount();
    } catch (error) {
      ctx.logger.warn('reconciliation skipped: account not readable', { code: errorCode(error) });
      return;
    }
    this.noteAccount(end, 'end');
    stats.accountEnd = figuresOf(end);
    const accountDelta = end.credits_used + end.credits_reserved - (start.used + start.reserved);
    const believedSpent = stats.creditsSpent;
    const difference = accountDelta - believedSpent;
    const unknownPosts = this.unknownIntents.length;
    const failed = this.failedInWindow.length;
    const at = this.nowIso();
    let explanation: Reconciliation['explanation'] = 'unexplained';
    let ledgerCorrection = 0;
    if (difference === 0 && unknownPosts === 0) {
      explanation = 'none_needed';
    } else if (
      failed === 0 &&
      unknownPosts > 0 &&
      (difference === 0 || difference === unknownPosts * ENRICHMENT_COST_CREDITS)
    ) {
      const billed = difference === 0 ? 0 : ENRICHMENT_COST_CREDITS;
      for (const { intentId, domain } of this.unknownIntents) {
        recordIntentReconciled(ctx.mirror, {
          intentId,
          domain,
          billed,
          at,
          pipelineRunId: this.runId,
          note: `reconciled with the account: ${billed === 0 ? 'not billed' : 'billed'}`,
        });
        ledgerCorrection += billed;
      }
      explanation = billed === 0 ? 'unknown_posts_not_billed' : 'unknown_posts_billed';
    } else if (unknownPosts === 0 && failed > 0 && difference === -failed * ENRICHMENT_COST_CREDITS) {
      for (const runId of this.failedInWindow) {
        correctEnrichmentRunCredits(ctx.mirror, {
          runId,
          credits: 0,
          delta: -ENRICHMENT_COST_CREDITS,
          at,
          pipelineRunId: this.runId,
          entryKey: `enrichment_refund:${runId}`,
          note: 'failed run refunded (seen in the account delta)',
        });
        ledgerCorrection -= ENRICHMENT_COST_CREDITS;
      }
      explanation = 'failed_runs_refunded';
    }
    const message =
      explanation === 'unexplained'
        ? `credits: this invocation recorded ${believedSpent}, the account moved by ${accountDelta} (difference ${difference}); ` +
          `${unknownPosts} POSTs with unknown outcome and ${failed} failed runs cannot explain it exactly (another client may share the account)`
        : `credits: this invocation recorded ${believedSpent + ledgerCorrection}, the account moved by ${accountDelta}` +
          (explanation === 'none_needed' ? '' : ` (${explanation.replace(/_/g, ' ')})`);
    stats.reconciliation = {
      accountDelta,
      believedSpent,
      difference,
      unknownPosts,
      failedRunsInWindow: failed,
      explanation,
      ledgerCorrection,
      message,
    };
    stats.creditsSpent = believedSpent + ledgerCorrection;
    if (explanation !== 'unknown_posts_not_billed' && explanation !== 'unknown_posts_billed') {
      stats.creditsUnknown = unknownPosts * ENRICHMENT_COST_CREDITS;
    } else {
      stats.creditsUnknown = 0;
    }
    if (explanation === 'unexplained') ctx.logger.warn('credits reconciled', { ...stats.reconciliation });
    else ctx.logger.info('credits reconciled', { ...stats.reconciliation });
  }

  private handleStopError(error: unknown): void {
    const code = errorCode(error);
    if (code === 'ERR_AUTH') this.stopStarts('auth', describe(error));
    else if (error instanceof AbortedError || code === 'ERR_ABORTED') this.stopStarts('interrupted');
    // Any other failure leaves the last reading in force; the caller then stops for want of credits.
    else this.ctx.logger.warn('account re-read failed', { code });
  }

  private nowIso(): string {
    return isoFromMs(this.ctx.clock());
  }
}

function describe(error: unknown): { code: string; message: string } {
  return {
    code: errorCode(error),
    message: redactText(error instanceof Error ? error.message : String(error)),
  };
}
