/** Body of the 429 `quota_exceeded` error, exactly as docs/service-api.md "Errors" shows it. */
export interface QuotaExceededBody {
  error: {
    code: 'quota_exceeded';
    message: string;
    details: { granted: number; used: number; reserved: number };
  };
}

/**
 * The credit ledger (docs/service-api.md "Limits and credits"): an upfront grant, credits used and credits
 * reserved by work in progress. `available = granted − used − reserved`; a null grant enforces
 * no quota.
 */
export class Ledger {
  granted: number | null;
  used = 0;
  reserved = 0;

  constructor(granted: number | null) {
    this.granted = granted;
  }

  /**
   * Credits still available. With no quota (null grant) it is 2_147_483_647, because the spec
   * types `available_credits` as an integer (docs/simulator.md "Account").
   */
  available(): number {
    if (this.granted === null) return 2_147_483_647;
    return this.granted - this.used - this.reserved;
  }

  /** Whether `credits` can be spent now. */
  canSpend(credits: number): boolean {
    return this.granted === null || credits <= this.available();
  }

  /** Reserves credits for work that settles later; false (nothing changes) when the quota is short. */
  reserve(credits: number): boolean {
    if (!this.canSpend(credits)) return false;
    this.reserved += credits;
    return true;
  }

  /** Turns a reservation into credits used. */
  settle(credits: number): void {
    this.reserved -= credits;
    this.used += credits;
  }

  /** Gives a reservation back (a failed run). */
  release(credits: number): void {
    this.reserved -= credits;
  }

  /** Bills credits at once (company search and resolve); false when the quota is short. */
  charge(credits: number): boolean {
    if (!this.canSpend(credits)) return false;
    this.used += credits;
    return true;
  }

  /** The 429 body for a request that needed more credits than are available. */
  quotaExceededBody(needed: number): QuotaExceededBody {
    return {
      error: {
        code: 'quota_exceeded',
        message: `Credit balance exhausted: ${needed} credits needed, ${Math.max(0, this.available())} available`,
        details: { granted: this.granted ?? 0, used: this.used, reserved: this.reserved },
      },
    };
  }
}
