import { describe, expect, it } from 'vitest';
import { PollTimeoutError } from '../../../src/api/errors.js';
import { nextPollDelay, pollUntilSettled } from '../../../src/api/poll.js';
import { isRunSettled } from '../../../src/api/resources/enrichments.js';
import { isExportSettled } from '../../../src/api/resources/exports.js';

/** A fake clock whose sleep only advances time and records the waits. */
function fakeTime() {
  let now = 0;
  const waits: number[] = [];
  return {
    waits,
    now: () => now,
    sleep: async (ms: number) => {
      waits.push(ms);
      now += ms;
    },
  };
}

describe('pollUntilSettled', () => {
  it('returns a failed run (settled); waits grow to 10 % of the elapsed time, capped', async () => {
    const time = fakeTime();
    const statuses = ['pending', 'pending', 'pending', 'pending', 'pending', 'failed'];
    const seen: string[] = [];
    const result = await pollUntilSettled(
      {
        subject: 'enrichment run 1',
        fetch: async () => ({ status: statuses.shift()! }),
        isSettled: isRunSettled,
        statusOf: (r) => r.status,
        ...time,
      },
      {
        pollIntervalMs: 100,
        maxPollIntervalMs: 300,
        deadlineMs: 10_000,
        alreadyElapsedMs: 1_500,
        onPoll: (r) => seen.push(r.status),
      },
    );
    expect(result.status).toBe('failed');
    // Elapsed 1500 → 150; 1650 → 165; 1815 → 181.5; 1996.5 → 199.65; then the cap is not reached.
    expect(time.waits.map((w) => Math.round(w * 100) / 100)).toEqual([150, 165, 181.5, 199.65, 219.62]);
    expect(seen).toEqual(['pending', 'pending', 'pending', 'pending', 'pending', 'failed']);
  });

  it.each([
    // [settles at (ms), poll interval (ms), longest wait (ms)]
    [1_200, 100, 30_000],
    [500, 100, 30_000],
    [31_000, 5_000, 30_000],
    [100_000, 5_000, 30_000],
    [119_999, 5_000, 30_000],
    [600_000, 5_000, 30_000],
    [3, 5_000, 60_000],
  ])(
    'a run settling at %i ms (interval %i ms) is noticed within max(interval, 10 %% of its elapsed time)',
    async (settlesAt, interval, longest) => {
      const time = fakeTime();
      const result = await pollUntilSettled(
        {
          subject: 'enrichment run 3',
          fetch: async () => ({ status: time.now() >= settlesAt ? 'completed' : 'pending' }),
          isSettled: isRunSettled,
          statusOf: (r) => r.status,
          ...time,
        },
        { pollIntervalMs: interval, maxPollIntervalMs: longest, deadlineMs: 3_600_000 },
      );
      expect(result.status).toBe('completed');
      const lag = time.now() - settlesAt;
      expect(lag).toBeGreaterThanOrEqual(0);
      expect(lag).toBeLessThanOrEqual(Math.max(interval, 0.1 * settlesAt));
    },
  );

  it('nextPollDelay: the interval, 10 % of the elapsed time, the cap and the deadline, in that order', () => {
    const options = { intervalMs: 5_000, maxIntervalMs: 30_000, fraction: 0.1, remainingMs: 1e9 };
    expect(nextPollDelay(0, options)).toBe(5_000);
    expect(nextPollDelay(49_999, options)).toBe(5_000);
    expect(nextPollDelay(80_000, options)).toBe(8_000);
    expect(nextPollDelay(1_000_000, options)).toBe(30_000);
    expect(nextPollDelay(80_000, { ...options, remainingMs: 1_234 })).toBe(1_234);
    expect(nextPollDelay(80_000, { ...options, remainingMs: -5 })).toBe(0);
  });

  it('treats an unknown status as in progress until the deadline', async () => {
    const time = fakeTime();
    const promise = pollUntilSettled(
      {
        subject: 'enrichment run 2',
        fetch: async () => ({ status: 'queued_for_review' }),
        isSettled: isRunSettled,
        statusOf: (r) => r.status,
        ...time,
      },
      { pollIntervalMs: 1000, maxPollIntervalMs: 1000, deadlineMs: 5000 },
    );
    await expect(promise).rejects.toBeInstanceOf(PollTimeoutError);
    await expect(promise).rejects.toMatchObject({
      code: 'ERR_POLL_TIMEOUT',
      lastStatus: 'queued_for_review',
    });
    expect(time.waits.reduce((a, b) => a + b, 0)).toBe(5000);
  });

  it('is cancellable', async () => {
    const controller = new AbortController();
    const promise = pollUntilSettled(
      {
        subject: 'export 1',
        fetch: async () => {
          controller.abort();
          return { status: 'pending' };
        },
        isSettled: isExportSettled,
        statusOf: (r) => r.status,
        now: () => 0,
        sleep: async (_ms, signal) => {
          if (signal?.aborted) throw Object.assign(new Error('aborted'), { code: 'ERR_ABORTED' });
        },
      },
      { pollIntervalMs: 10, maxPollIntervalMs: 10, deadlineMs: 1000, signal: controller.signal },
    );
    await expect(promise).rejects.toMatchObject({ code: 'ERR_ABORTED' });
  });

  it.each([
    ['completed', true],
    ['failed', true],
    ['expired', true],
    ['pending', false],
    ['processing', false],
  ])('export status %s settled: %s', (status, settled) => {
    expect(isExportSettled({ status })).toBe(settled);
  });
});
