import { AbortedError } from '../util/domain-sync-error.js';

/** The message a waiter dropped by {@link RequestLimiter.clear} is rejected with. */
const DROPPED = 'request dropped: the client was closed';

/** Settings of the client-side request limiter. */
export interface RequestLimiterOptions {
  /** Requests in flight at most. */
  concurrency: number;
  /** Requests started per second at most; `Infinity` (or 0) disables the rate limit. */
  requestsPerSecond: number;
}

/** A request waiting for a slot: `start` hands it one, `cancel` drops it. */
interface Waiter {
  start: () => void;
  cancel: (error: unknown) => void;
}

/**
 * Caps requests in flight and request starts per second, for one client.
 *
 * Each HTTP attempt takes one slot, so a retry waits its turn again, and a backoff sleep holds
 * no slot. Waiters start in the order they came. The rate is enforced as at most `k` starts in
 * any `k·1000/rps` ms (a sliding window over the start times still inside it), `k` chosen so the
 * window is about 50 ms or more: 10 rps becomes 1 start per 100 ms, not a burst of 10 every second.
 * The service does not say whether it limits requests over time (docs/service-api.md "What the
 * interface leaves open"); this is courtesy, and 429s are still handled by the retry policy.
 *
 * A counter, a FIFO and a ring of start times rather than p-queue, which did the rate limit
 * until 2026-11-27: this is the client's hot path (every request of a sync runs through it), and
 * p-queue's per-task promise race, abort listener, async-context binding and events cost a sync
 * with a rate set about a tenth of its CPU per profile (docs/benchmarks.md "sync").
 */
export class RequestLimiter {
  readonly #concurrency: number;
  /** Starts allowed per window (`k`) and the window's length; undefined: no rate limit. */
  readonly #window: { starts: number; ms: number } | undefined;
  /**
   * The times (performance.now()) of the latest starts, at most `k`, a ring whose oldest is at
   * #oldest: it only grows while all it holds are still in the window.
   */
  readonly #recentStarts: number[] = [];
  #oldest = 0;
  /** Slots taken. */
  #active = 0;
  readonly #waiters: Waiter[] = [];
  /** Wakes the waiters when the window next lets a request start. */
  #timer: NodeJS.Timeout | undefined;

  constructor(options: RequestLimiterOptions) {
    this.#concurrency = Math.max(1, Math.floor(options.concurrency));
    const rps = options.requestsPerSecond;
    if (Number.isFinite(rps) && rps > 0) {
      const starts = Math.max(1, Math.ceil(rps / 20));
      this.#window = { starts, ms: (starts * 1000) / rps };
    }
  }

  /**
   * Takes a slot now if one is free, the rate allows a start and nobody waits ahead: true, and
   * the caller must call {@link finish} when its request ends. False: call {@link waitToStart}.
   * Throws {@link AbortedError} if `signal` has aborted; once started, the request handles the
   * signal itself. Three calls rather than one `run(task)`, so that the caller (the transport's
   * retry loop, `#withRetries` in http-transport.ts) adds no promise layer to every request.
   */
  tryStart(signal?: AbortSignal): boolean {
    if (signal?.aborted) throw new AbortedError(undefined, { cause: signal.reason });
    return this.#waiters.length === 0 && this.#take();
  }

  /**
   * Resolves when the caller holds a slot (after {@link tryStart} returned false); rejects with
   * {@link AbortedError} if `signal` aborts first, or the limiter is cleared, holding none.
   */
  waitToStart(signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        const at = this.#waiters.indexOf(waiter);
        if (at >= 0) this.#waiters.splice(at, 1);
        // A wake-up for nobody would only hold the process open.
        if (this.#waiters.length === 0) this.#cancelWakeUp();
        reject(new AbortedError(undefined, { cause: signal?.reason }));
      };
      const waiter: Waiter = {
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

  /** Gives back the slot of a request that has ended, and starts whoever waits for it. */
  finish(): void {
    this.#active--;
    this.#startWaiters();
  }

  /** Takes a slot and records a start if both are free now; else false (and a wake-up is set). */
  #take(): boolean {
    if (this.#active >= this.#concurrency) return false;
    const window = this.#window;
    if (window !== undefined) {
      const now = performance.now();
      const recent = this.#recentStarts;
      const oldest = recent[this.#oldest];
      if (oldest !== undefined && oldest + window.ms <= now) {
        // The oldest start has left the window: this start takes its place in the ring.
        recent[this.#oldest] = now;
      } else if (recent.length < window.starts) {
        // Every start kept is still in the window and there is room: the ring grows by this one,
        // placed just before the oldest. So the ring never holds more than one window's starts,
        // however large `k` (a huge requestsPerSecond makes it millions).
        recent.splice(this.#oldest, 0, now);
      } else {
        this.#wakeIn(oldest! + window.ms - now);
        return false;
      }
      this.#oldest = (this.#oldest + 1) % recent.length;
    }
    this.#active++;
    return true;
  }

  #startWaiters(): void {
    while (this.#waiters.length > 0 && this.#take()) this.#waiters.shift()!.start();
  }

  #wakeIn(ms: number): void {
    if (this.#timer !== undefined) return;
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined;
        this.#startWaiters();
      },
      Math.max(1, Math.ceil(ms)),
    );
  }

  #cancelWakeUp(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Requests waiting for a slot. */
  get waiting(): number {
    return this.#waiters.length;
  }

  /** Requests holding a slot. */
  get running(): number {
    return this.#active;
  }

  /** Start times kept for the rate limit: never more than the starts within one window. */
  get startsKept(): number {
    return this.#recentStarts.length;
  }

  /**
   * Drops waiting requests: they never start, and their `waitToStart()` rejects with
   * {@link AbortedError} (`ERR_ABORTED`). Used by `close()`; requests in flight go on.
   */
  clear(): void {
    this.#cancelWakeUp();
    for (const waiter of this.#waiters.splice(0)) waiter.cancel(new AbortedError(DROPPED));
  }
}
