import PQueue from 'p-queue';
import { AbortedError, DomainSyncError } from '../util/domain-sync-error.js';

/** Settings of the client-side request limiter. */
export interface RequestLimiterOptions {
  /** Requests in flight at most. */
  concurrency: number;
  /** Requests started per second at most; `Infinity` (or 0) disables the rate limit. */
  requestsPerSecond: number;
}

/**
 * Caps requests in flight and request starts per second, for one client. The only file of
 * `src/api` that imports p-queue.
 *
 * Each HTTP attempt takes one slot, so a retry waits its turn again, and a backoff sleep holds
 * no slot. The rate is enforced as `k` starts per `k·1000/rps` ms with a sliding window (p-queue
 * `strict`), `k` chosen so the window is about 50 ms or more: 10 rps becomes 1 start per 100 ms,
 * not a burst of 10 every second. Time-based limits of the service are "not shown"
 * (api-spec.md "Limits"); this is courtesy, and 429s are still handled by the retry policy.
 */
export class RequestLimiter {
  readonly #queue: PQueue;

  constructor(options: RequestLimiterOptions) {
    const concurrency = Math.max(1, Math.floor(options.concurrency));
    const rps = options.requestsPerSecond;
    if (!Number.isFinite(rps) || rps <= 0) {
      this.#queue = new PQueue({ concurrency });
    } else {
      const perWindow = Math.max(1, Math.ceil(rps / 20));
      this.#queue = new PQueue({
        concurrency,
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
    try {
      return await this.#queue.add(task, { signal });
    } catch (error) {
      // p-queue rejects a task aborted while waiting with the signal's reason (a DOMException);
      // callers match on our codes, so that becomes AbortedError.
      if (signal?.aborted && !(error instanceof DomainSyncError)) {
        throw new AbortedError(undefined, { cause: signal.reason });
      }
      throw error;
    }
  }

  /** Requests waiting for a slot. */
  get waiting(): number {
    return this.#queue.size;
  }

  /** Requests holding a slot. */
  get running(): number {
    return this.#queue.pending;
  }

  /** Drops waiting requests (they never start). Used by `close()`. */
  clear(): void {
    this.#queue.clear();
  }
}
