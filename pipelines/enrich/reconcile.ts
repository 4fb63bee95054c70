import { ENRICHMENT_COST_CREDITS } from './options.js';

/*
 * End-of-run credit reconciliation, as a pure decision: the account's own figures before and
 * after the invocation against what the invocation recorded in the ledger. The caller (run.ts)
 * reads the account and writes what the decision says into the ledger.
 */

/** Credit figures of an account reading. */
export interface AccountFigures {
  granted: number | null;
  used: number;
  reserved: number;
  available: number;
}

/** How the difference between the account and the ledger is explained. */
export type ReconciliationExplanation =
  /** The account moved by what was recorded, and no answer was lost. */
  | 'none_needed'
  /** Every POST whose answer was lost was billed (10 credits each). */
  | 'unknown_posts_billed'
  /** No POST whose answer was lost was billed. */
  | 'unknown_posts_not_billed'
  /** Every run seen failing was refunded (10 credits each). */
  | 'failed_runs_refunded'
  /** None of the above fits exactly (another client may share the account). */
  | 'unexplained';

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
  explanation: ReconciliationExplanation;
  /** Ledger entries added by the reconciliation (credits). */
  ledgerCorrection: number;
  /** One line for people. */
  message: string;
}

/** What the invocation knows at its end. */
export interface ReconcileInput {
  /** The account when the invocation started, and now. */
  start: Pick<AccountFigures, 'used' | 'reserved'>;
  end: Pick<AccountFigures, 'used' | 'reserved'>;
  /** Credits the invocation recorded as billed. */
  believedSpent: number;
  /** POSTs of this invocation whose answer was lost. */
  unknownPosts: number;
  /** Runs seen pending, then failed, during this invocation. */
  failedRunsInWindow: number;
}

/** The decision, and the ledger entries it asks for. */
export interface ReconcileDecision {
  reconciliation: Reconciliation;
  /**
   * What to write: settle each lost POST as billed `credits` (0 or 10), or correct each failed
   * run's charge by `delta` (−10: refunded), or nothing.
   */
  ledger:
    | { kind: 'none' }
    | { kind: 'settle_unknown_posts'; credits: number }
    | { kind: 'refund_failed_runs'; delta: number };
  /** The invocation's credits spent after the correction. */
  creditsSpent: number;
  /** Credits still unknown: the lost POSTs' worst case, unless the decision settled them. */
  creditsUnknown: number;
}

/**
 * Explains `accountDelta − believedSpent` when exactly one cause fits. A lost answer either cost
 * 10 or 0, and a failed run may have been refunded; when both kinds are present, or only some of
 * them would match, the difference is left `unexplained` rather than guessed.
 */
export function reconcileCredits(input: ReconcileInput): ReconcileDecision {
  const { start, end, believedSpent, unknownPosts, failedRunsInWindow: failed } = input;
  const accountDelta = end.used + end.reserved - (start.used + start.reserved);
  const difference = accountDelta - believedSpent;
  let explanation: ReconciliationExplanation = 'unexplained';
  let ledger: ReconcileDecision['ledger'] = { kind: 'none' };
  let ledgerCorrection = 0;
  if (difference === 0 && unknownPosts === 0) {
    explanation = 'none_needed';
  } else if (
    failed === 0 &&
    unknownPosts > 0 &&
    (difference === 0 || difference === unknownPosts * ENRICHMENT_COST_CREDITS)
  ) {
    const billed = difference === 0 ? 0 : ENRICHMENT_COST_CREDITS;
    explanation = billed === 0 ? 'unknown_posts_not_billed' : 'unknown_posts_billed';
    ledger = { kind: 'settle_unknown_posts', credits: billed };
    ledgerCorrection = unknownPosts * billed;
  } else if (unknownPosts === 0 && failed > 0 && difference === -failed * ENRICHMENT_COST_CREDITS) {
    explanation = 'failed_runs_refunded';
    ledger = { kind: 'refund_failed_runs', delta: -ENRICHMENT_COST_CREDITS };
    ledgerCorrection = -failed * ENRICHMENT_COST_CREDITS;
  }
  const message =
    explanation === 'unexplained'
      ? `credits: this invocation recorded ${believedSpent}, the account moved by ${accountDelta} (difference ${difference}); ` +
        `${unknownPosts} POSTs with unknown outcome and ${failed} failed runs cannot explain it exactly (another client may share the account)`
      : `credits: this invocation recorded ${believedSpent + ledgerCorrection}, the account moved by ${accountDelta}` +
        (explanation === 'none_needed' ? '' : ` (${explanation.replace(/_/g, ' ')})`);
  const settled = ledger.kind === 'settle_unknown_posts';
  return {
    reconciliation: {
      accountDelta,
      believedSpent,
      difference,
      unknownPosts,
      failedRunsInWindow: failed,
      explanation,
      ledgerCorrection,
      message,
    },
    ledger,
    creditsSpent: believedSpent + ledgerCorrection,
    creditsUnknown: settled ? 0 : unknownPosts * ENRICHMENT_COST_CREDITS,
  };
}
