import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { MemoryLogger } from '../../../src/log/logger.js';
import type { RunResult } from '../../../src/runtime/run-result.js';
import {
  checkCronExpression,
  checkSchedules,
  lastOccurrenceBetween,
  MAX_CATCH_UP_LOOKBACK_MS,
  PipelineScheduler,
} from '../../../src/scheduler/index.js';

const at = (iso: string): number => Date.parse(iso);

describe('lastOccurrenceBetween', () => {
  it.each([
    // [expression, timezone, after, now, expected]
    ['0 2 * * *', 'UTC', '2026-03-01T02:00:00.000Z', '2026-03-03T10:00:00.000Z', '2026-03-03T02:00:00.000Z'],
    ['0 2 * * *', 'UTC', '2026-03-03T02:00:00.000Z', '2026-03-03T10:00:00.000Z', null],
    ['0 2 * * *', 'UTC', '2026-03-02T02:00:00.050Z', '2026-03-03T01:59:59.000Z', null],
    [
      '0 2 * * *',
      'Asia/Tokyo',
      '2026-03-01T00:00:00.000Z',
      '2026-03-02T00:00:00.000Z',
      '2026-03-01T17:00:00.000Z',
    ],
    [
      '30 * * * * *',
      'UTC',
      '2026-03-03T10:00:00.000Z',
      '2026-03-03T10:02:10.000Z',
      '2026-03-03T10:01:30.000Z',
    ],
    ['0 3 * * 1', 'UTC', '2026-02-20T00:00:00.000Z', '2026-03-04T00:00:00.000Z', '2026-03-02T03:00:00.000Z'],
  ])('%s in %s, after %s, at %s → %s', (expression, timezone, after, now, expected) => {
    const result = lastOccurrenceBetween(expression, timezone, at(after), at(now));
    expect(result === null ? null : new Date(result).toISOString()).toBe(expected);
  });

  it(`looks back at most ${MAX_CATCH_UP_LOOKBACK_MS / 86_400_000} days`, () => {
    // Yearly on 1 Jan; last run two years ago; "now" in June: the January time is out of reach.
    expect(
      lastOccurrenceBetween('0 0 1 1 *', 'UTC', at('2024-01-01T00:00:00Z'), at('2026-06-15T00:00:00Z')),
    ).toBe(null);
  });
});

describe('checkCronExpression / checkSchedules', () => {
  it('accepts 5 and 6 fields and IANA zones', () => {
    expect(checkCronExpression('0 2 * * *', null)).toEqual([]);
    expect(checkCronExpression('*/5 * * * * *', 'Europe/Berlin')).toEqual([]);
  });
  it('names the key of a bad expression or zone', () => {
    const issues = checkSchedules([
      { name: 'a', schedule: '0 99 * * *', timezone: null, catchUp: 'none' },
      { name: 'b', schedule: '0 2 * * *', timezone: 'Nowhere/Land', catchUp: 'none' },
    ]);
    expect(issues).toHaveLength(2);
    expect(issues[0]).toMatch(/^pipelines\.a\.schedule: not a valid cron expression "0 99 \* \* \*"/);
    expect(issues[1]).toBe(
      'pipelines.b.timezone: unknown time zone "Nowhere/Land" (use an IANA name like Europe/Berlin)',
    );
  });
});

describe('PipelineScheduler', () => {
  it('skips a tick while the same pipeline is still running, and logs it', async () => {
    // node-cron's ticks follow Date and setTimeout, both faked here: three seconds pass at once.
    vi.useFakeTimers({ now: at('2026-03-03T10:00:00.500Z') });
    onTestFinished(() => void vi.useRealTimers());
    const logger = new MemoryLogger();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    const scheduler = new PipelineScheduler({
      pipelines: [{ name: 'p', schedule: '* * * * * *', timezone: null, catchUp: 'none' }],
      run: async () => {
        calls += 1;
        await gate;
        return { status: 'done', runId: calls } as RunResult<object>;
      },
      lastStartedAt: () => null,
      logger,
    });
    scheduler.start();
    try {
      // Ticks at :01, :02 and :03: the first starts the run, which is still going for the others.
      await vi.advanceTimersByTimeAsync(3_000);
      expect(calls).toBe(1);
      expect(scheduler.running()).toEqual(['p']);
      expect(scheduler.stats()[0]!.skippedOverlaps).toBe(2);
      expect(logger.events.filter((e) => e.msg === 'skipped: still running')).toHaveLength(2);
      expect(logger.events.find((e) => e.msg === 'scheduled')?.fields.nextRuns).toHaveLength(3);
    } finally {
      scheduler.stop();
      release();
      await scheduler.idle();
    }
    expect(scheduler.running()).toEqual([]);
    expect(scheduler.stats()[0]!.last).toEqual({ status: 'done', runId: 1 });
  });

  it('catches up once at start when a time was missed, and never for a pipeline that never ran', async () => {
    const logger = new MemoryLogger();
    const started: string[] = [];
    const scheduler = new PipelineScheduler({
      pipelines: [
        { name: 'missed', schedule: '0 2 * * *', timezone: 'UTC', catchUp: 'once' },
        { name: 'never', schedule: '0 2 * * *', timezone: 'UTC', catchUp: 'once' },
        { name: 'off', schedule: '0 2 * * *', timezone: 'UTC', catchUp: 'none' },
      ],
      run: (name) => {
        started.push(name);
        return Promise.resolve({ status: 'done', runId: 1 } as RunResult<object>);
      },
      lastStartedAt: (name) => (name === 'never' ? null : Date.now() - 3 * 86_400_000),
      logger,
    });
    scheduler.start();
    scheduler.stop();
    await scheduler.idle();
    expect(started).toEqual(['missed']);
  });
});
