import { allowanceMessage, reserveWithinAllowance } from '../../src/runtime/allowance.js';
import type { CreditBudget, CreditReservation } from '../../src/runtime/credit-budget.js';
import { errorCode } from '../../src/runtime/run.js';
import { AbortedError } from '../../src/util/domain-sync-error.js';
import { ENRICHMENT_COST_CREDITS } from './options.js';
import type { AccountFigures } from './reconcile.js';
import { describe, noteAccount, type EnrichScope } from './scope.js';
import { describeFigures, type EnrichStats } from './stats.js';

/** Why new starts stopped. */
export type StopReason = NonNullable<EnrichStats['stopReason']>;

/**
 * Decides whether another run may start: a {@link CreditBudget} reservation of 10 credits before
 * each POST, within the invocation's budget and the account's available credits, until the wait
 * is over or something stops new starts (quota, a rejected key, an abort). Runs already in
 * flight are still followed after starts stopped.
 */
export class StartGate {
  /** Set when new starts stopped because of the service; the invocation's error. */
  stopError: { code: string; message: string } | undefined;
  /** One shared `GET /account` re-read at a time. */
  private reread: Promise<void> | undefined;
  private committedAtLastReread = -1;

  private readonly scope: EnrichScope;
  readonly budget: CreditBudget;
  private readonly waitDeadlineMs: number;
  /** The last account reading, named when the account turns out too poor. */
  private lastAccount: AccountFigures;

  constructor(scope: EnrichScope, budget: CreditBudget, waitDeadlineMs: number, lastAccount: AccountFigures) {
    this.scope = scope;
    this.budget = budget;
    this.waitDeadlineMs = waitDeadlineMs;
    this.lastAccount = lastAccount;
  }

  startsStopped(): boolean {
    return (
      this.stopError !== undefined || this.scope.ctx.signal.aborted || this.scope.stats.stopReason !== null
    );
  }

  stopStarts(reason: StopReason, error?: { code: string; message: string }): void {
    const { stats, ctx } = this.scope;
    if (stats.stopReason !== null) return;
    stats.stopReason = reason;
    if (error !== undefined) this.stopError = error;
    ctx.logger.warn('no new enrichment runs', { reason, ...(error ? { error } : {}) });
  }

  /** Reserves 10 credits, waiting while POSTs in flight may still free some; null = stop. */
  async reserve(): Promise<CreditReservation | null> {
    for (;;) {
      if (this.startsStopped()) return null;
      if (this.scope.ctx.clock() >= this.waitDeadlineMs) {
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
      this.stopStarts('account', {
        code: 'ERR_INSUFFICIENT_CREDITS',
        message: `the account has too few credits for another run (${ENRICHMENT_COST_CREDITS} needed): ${describeFigures(this.lastAccount)}; this invocation spent ${snap.spent} of its budget ${snap.budget}`,
      });
      return null;
    }
  }

  /**
   * Records the paid request's intent with `record` if its cost fits the credit allowances
   * (`credits.maxPerDay`, `credits.maxPerMonth`), checked against every process sharing the
   * mirror in the same write transaction. While this invocation has other POSTs in flight, a
   * refusal waits for them (a cached answer frees its 10 credits); otherwise the reservation is
   * released, new starts stop (`allowance`) and null is returned.
   */
  async openIntent(reservation: CreditReservation, record: () => number): Promise<number | null> {
    const { ctx, stats } = this.scope;
    for (;;) {
      const result = reserveWithinAllowance(
        ctx.mirror,
        ctx.config.credits,
        ctx.clock(),
        reservation.credits,
        record,
      );
      if (result.ok) return result.value;
      if (this.budget.snapshot().reserved > reservation.credits && !this.startsStopped()) {
        await this.budget.waitForChange();
        continue;
      }
      this.budget.release(reservation);
      if (stats.stoppedByAllowance === null) {
        stats.stoppedByAllowance = {
          ...result.stoppedBy,
          message: allowanceMessage(result.stoppedBy, reservation.credits),
        };
      }
      this.stopStarts('allowance');
      return null;
    }
  }

  private async rereadAccount(): Promise<void> {
    const { ctx } = this.scope;
    try {
      const account = await ctx.api.getAccount({ signal: ctx.signal });
      this.lastAccount = noteAccount(this.scope, account, 'reread');
      if (this.budget.snapshot().reserved === 0) {
        this.budget.refreshAccount(account.credits_granted === null ? null : account.available_credits);
      }
    } catch (error) {
      const code = errorCode(error);
      if (code === 'ERR_AUTH') this.stopStarts('auth', describe(error));
      else if (error instanceof AbortedError || code === 'ERR_ABORTED') this.stopStarts('interrupted');
      // Any other failure leaves the last reading in force; the caller then stops for want of credits.
      else ctx.logger.warn('account re-read failed', { code });
    }
  }
}
