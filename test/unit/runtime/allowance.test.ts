import { describe, expect, it } from 'vitest';
import {
  allowanceMessage,
  allowanceStatus,
  allowanceWindows,
  checkAllowance,
  describeAllowance,
  type AllowanceLimits,
} from '../../../src/runtime/allowance.js';

describe('allowanceWindows: UTC calendar day and month', () => {
  it.each([
    ['2026-11-24T13:45:00.000Z', '2026-11-24', '2026-11-25', '2026-11-01', '2026-12-01'],
    ['2026-11-30T23:59:59.999Z', '2026-11-30', '2026-12-01', '2026-11-01', '2026-12-01'],
    ['2026-12-01T00:00:00.000Z', '2026-12-01', '2026-12-02', '2026-12-01', '2027-01-01'],
    ['2026-12-31T23:00:00.000Z', '2026-12-31', '2027-01-01', '2026-12-01', '2027-01-01'],
    ['2028-02-28T12:00:00.000Z', '2028-02-28', '2028-02-29', '2028-02-01', '2028-03-01'],
    ['2028-02-29T12:00:00.000Z', '2028-02-29', '2028-03-01', '2028-02-01', '2028-03-01'],
  ])('%s → day %s..%s, month %s..%s', (now, dayStart, dayEnd, monthStart, monthEnd) => {
    const w = allowanceWindows(Date.parse(now));
    expect(w).toEqual({
      dayStart: `${dayStart}T00:00:00.000Z`,
      dayEnd: `${dayEnd}T00:00:00.000Z`,
      monthStart: `${monthStart}T00:00:00.000Z`,
      monthEnd: `${monthEnd}T00:00:00.000Z`,
    });
  });
});

describe('checkAllowance: which allowance refuses a cost', () => {
  const windows = allowanceWindows(Date.parse('2026-11-24T10:00:00.000Z'));
  const rows: Array<{
    name: string;
    limits: AllowanceLimits;
    usage: { day: number; month: number };
    cost: number;
    refusedBy: string | null;
    remaining: number | null;
  }> = [
    {
      name: 'no allowance',
      limits: { maxPerDay: null, maxPerMonth: null },
      usage: { day: 1e9, month: 1e9 },
      cost: 10,
      refusedBy: null,
      remaining: null,
    },
    {
      name: 'day fits exactly',
      limits: { maxPerDay: 100, maxPerMonth: null },
      usage: { day: 90, month: 90 },
      cost: 10,
      refusedBy: null,
      remaining: 10,
    },
    {
      name: 'day one over',
      limits: { maxPerDay: 100, maxPerMonth: null },
      usage: { day: 91, month: 91 },
      cost: 10,
      refusedBy: 'credits.maxPerDay',
      remaining: 9,
    },
    {
      name: 'month refuses, day fits',
      limits: { maxPerDay: 100, maxPerMonth: 1000 },
      usage: { day: 0, month: 995 },
      cost: 10,
      refusedBy: 'credits.maxPerMonth',
      remaining: 5,
    },
    {
      name: 'both refuse: the month is named',
      limits: { maxPerDay: 100, maxPerMonth: 1000 },
      usage: { day: 100, month: 1000 },
      cost: 10,
      refusedBy: 'credits.maxPerMonth',
      remaining: 0,
    },
    {
      name: 'a zero allowance refuses anything paid',
      limits: { maxPerDay: 0, maxPerMonth: null },
      usage: { day: 0, month: 0 },
      cost: 10,
      refusedBy: 'credits.maxPerDay',
      remaining: 0,
    },
    {
      name: 'a zero cost always fits',
      limits: { maxPerDay: 0, maxPerMonth: 0 },
      usage: { day: 0, month: 0 },
      cost: 0,
      refusedBy: null,
      remaining: 0,
    },
    {
      name: 'over-spent (an unknown settled as billed) leaves 0, not less',
      limits: { maxPerDay: 20, maxPerMonth: null },
      usage: { day: 30, month: 30 },
      cost: 10,
      refusedBy: 'credits.maxPerDay',
      remaining: 0,
    },
  ];
  it.each(rows)('$name', ({ limits, usage, cost, refusedBy, remaining }) => {
    const status = allowanceStatus(limits, usage, windows);
    expect(status.remaining).toBe(remaining);
    const check = checkAllowance(status, cost);
    expect(check.ok ? null : check.stoppedBy.key).toBe(refusedBy);
    if (!check.ok) {
      expect(check.stoppedBy.resetsAt).toBe(
        refusedBy === 'credits.maxPerDay' ? '2026-11-25T00:00:00.000Z' : '2026-12-01T00:00:00.000Z',
      );
    }
  });

  it('says which allowance, how much it allows and when it resets', () => {
    const status = allowanceStatus({ maxPerDay: 50, maxPerMonth: null }, { day: 50, month: 50 }, windows);
    const check = checkAllowance(status, 10);
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(allowanceMessage(check.stoppedBy, 10)).toBe(
      'credits.maxPerDay allows 50 credits and 50 are spent or in flight today (UTC); 10 more would exceed it. It resets at 2026-11-25T00:00:00.000Z',
    );
    expect(describeAllowance(status)).toBe(
      'allowances: credits.maxPerDay leaves 0 of 50 (resets 2026-11-25T00:00:00.000Z)',
    );
  });
});
