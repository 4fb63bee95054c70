import { AbortedError } from './domain-sync-error.js';

/**
 * Resolves after `ms` milliseconds; rejects with {@link AbortedError} as soon as `signal` aborts.
 * The timer keeps the process alive: a retry back-off or a poll interval is pending work, and an
 * unref'd timer let Node exit mid-run (exit 13, unsettled top-level await) when it was the only
 * thing left on the event loop.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(new AbortedError(undefined, { cause: signal.reason }));
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new AbortedError(undefined, { cause: signal?.reason }));
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * "Full jitter" exponential backoff: a uniformly random delay in [0, min(cap, base·2^attempt)].
 * `attempt` counts from 0. `random` is injectable for tests.
 */
export function backoffDelayMs(
  attempt: number,
  baseMs: number,
  capMs: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt));
  return Math.floor(random() * ceiling);
}
