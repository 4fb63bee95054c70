import { describe, expect, it } from 'vitest';
import { planEnrichment, type PlanCandidate, type PlanInput } from '../../../pipelines/enrich/index.js';

const NOW = Date.parse('2026-06-01T00:00:00.000Z');
const DAY = 86_400_000;

/** A stale candidate enriched `daysAgo` days before NOW (null = never). */
function candidate(domain: string, daysAgo: number | null): PlanCandidate {
  return { domain, lastEnrichedAt: daysAgo === null ? null : new Date(NOW - daysAgo * DAY).toISOString() };
}

/** Planner input with sensible defaults; override what a test is about. */
function input(overrides: Partial<PlanInput> = {}): PlanInput {
  return {
    stale: [],
    requested: [],
    blocked: new Set(),
    recentFailures: new Map(),
    nowMs: NOW,
    failureBackoffMs: DAY,
    budget: 100,
    ...overrides,
  };
}

describe('planEnrichment', () => {
  it('orders stale domains never-enriched first, then oldest first, then by name', () => {
    const plan = planEnrichment(
      input({
        stale: [
          candidate('b.com', 40),
          candidate('new.com', null),
          candidate('a.com', 40),
          candidate('old.com', 300),
        ],
      }),
    );
    expect(plan.entries.map((e) => e.domain)).toEqual(['new.com', 'old.com', 'a.com', 'b.com']);
    expect(plan.entries.every((e) => e.reason === 'stale')).toBe(true);
  });

  it('puts --domain first in the given order, whatever its freshness, once', () => {
    const plan = planEnrichment(
      input({
        stale: [candidate('old.com', 300), candidate('fresh.com', 400)],
        requested: [
          { domain: 'fresh.com', known: candidate('fresh.com', 1) },
          { domain: 'unknown.com', known: null },
          { domain: 'fresh.com', known: candidate('fresh.com', 1) },
        ],
      }),
    );
    expect(plan.entries.map((e) => [e.domain, e.reason])).toEqual([
      ['fresh.com', 'requested'],
      ['unknown.com', 'requested'],
      ['old.com', 'stale'],
    ]);
    expect(plan.skipped).toEqual([{ domain: 'fresh.com', reason: 'duplicate' }]);
  });

  it('never plans a domain with a run in flight or an unresolved intent, requested or not', () => {
    const plan = planEnrichment(
      input({
        stale: [candidate('pending.com', 50), candidate('ok.com', 50)],
        requested: [{ domain: 'Intent.com', known: null }],
        blocked: new Set(['pending.com', 'intent.com']),
      }),
    );
    expect(plan.entries.map((e) => e.domain)).toEqual(['ok.com']);
    expect(plan.skipped.map((s) => s.reason)).toEqual(['in_flight', 'in_flight']);
  });

  it('backs off a stale domain whose run failed recently, but not a requested one', () => {
    const plan = planEnrichment(
      input({
        stale: [candidate('failed-recently.com', 50), candidate('failed-long-ago.com', 50)],
        requested: [{ domain: 'asked.com', known: candidate('asked.com', 50) }],
        recentFailures: new Map([
          ['failed-recently.com', new Date(NOW - DAY / 2).toISOString()],
          ['failed-long-ago.com', new Date(NOW - 2 * DAY).toISOString()],
          ['asked.com', new Date(NOW - 60_000).toISOString()],
        ]),
      }),
    );
    expect(plan.entries.map((e) => e.domain)).toEqual(['asked.com', 'failed-long-ago.com']);
    expect(plan.skipped).toEqual([{ domain: 'failed-recently.com', reason: 'failure_backoff' }]);
  });

  it('prices the plan at 10 credits per domain and says what the budget affords', () => {
    const plan = planEnrichment(
      input({ stale: Array.from({ length: 30 }, (_, i) => candidate(`d${i}.com`, 100 + i)), budget: 95 }),
    );
    expect(plan.worstCaseCredits).toBe(300);
    expect(plan.budget).toBe(95);
    expect(plan.affordableRuns).toBe(9);
  });

  it('plans nothing from nothing', () => {
    expect(planEnrichment(input())).toEqual({
      entries: [],
      skipped: [],
      worstCaseCredits: 0,
      budget: 100,
      affordableRuns: 10,
    });
  });
});
