import { AbortedError } from '../../util/domain-sync-error.js';
import { backoffDelayMs, sleep as realSleep } from '../../util/sleep.js';
import type { Clock } from '../../util/time.js';
import { StoreFailure } from './errors.js';

/**
 * How long a destination is retried (docs/contract.md "Destinations": one that cannot be reached
 * or keeps failing is given up within about a minute, retries included).
 */
export interface RetryPolicy {
  /**
   * A destination is given up once its operations have kept failing this long: the time is
   * counted from the first failure of an unbroken run of failures (any success starts it over),
   * and no attempt starts that could not fail before it is up.
   * @default 60_000
   */
  giveUpAfterMs: number;
  /** Ceiling of the first backoff ("full jitter": a random delay up to the ceiling). @default 500 */
  baseDelayMs: number;
  /** Largest backoff ceiling. @default 8_000 */
  maxDelayMs: number;
  /**
   * Longest one attempt can take to fail: the connect timeout, or the time without a byte moving
   * on the socket. An attempt is only started while this much time is left.
   * @default 15_000
   */
  attemptTimeoutMs: number;
}

/** The defaults: given up within 60 s, retries included. */
export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  giveUpAfterMs: 60_000,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  attemptTimeoutMs: 15_000,
});

/**
 * The retry policy for a destination given up after `giveUpAfterMs`: the attempt timeout is a
 * quarter of it (at most 15 s, at least 1 s), so at least a few attempts fit.
 */
export function retryPolicyFor(giveUpAfterMs: number): RetryPolicy {
  return {
    ...DEFAULT_RETRY_POLICY,
    giveUpAfterMs,
    attemptTimeoutMs: Math.max(
      1_000,
      Math.min(DEFAULT_RETRY_POLICY.attemptTimeoutMs, Math.floor(giveUpAfterMs / 4)),
    ),
  };
}

/** One retry about to happen, for the log. */
export interface RetryEvent {
  operation: string;
  /** The attempt that failed (1 = the first try). */
  attempt: number;
  delayMs: number;
  failure: StoreFailure;
}

/** Thrown when a retryable failure outlasted the policy: the last failure and the totals. */
export class RetriesExhausted extends Error {
  readonly failure: StoreFailure;
  readonly attempts: number;
  readonly failingForMs: number;

  constructor(failure: StoreFailure, attempts: number, failingForMs: number) {
    super(failure.message, { cause: failure });
    this.name = 'RetriesExhausted';
    this.failure = failure;
    this.attempts = attempts;
    this.failingForMs = failingForMs;
  }
}

/** What {@link RetryBudget} needs besides the policy. */
export interface RetryBudgetOptions {
  policy?: RetryPolicy;
  clock?: Clock;
  /** @default the abortable `sleep` of util/sleep.ts */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** @default Math.random */
  random?: () => number;
  signal?: AbortSignal;
  onRetry?: (event: RetryEvent) => void;
}

/**
 * The retries of one destination. Every operation on the destination runs through {@link run};
 * they share one clock of consecutive failures, so a destination that fails every operation is
 * given up after `giveUpAfterMs` in total, not per operation.
 */
export class RetryBudget {
  readonly policy: RetryPolicy;
  private readonly clock: Clock;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly random: () => number;
  private readonly signal: AbortSignal | undefined;
  private readonly onRetry: ((event: RetryEvent) => void) | undefined;
  /** When the current run of failures started, or null after a success. */
  private failingSince: number | null = null;
  /** Retries made so far (attempts after a failure), over every operation. */
  retries = 0;

  constructor(options: RetryBudgetOptions = {}) {
    this.policy = options.policy ?? DEFAULT_RETRY_POLICY;
    this.clock = options.clock ?? Date.now;
    this.sleep = options.sleep ?? realSleep;
    this.random = options.random ?? Math.random;
    this.signal = options.signal;
    this.onRetry = options.onRetry;
  }

  /**
   * Runs `attempt` until it succeeds, throws something not retryable (rethrown as is), or the
   * destination has failed for too long ({@link RetriesExhausted}). Only a {@link StoreFailure}
   * whose kind is retryable (`unreachable`, `server`) is retried; an abort is an
   * {@link AbortedError}.
   */
  async run<T>(operation: string, attempt: (attemptNumber: number) => Promise<T>): Promise<T> {
    for (let n = 1; ; n++) {
      if (this.signal?.aborted) throw new AbortedError(`${operation} aborted`, { cause: this.signal.reason });
      const startedAt = this.clock();
      try {
        const result = await attempt(n);
        this.failingSince = null;
        return result;
      } catch (error) {
        if (this.signal?.aborted)
          throw new AbortedError(`${operation} aborted`, { cause: this.signal.reason });
        if (!(error instanceof StoreFailure) || !error.retryable) throw error;
        const now = this.clock();
        // The run of failures started when the failed attempt did: a connect that hung counts.
        this.failingSince ??= startedAt;
        const failingFor = now - this.failingSince;
        const delayMs = backoffDelayMs(n - 1, this.policy.baseDelayMs, this.policy.maxDelayMs, this.random);
        // An attempt that cannot fail before the deadline is not started.
        if (failingFor + delayMs + this.policy.attemptTimeoutMs > this.policy.giveUpAfterMs) {
          throw new RetriesExhausted(error, n, failingFor);
        }
        this.retries++;
        this.onRetry?.({ operation, attempt: n, delayMs, failure: error });
        await this.sleep(delayMs, this.signal);
      }
    }
  }
}
