import { describe, expect, test, vi } from 'vitest';
import { RequestLimiter } from '../../../src/api/limiter.js';

/** A task that stays in flight until `release()` is called; records when it started. */
function gate(log: string[], name: string) {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  return {
    task: async (): Promise<string> => {
      log.push(`start ${name}`);
      await done;
      return name;
    },
    release: () => release(),
  };
}

/**
 * Runs `task` in a slot of `limiter` as the transport's retry loop runs each attempt
 * (`#withRetries` in src/api/http-transport.ts): tryStart, else waitToStart; finish at the end.
 */
async function runLimited<T>(
  limiter: RequestLimiter,
  task: () => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  if (!limiter.tryStart(signal)) await limiter.waitToStart(signal);
  try {
    return await task();
  } finally {
    limiter.finish();
  }
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** How `promise` stands after at most `ms`: settled, or still pending (so a hang fails fast). */
function settledWithin<T>(
  promise: Promise<T>,
  ms: number,
): Promise<PromiseSettledResult<T> | { status: 'pending' }> {
  let timer: NodeJS.Timeout | undefined;
  const pending = new Promise<{ status: 'pending' }>((resolve) => {
    timer = setTimeout(() => resolve({ status: 'pending' }), ms);
  });
  return Promise.race([Promise.allSettled([promise]).then(([result]) => result!), pending]).finally(() =>
    clearTimeout(timer),
  );
}

describe.each([
  ['no rate limit (counter)', Infinity],
  ['rate limited, never binding', 1_000_000],
  ['rate limited, binding', 50],
])('RequestLimiter, %s', (_label, requestsPerSecond) => {
  test('never runs more than `concurrency` tasks at once, and starts waiters in order', async () => {
    const limiter = new RequestLimiter({ concurrency: 2, requestsPerSecond });
    const log: string[] = [];
    const gates = ['a', 'b', 'c', 'd'].map((n) => gate(log, n));
    const results = gates.map((g) => runLimited(limiter, g.task));
    await tick();
    expect(log).toEqual(['start a', 'start b']);
    expect(limiter.running).toBe(2);
    expect(limiter.waiting).toBe(2);
    gates[1]!.release();
    await tick();
    expect(log).toEqual(['start a', 'start b', 'start c']);
    gates[0]!.release();
    gates[2]!.release();
    gates[3]!.release();
    expect(await Promise.all(results)).toEqual(['a', 'b', 'c', 'd']);
    expect(limiter.running).toBe(0);
    expect(limiter.waiting).toBe(0);
  });

  test('a failing task frees its slot', async () => {
    const limiter = new RequestLimiter({ concurrency: 1, requestsPerSecond });
    await expect(runLimited(limiter, () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(runLimited(limiter, () => Promise.resolve(7))).resolves.toBe(7);
    expect(limiter.running).toBe(0);
  });

  test('a waiter whose signal aborts never starts and rejects with ERR_ABORTED', async () => {
    const limiter = new RequestLimiter({ concurrency: 1, requestsPerSecond });
    const log: string[] = [];
    const first = gate(log, 'first');
    const running = runLimited(limiter, first.task);
    const controller = new AbortController();
    const waiting = runLimited(limiter, gate(log, 'never').task, controller.signal);
    await tick();
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'ERR_ABORTED' });
    first.release();
    await running;
    expect(log).toEqual(['start first']);
    expect(limiter.waiting).toBe(0);
  });

  // The transport's retry loop takes its slots this way rather than through run().
  test('tryStart, waitToStart and finish: a slot taken synchronously, waiters first in line', async () => {
    const limiter = new RequestLimiter({ concurrency: 1, requestsPerSecond });
    expect(limiter.tryStart()).toBe(true);
    expect(limiter.running).toBe(1);
    expect(limiter.tryStart()).toBe(false);
    const log: string[] = [];
    const waiter = gate(log, 'waiter');
    const waiting = runLimited(limiter, waiter.task);
    await tick();
    expect(limiter.waiting).toBe(1);
    limiter.finish();
    await tick();
    // The freed slot went to the waiter, not to whoever asks next.
    expect(log).toEqual(['start waiter']);
    expect(limiter.tryStart()).toBe(false);
    const next = limiter.waitToStart();
    waiter.release();
    await expect(waiting).resolves.toBe('waiter');
    await next;
    expect(limiter.running).toBe(1);
    limiter.finish();
    expect(limiter.running).toBe(0);
    const controller = new AbortController();
    controller.abort();
    expect(() => limiter.tryStart(controller.signal)).toThrow(
      expect.objectContaining({ code: 'ERR_ABORTED' }),
    );
    expect(limiter.running).toBe(0);
  });

  test('an already aborted signal rejects at once', async () => {
    const limiter = new RequestLimiter({ concurrency: 1, requestsPerSecond });
    const controller = new AbortController();
    controller.abort();
    await expect(runLimited(limiter, () => Promise.resolve(1), controller.signal)).rejects.toMatchObject({
      code: 'ERR_ABORTED',
    });
  });

  // Every CLI run takes the rate-limited path (api.requestsPerSecond defaults to 10), and close()
  // calls clear(): a dropped waiter must end, with the same error on both paths.
  test('clear() rejects the waiters with ERR_ABORTED instead of leaving them pending', async () => {
    const limiter = new RequestLimiter({ concurrency: 1, requestsPerSecond });
    const log: string[] = [];
    const first = gate(log, 'first');
    const running = runLimited(limiter, first.task);
    const waiting = runLimited(limiter, gate(log, 'dropped').task);
    await tick();
    expect(limiter.waiting).toBe(1);
    limiter.clear();
    expect(await settledWithin(waiting, 1000)).toMatchObject({
      status: 'rejected',
      reason: { code: 'ERR_ABORTED', message: 'request dropped: the client was closed' },
    });
    expect(limiter.waiting).toBe(0);
    first.release();
    await expect(running).resolves.toBe('first');
    expect(log).toEqual(['start first']);
  });
});

describe('RequestLimiter rate', () => {
  test('at most k starts in any window of k·1000/rps ms, in the order the requests came', async () => {
    // The limiter's clock (performance.now()) and its wake-ups (setTimeout) are faked, so the
    // times below are the limiter's own. On the real clock a task's timestamp comes after its
    // start by however long the thread is held up in between, and on a loaded machine that put
    // one group of starts 48.6 ms after the one before (a fresh-clone test run, 2026-11-29) where the limiter itself
    // had waited the whole 50.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      // 60 rps: k = 3 starts per 50 ms.
      const limiter = new RequestLimiter({ concurrency: 10, requestsPerSecond: 60 });
      const starts: Array<{ name: number; at: number }> = [];
      const all = Promise.all(
        Array.from({ length: 9 }, (_, name) =>
          runLimited(limiter, async () => void starts.push({ name, at: performance.now() })),
        ),
      );
      await vi.advanceTimersByTimeAsync(200);
      await all;
      expect(starts.map((s) => s.name)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
      // Each group of three as soon as the window lets it, and not before.
      expect(starts.map((s) => s.at - starts[0]!.at)).toEqual([0, 0, 0, 50, 50, 50, 100, 100, 100]);
      expect(limiter.running).toBe(0);
      expect(limiter.waiting).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  test('keeps only the start times still in the window, however many starts a window allows', async () => {
    // 1,000,000 rps: k = 50,000 starts per 50 ms. Requests 60 ms apart never share a window.
    const limiter = new RequestLimiter({ concurrency: 10, requestsPerSecond: 1_000_000 });
    for (let i = 0; i < 4; i++) {
      await Promise.all([
        runLimited(limiter, () => Promise.resolve(i)),
        runLimited(limiter, () => Promise.resolve(i)),
      ]);
      await new Promise((resolve) => setTimeout(resolve, 60));
    }
    // Each pair takes the two slots of the pair before it: the ring stays at two.
    expect(limiter.startsKept).toBe(2);
  });

  test('a request waiting for the window, not for a slot, can still be aborted or dropped', async () => {
    // 1 start per second: the second and third requests wait for the window.
    const limiter = new RequestLimiter({ concurrency: 10, requestsPerSecond: 1 });
    await expect(runLimited(limiter, () => Promise.resolve('first'))).resolves.toBe('first');
    const controller = new AbortController();
    const log: string[] = [];
    const aborted = runLimited(limiter, async () => void log.push('aborted ran'), controller.signal);
    const dropped = runLimited(limiter, async () => void log.push('dropped ran'));
    await tick();
    expect(limiter.waiting).toBe(2);
    controller.abort();
    await expect(aborted).rejects.toMatchObject({ code: 'ERR_ABORTED' });
    expect(limiter.waiting).toBe(1);
    limiter.clear();
    expect(await settledWithin(dropped, 1000)).toMatchObject({
      status: 'rejected',
      reason: { code: 'ERR_ABORTED', message: 'request dropped: the client was closed' },
    });
    expect(log).toEqual([]);
    expect(limiter.running).toBe(0);
  });
});
