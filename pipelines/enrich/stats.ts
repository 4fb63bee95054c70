import type { Account } from '../../src/api/index.js';
import type { AllowanceState, AllowanceStatus } from '../../src/runtime/allowance.js';
import type { AccountFigures, Reconciliation } from './reconcile.js';

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
  stopReason: 'budget' | 'allowance' | 'account' | 'quota' | 'auth' | 'interrupted' | 'wait' | null;
  /** The credit allowances when the invocation started (null: none configured). */
  allowance: AllowanceStatus | null;
  /** The allowance that stopped new starts, with a sentence for people, or null. */
  stoppedByAllowance: (AllowanceState & { message: string }) | null;
  accountStart: AccountFigures | null;
  accountEnd: AccountFigures | null;
  reconciliation: Reconciliation | null;
}

/** A fresh {@link EnrichStats}: nothing done yet. */
export function emptyStats(budget: number): EnrichStats {
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
    allowance: null,
    stoppedByAllowance: null,
    accountStart: null,
    accountEnd: null,
    reconciliation: null,
  };
}

/** The credit figures of an account reading. */
export function figuresOf(account: Account): AccountFigures {
  return {
    granted: account.credits_granted,
    used: account.credits_used,
    reserved: account.credits_reserved,
    available: account.available_credits,
  };
}

/** The figures for people. */
export function describeFigures(f: AccountFigures): string {
  return `granted ${f.granted ?? 'unlimited'}, used ${f.used}, reserved ${f.reserved}, available ${f.available}`;
}
