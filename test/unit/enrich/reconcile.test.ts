import { describe, expect, it } from 'vitest';
import {
  reconcileCredits,
  type ReconcileDecision,
  type ReconciliationExplanation,
} from '../../../pipelines/enrich/reconcile.js';

/*
 * The end-of-run credit reconciliation as a table: each of the five explanations, and the
 * boundaries between them (one credit or one run either side of an explanation leaves the
 * difference unexplained rather than guessed). Every row starts from an account that had used
 * 1,000 credits with 20 reserved; `delta` is how far used+reserved moved by the end.
 */

interface Row {
  name: string;
  believed: number;
  delta: number;
  unknown: number;
  failed: number;
  explanation: ReconciliationExplanation;
  ledger: ReconcileDecision['ledger'];
  /** Ledger correction, and the credits spent and unknown after it. */
  correction: number;
  spent: number;
  unknownCredits: number;
}

const NONE = { kind: 'none' } as const;
const NOT_BILLED = { kind: 'settle_unknown_posts', credits: 0 } as const;
const BILLED = { kind: 'settle_unknown_posts', credits: 10 } as const;
const REFUND = { kind: 'refund_failed_runs', delta: -10 } as const;

// One row per line keeps the table readable.
// prettier-ignore
const ROWS: Row[] = [
  // none_needed: the account moved by what was recorded, and no answer was lost.
  { name: 'nothing spent', believed: 0, delta: 0, unknown: 0, failed: 0, explanation: 'none_needed', ledger: NONE, correction: 0, spent: 0, unknownCredits: 0 },
  { name: 'moved as recorded', believed: 30, delta: 30, unknown: 0, failed: 0, explanation: 'none_needed', ledger: NONE, correction: 0, spent: 30, unknownCredits: 0 },
  { name: 'failed runs kept their charge', believed: 30, delta: 30, unknown: 0, failed: 2, explanation: 'none_needed', ledger: NONE, correction: 0, spent: 30, unknownCredits: 0 },

  // unknown_posts_not_billed: lost answers, and the account moved by exactly what was recorded.
  { name: 'one lost answer, not billed', believed: 20, delta: 20, unknown: 1, failed: 0, explanation: 'unknown_posts_not_billed', ledger: NOT_BILLED, correction: 0, spent: 20, unknownCredits: 0 },
  { name: 'three lost answers, none billed', believed: 0, delta: 0, unknown: 3, failed: 0, explanation: 'unknown_posts_not_billed', ledger: NOT_BILLED, correction: 0, spent: 0, unknownCredits: 0 },

  // unknown_posts_billed: the account moved by 10 more per lost answer.
  { name: 'one lost answer, billed', believed: 20, delta: 30, unknown: 1, failed: 0, explanation: 'unknown_posts_billed', ledger: BILLED, correction: 10, spent: 30, unknownCredits: 0 },
  { name: 'three lost answers, all billed', believed: 0, delta: 30, unknown: 3, failed: 0, explanation: 'unknown_posts_billed', ledger: BILLED, correction: 30, spent: 30, unknownCredits: 0 },

  // failed_runs_refunded: the account moved by 10 less per failed run.
  { name: 'one failed run refunded', believed: 30, delta: 20, unknown: 0, failed: 1, explanation: 'failed_runs_refunded', ledger: REFUND, correction: -10, spent: 20, unknownCredits: 0 },
  { name: 'two failed runs refunded', believed: 20, delta: 0, unknown: 0, failed: 2, explanation: 'failed_runs_refunded', ledger: REFUND, correction: -20, spent: 0, unknownCredits: 0 },

  // unexplained, and the boundaries of each explanation.
  { name: 'moved more, nothing to explain it', believed: 30, delta: 40, unknown: 0, failed: 0, explanation: 'unexplained', ledger: NONE, correction: 0, spent: 30, unknownCredits: 0 },
  { name: 'moved less, no failed run', believed: 30, delta: 20, unknown: 0, failed: 0, explanation: 'unexplained', ledger: NONE, correction: 0, spent: 30, unknownCredits: 0 },
  { name: 'one credit over a billed lost answer', believed: 20, delta: 31, unknown: 1, failed: 0, explanation: 'unexplained', ledger: NONE, correction: 0, spent: 20, unknownCredits: 10 },
  { name: 'one credit under a billed lost answer', believed: 20, delta: 29, unknown: 1, failed: 0, explanation: 'unexplained', ledger: NONE, correction: 0, spent: 20, unknownCredits: 10 },
  { name: 'one credit over not billed', believed: 20, delta: 21, unknown: 1, failed: 0, explanation: 'unexplained', ledger: NONE, correction: 0, spent: 20, unknownCredits: 10 },
  { name: 'only some lost answers billed', believed: 0, delta: 10, unknown: 2, failed: 0, explanation: 'unexplained', ledger: NONE, correction: 0, spent: 0, unknownCredits: 20 },
  { name: 'lost answers and moved less', believed: 20, delta: 10, unknown: 1, failed: 0, explanation: 'unexplained', ledger: NONE, correction: 0, spent: 20, unknownCredits: 10 },
  { name: 'lost answer and a failed run, even', believed: 20, delta: 20, unknown: 1, failed: 1, explanation: 'unexplained', ledger: NONE, correction: 0, spent: 20, unknownCredits: 10 },
  { name: 'lost answer and a failed run, billed', believed: 20, delta: 30, unknown: 1, failed: 1, explanation: 'unexplained', ledger: NONE, correction: 0, spent: 20, unknownCredits: 10 },
  { name: 'lost answer and a failed run, refunded', believed: 20, delta: 10, unknown: 1, failed: 1, explanation: 'unexplained', ledger: NONE, correction: 0, spent: 20, unknownCredits: 10 },
  { name: 'only one of two failed runs refunded', believed: 20, delta: 10, unknown: 0, failed: 2, explanation: 'unexplained', ledger: NONE, correction: 0, spent: 20, unknownCredits: 0 },
  { name: 'refunded more than the failed runs', believed: 30, delta: 10, unknown: 0, failed: 1, explanation: 'unexplained', ledger: NONE, correction: 0, spent: 30, unknownCredits: 0 },
  { name: 'one credit off a refund', believed: 30, delta: 21, unknown: 0, failed: 1, explanation: 'unexplained', ledger: NONE, correction: 0, spent: 30, unknownCredits: 0 },
];

