import PQueue from 'p-queue';
import { AbortedError, DomainSyncError } from '../util/domain-sync-error.js';

/** The message a waiter dropped by {@link RequestLimiter.clear} is rejected with. */
const DROPPED = 'request dropped: the client was closed';

/** Settings of the client-side request limiter. */
export interface RequestLimiterOptions {
  /** Requests in flight at most. */
  concurrency: number;
  /** Requests started per second at most; `Infinity` (or 0) disables the rate limit. */
  requestsPerSecond: number;
}

/**
 * Caps requests in flight and request starts per second, for one client. The only file of
 * `src/api` that imports p-queue (used when a rate limit is set).
 *
 * Each HTTP attempt takes one slot, so a retry waits its turn again, and a backoff sleep holds
 * no slot. The rate is enforced as `k` starts per `k·1000/rps` ms with a sliding window (p-queue
 * `strict`), `k` chosen so the window is about 50 ms or more: 10 rps becomes 1 start per 100 ms,
 * not a burst of 10 every second. The service does not say whether it limits requests over time
 * (docs/service-api.md "What the interface leaves open"); this is courtesy, and 429s are still
 * handled by the retry policy.
 */
export class RequestLimiter {
  /** Set when a rate limit is configured: p-queue's sliding window does the timing. */
  readonly #queue: PQueue | undefined;
  readonly #concurrency: number;
  /** Without a rate limit: slots taken, and FIFO waiters for a free slot. */
  #active = 0;
  readonly #waiters: Array<{ start: () => void; cancel: (error: unknown) => void }> = [];

  constructor(options: RequestLimiterOptions) {
    this.#concurrency = Math.max(1, Math.floor(options.concurrency));
    const rps = options.requestsPerSecond;
    if (Number.isFinite(rps) && rps > 0) {
      const perWindow = Math.max(1, Math.ceil(rps / 20));
      this.#queue = new PQueue({
        concurrency: this.#concurrency,
        intervalCap: perWindow,
        interval: (perWindow * 1000) / rps,
        strict: true,
      });
    }
  }

  /**
   * Runs `task` when a slot is free. Rejects with {@link AbortedError} if `signal` aborts while
   * waiting; once started, the task handles the signal itself.
   */
  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) throw new AbortedError(undefined, { cause: signal.reason });
    if (this.#queue === undefined) return this.#runCounted(task, signal);
    let started = false;
    try {
      return await this.#queue.add(
        () => {
          started = true;
          return task();
        },
        { signal },
      );
    } catch (error) {
      // p-queue rejects a task aborted while waiting with the signal's reason, and one dropped by
      // clear() with its own AbortError (both DOMExceptions); callers match on our codes, so
      // each becomes AbortedError, the second with the message of the path without p-queue.
      if (signal?.aborted && !(error instanceof DomainSyncError)) {
        throw new AbortedError(undefined, { cause: signal.reason });
      }
      if (!started) throw new AbortedError(DROPPED, { cause: error });
      throw error;
    }
  }

  /**
   * No rate limit: only the number in flight is capped. A counter and a FIFO of waiters, because
   * this is the client's hot path (every request of a sync) and p-queue's per-task promise and
   * events cost measurable CPU per request for nothing a counter cannot do (the client benchmark
   * compares the client with a bare undici loop: docs/benchmarks.md "client").
   */
  async #runCounted<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.#active >= this.#concurrency) await this.#waitForSlot(signal);
    else this.#active++;
    try {
      return await task();
    } finally {
      const next = this.#waiters.shift();
      // The slot passes straight to the next waiter, so #active stays as it is.
      if (next) next.start();
      else this.#active--;
    }
  }

  #waitForSlot(signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        const at = this.#waiters.indexOf(waiter);
        if (at >= 0) this.#waiters.splice(at, 1);
        reject(new AbortedError(undefined, { cause: signal?.reason }));
      };
      const waiter = {
        start: (): void => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        cancel: (error: unknown): void => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  /** Requests waiting for a slot. */
  get waiting(): number {
    return this.#queue ? this.#queue.size : this.#waiters.length;
  }

  /** Requests holding a slot. */
  get running(): number {
    return this.#queue ? this.#queue.pending : this.#active;
  }

  /**
   * Drops waiting requests: they never start, and their `run()` rejects with
   * {@link AbortedError} (`ERR_ABORTED`). Used by `close()`; requests in flight go on.
   */
  clear(): void {
    if (this.#queue) {
      this.#queue.clear();
      return;
    }
    for (const waiter of this.#waiters.splice(0)) waiter.cancel(new AbortedError(DROPPED));
  }
}
