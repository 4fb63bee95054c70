/**
 * Credit accounting of one pipeline invocation: every paid call reserves its
 * worst-case cost first, and the reservation is settled from the answer, released on a definite
 * failure, or kept while the outcome is unknown. Requests in flight therefore always count, and
 * `spent + reserved` never exceeds the budget or what the account had available.
 */

/** Options of {@link CreditBudget}. */
export interface CreditBudgetOptions {
  /** Credits this invocation may spend at most (`--budget`). */
  budget: number;
  /**
   * Credits the account had available when the invocation started (`GET /account`
   * `available_credits`), or `null` when the account enforces no quota (`credits_granted` null).
   * @default null
   */
  accountAvailable?: number | null;
}

/** Why {@link CreditBudget.tryReserve} refused. */
export type ReserveRefusal =
  /** `spent + reserved + cost` would exceed the invocation's budget. */
  | 'budget'
  /** The account's available credits (less what this invocation spent or reserved) are too few. */
  | 'account';

/** A successful reservation; settle or release it exactly once. */
export interface CreditReservation {
  /** Serial number within this budget, for logs. */
  readonly id: number;
  /** Credits reserved. */
  readonly credits: number;
}

/** Result of {@link CreditBudget.tryReserve}. */
export type ReserveResult =
  { ok: true; reservation: CreditReservation } | { ok: false; reason: ReserveRefusal; inFlight: number };

/** Figures of a {@link CreditBudget} at one moment. */
export interface CreditBudgetSnapshot {
  budget: number;
  /** Credits settled as spent. */
  spent: number;
  /** Credits reserved by calls whose answer has not arrived yet. */
  reserved: number;
  /** Credits of calls whose outcome is unknown (counted as spent: they may have been billed). */
  unknown: number;
  /** `budget − spent − reserved − unknown`. */
  remaining: number;
  /** What the account had available at the start (or after the last refresh), null = no quota. */
  accountAvailable: number | null;
}

/**
 * Budget arithmetic for paid calls. Not thread-safe in the OS sense, but all mutation happens
 * synchronously between awaits, so concurrent tasks of one event loop never interleave inside a
 * method.
 *
 * @example
 * const budget = new CreditBudget({ budget: 100, accountAvailable: account.available_credits });
 * const r = budget.tryReserve(10);
 * if (r.ok) {
 *   try { const res = await api.startEnrichment(…); budget.settle(r.reservation, res.kind === 'cached' ? 0 : 10); }
 *   catch (e) { if (definite(e)) budget.release(r.reservation); else budget.markUnknown(r.reservation); }
 * }
 */
export class CreditBudget {
  readonly budget: number;
  private accountAvailable: number | null;
  /** Credits this invocation had spent or kept when `accountAvailable` was read. */
  private accountBaseline = 0;
  private spent = 0;
  private reserved = 0;
  private unknown = 0;
  private nextId = 1;
  private readonly open = new Map<number, number>();
  private waiters: Array<() => void> = [];

  constructor(options: CreditBudgetOptions) {
    if (!Number.isInteger(options.budget) || options.budget < 0) {
      throw new RangeError(`budget must be a whole number ≥ 0, got ${options.budget}`);
    }
    this.budget = options.budget;
    this.accountAvailable = options.accountAvailable ?? null;
  }

  /**
   * Reserves `credits` when `spent + reserved + unknown + credits ≤ budget` and, with a quota,
   * when what this invocation has used since the account was read plus `credits` fits in the
   * account's available credits. Never waits; see {@link waitForChange}.
   */
  tryReserve(credits: number): ReserveResult {
    const committed = this.spent + this.reserved + this.unknown;
    if (committed + credits > this.budget) return { ok: false, reason: 'budget', inFlight: this.reserved };
    if (
      this.accountAvailable !== null &&
      committed - this.accountBaseline + credits > this.accountAvailable
    ) {
      return { ok: false, reason: 'account', inFlight: this.reserved };
    }
    const reservation = { id: this.nextId++, credits };
    this.open.set(reservation.id, credits);
    this.reserved += credits;
    return { ok: true, reservation };
  }

  /**
   * Settles a reservation at what the answer says was billed (0 for a cached answer, 10 for a
   * started run). Billed credits above the reservation are counted too: the service decides.
   */
  settle(reservation: CreditReservation, billedCredits: number): void {
    this.close(reservation);
    this.spent += billedCredits;
  }

  /** Releases a reservation after a definite failure (the service refused before processing). */
  release(reservation: CreditReservation): void {
    this.close(reservation);
  }

  /**
   * Keeps the reservation's credits as possibly spent: the call may have been billed and its
   * answer was lost. They stay counted against the budget for the rest of the invocation.
   */
  markUnknown(reservation: CreditReservation): void {
    this.close(reservation);
    this.unknown += reservation.credits;
  }

  /**
   * Replaces the account's available credits with a fresh `GET /account` reading ("re-read when
   * in doubt"). Only call it when nothing is reserved: the reading then already reflects every
   * settled call, so the baseline becomes what is committed now.
   */
  refreshAccount(available: number | null): void {
    this.accountAvailable = available;
    this.accountBaseline = this.spent + this.reserved + this.unknown;
  }

  /** Resolves at the next settle, release or markUnknown (for a task waiting on in-flight calls). */
  waitForChange(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Current figures. */
  snapshot(): CreditBudgetSnapshot {
    return {
      budget: this.budget,
      spent: this.spent,
      reserved: this.reserved,
      unknown: this.unknown,
      remaining: this.budget - this.spent - this.reserved - this.unknown,
      accountAvailable: this.accountAvailable,
    };
  }

  private close(reservation: CreditReservation): void {
    const credits = this.open.get(reservation.id);
    if (credits === undefined) throw new Error(`credit reservation ${reservation.id} was already closed`);
    this.open.delete(reservation.id);
    this.reserved -= credits;
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}