describe('reconcileCredits: the account delta against the ledger', () => {
  it.each(ROWS)(
    '$name → $explanation',
    ({ believed, delta, unknown, failed, explanation, ledger, correction, spent, unknownCredits }) => {
      // Half of the move shows as used, half as reserved: both count.
      const start = { used: 1000, reserved: 20 };
      const end = { used: 1000 + Math.ceil(delta / 2), reserved: 20 + Math.floor(delta / 2) };
      const decision = reconcileCredits({
        start,
        end,
        believedSpent: believed,
        unknownPosts: unknown,
        failedRunsInWindow: failed,
      });
      expect(decision.reconciliation).toMatchObject({
        accountDelta: delta,
        believedSpent: believed,
        difference: delta - believed,
        unknownPosts: unknown,
        failedRunsInWindow: failed,
        explanation,
        ledgerCorrection: correction,
      });
      expect(decision.ledger).toEqual(ledger);
      expect(decision.creditsSpent).toBe(spent);
      expect(decision.creditsUnknown).toBe(unknownCredits);
    },
  );

  it('covers each of the five explanations', () => {
    expect(new Set(ROWS.map((r) => r.explanation))).toEqual(
      new Set<ReconciliationExplanation>([
        'none_needed',
        'unknown_posts_billed',
        'unknown_posts_not_billed',
        'failed_runs_refunded',
        'unexplained',
      ]),
    );
  });

  it('says what it found in one line', () => {
    const run = (believedSpent: number, moved: number, unknownPosts: number, failedRunsInWindow: number) =>
      reconcileCredits({
        start: { used: 0, reserved: 0 },
        end: { used: moved, reserved: 0 },
        believedSpent,
        unknownPosts,
        failedRunsInWindow,
      }).reconciliation.message;
    expect(run(30, 30, 0, 0)).toBe('credits: this invocation recorded 30, the account moved by 30');
    expect(run(20, 30, 1, 0)).toBe(
      'credits: this invocation recorded 30, the account moved by 30 (unknown posts billed)',
    );
    expect(run(20, 20, 1, 0)).toBe(
      'credits: this invocation recorded 20, the account moved by 20 (unknown posts not billed)',
    );
    expect(run(30, 20, 0, 1)).toBe(
      'credits: this invocation recorded 20, the account moved by 20 (failed runs refunded)',
    );
    expect(run(30, 45, 1, 2)).toBe(
      'credits: this invocation recorded 30, the account moved by 45 (difference 15); ' +
        '1 POSTs with unknown outcome and 2 failed runs cannot explain it exactly (another client may share the account)',
    );
  });
});
