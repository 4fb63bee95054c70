import { describe, expect, it } from 'vitest';
import { CreditBudget } from '../../../src/runtime/credit-budget.js';

describe('CreditBudget', () => {
  it('reserves only while spent + reserved + cost ≤ budget, counting calls in flight', () => {
    const budget = new CreditBudget({ budget: 25 });
    const a = budget.tryReserve(10);
    const b = budget.tryReserve(10);
    expect(a.ok && b.ok).toBe(true);
    const c = budget.tryReserve(10);
    expect(c).toEqual({ ok: false, reason: 'budget', inFlight: 20 });
    expect(budget.snapshot()).toMatchObject({ spent: 0, reserved: 20, remaining: 5 });
  });

  it('settles a cached answer at 0 and frees its reservation', () => {
    const budget = new CreditBudget({ budget: 10 });
    const a = budget.tryReserve(10);
    if (!a.ok) throw new Error('expected a reservation');
    budget.settle(a.reservation, 0);
    expect(budget.snapshot()).toMatchObject({ spent: 0, reserved: 0, remaining: 10 });
    const b = budget.tryReserve(10);
    if (!b.ok) throw new Error('expected a reservation');
    budget.settle(b.reservation, 10);
    expect(budget.snapshot()).toMatchObject({ spent: 10, reserved: 0, remaining: 0 });
    expect(budget.tryReserve(10)).toMatchObject({ ok: false, reason: 'budget', inFlight: 0 });
  });

  it('releases on a definite failure and keeps the credits of an unknown outcome', () => {
    const budget = new CreditBudget({ budget: 20 });
    const a = budget.tryReserve(10);
    const b = budget.tryReserve(10);
    if (!a.ok || !b.ok) throw new Error('expected reservations');
    budget.release(a.reservation);
    budget.markUnknown(b.reservation);
    expect(budget.snapshot()).toMatchObject({ spent: 0, reserved: 0, unknown: 10, remaining: 10 });
    expect(budget.tryReserve(10).ok).toBe(true);
    expect(budget.tryReserve(10)).toMatchObject({ ok: false, reason: 'budget' });
  });

  it('refuses a reservation closed twice', () => {
    const budget = new CreditBudget({ budget: 10 });
    const a = budget.tryReserve(10);
    if (!a.ok) throw new Error('expected a reservation');
    budget.settle(a.reservation, 10);
    expect(() => budget.release(a.reservation)).toThrow(/already closed/);
  });

  it('limits by the account when it has fewer credits than the budget', () => {
    const budget = new CreditBudget({ budget: 100, accountAvailable: 25 });
    const a = budget.tryReserve(10);
    const b = budget.tryReserve(10);
    if (!a.ok || !b.ok) throw new Error('expected reservations');
    expect(budget.tryReserve(10)).toEqual({ ok: false, reason: 'account', inFlight: 20 });
    budget.settle(a.reservation, 10);
    budget.settle(b.reservation, 10);
    // A fresh reading after both settled: the account says 5 left.
    budget.refreshAccount(5);
    expect(budget.tryReserve(10)).toMatchObject({ ok: false, reason: 'account', inFlight: 0 });
    // A new grant shows up in the next reading.
    budget.refreshAccount(500);
    expect(budget.tryReserve(10).ok).toBe(true);
  });

  it('has no account limit when the account enforces no quota', () => {
    const budget = new CreditBudget({ budget: 30, accountAvailable: null });
    for (let i = 0; i < 3; i++) expect(budget.tryReserve(10).ok).toBe(true);
    expect(budget.tryReserve(10)).toMatchObject({ ok: false, reason: 'budget' });
  });

  it('wakes waiters when a reservation closes', async () => {
    const budget = new CreditBudget({ budget: 10 });
    const a = budget.tryReserve(10);
    if (!a.ok) throw new Error('expected a reservation');
    const woke = budget.waitForChange();
    budget.settle(a.reservation, 0);
    await expect(woke).resolves.toBeUndefined();
  });

  it.each([1, 4, 16])(
    'never lets spent + reserved exceed the budget with %i tasks in flight',
    async (concurrency) => {
      const budget = new CreditBudget({ budget: 100, accountAvailable: 1000 });
      let maxCommitted = 0;
      let started = 0;
      // Every third call is "cached" (0 credits); tasks wait while reservations are in flight.
      const task = async (n: number): Promise<void> => {
        for (;;) {
          const r = budget.tryReserve(10);
          if (r.ok) {
            const s = budget.snapshot();
            maxCommitted = Math.max(maxCommitted, s.spent + s.reserved + s.unknown);
            await Promise.resolve();
            budget.settle(r.reservation, n % 3 === 0 ? 0 : 10);
            if (n % 3 !== 0) started += 1;
            return;
          }
          if (r.inFlight === 0) return;
          await budget.waitForChange();
        }
      };
      let next = 0;
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < 60) await task(next++);
        }),
      );
      expect(maxCommitted).toBeLessThanOrEqual(100);
      expect(budget.snapshot().spent).toBe(100);
      expect(started).toBe(10);
    },
  );
});
