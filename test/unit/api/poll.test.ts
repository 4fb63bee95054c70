import { describe, expect, it } from 'vitest';
import { PollTimeoutError } from '../../../src/api/errors.js';
import { pollUntilSettled } from '../../../src/api/poll.js';
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
  it('returns a failed run (settled) after backing off', async () => {
    const time = fakeTime();
    const statuses = ['pending', 'pending', 'pending', 'failed'];
    const seen: string[] = [];
    const result = await pollUntilSettled(
      {
        subject: 'enrichment run 1',
        fetch: async () => ({ status: statuses.shift()! }),
        isSettled: isRunSettled,
        statusOf: (r) => r.status,
        ...time,
      },
      { pollIntervalMs: 100, maxPollIntervalMs: 200, deadlineMs: 10_000, onPoll: (r) => seen.push(r.status) },
    );
    expect(result.status).toBe('failed');
    expect(time.waits).toEqual([100, 150, 200]);
    expect(seen).toEqual(['pending', 'pending', 'pending', 'failed']);
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
