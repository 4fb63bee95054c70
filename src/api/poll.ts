import { AbortedError } from '../util/domain-sync-error.js';
import { PollTimeoutError } from './errors.js';

/** Options of a `waitFor…` call. Unset keys fall back to the client's options. */
export interface PollOptions<T = unknown> {
  /** Stops waiting (rejects with `AbortedError`). */
  signal?: AbortSignal | undefined;
  /**
   * Shortest wait between polls. A wait is `max(pollIntervalMs, elapsedFraction × elapsed)`, so a
   * settled run or export is noticed within that long of settling.
   * @default the client's `pollIntervalMs` (5000)
   */
  pollIntervalMs?: number | undefined;
  /**
   * Longest wait between polls.
   * @default the client's `maxPollIntervalMs` (60000)
   */
  maxPollIntervalMs?: number | undefined;
  /**
   * Share of the polled thing's elapsed time that a wait may grow to: a run that took 100 s is
   * noticed at most 10 s late, one that took 3 s within one interval.
   * @default 0.1
   */
  elapsedFraction?: number | undefined;
  /**
   * How long the polled thing had been going when polling started (a resumed run, say). An
   * underestimate only costs extra polls; never pass more than is known. @default 0
   */
  alreadyElapsedMs?: number | undefined;
  /**
   * Total time to wait before giving up with `PollTimeoutError` (`ERR_POLL_TIMEOUT`).
   * @default the client's `pollDeadlineMs` (1800000, 30 minutes)
   */
  deadlineMs?: number | undefined;
  /** Called with every polled value (settled or not), e.g. for progress. */
  onPoll?: ((value: T, pollNumber: number) => void) | undefined;
}

/** What {@link pollUntilSettled} needs besides the options. */
export interface PollTarget<T> {
  /** What is polled, for the timeout message, e.g. `enrichment run 42`. */
  subject: string;
  /** One poll request. */
  fetch: (signal: AbortSignal | undefined) => Promise<T>;
  /** Whether the value is final (done or failed). */
  isSettled: (value: T) => boolean;
  /** The value's status, for the timeout message. */
  statusOf: (value: T) => string | undefined;
  /** Clock and sleep (injectable for tests). */
  now: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** Default share of the elapsed time a wait between polls may grow to. */
export const DEFAULT_POLL_ELAPSED_FRACTION = 0.1;

/**
 * The wait before the next poll: `max(interval, fraction × elapsed)`, at most `maxInterval` and
 * at most what is left before the deadline. A poll at elapsed time `e` that saw no settled state
 * is followed by one at `e + wait`; whatever settled in between is seen at most `wait` late, and
 * `wait ≤ max(interval, fraction × settle time)` since the settle time is at least `e`.
 */
export function nextPollDelay(
  elapsedMs: number,
  options: { intervalMs: number; maxIntervalMs: number; fraction: number; remainingMs: number },
): number {
  const grown = Math.max(options.intervalMs, options.fraction * Math.max(0, elapsedMs));
  return Math.max(0, Math.min(grown, options.maxIntervalMs, options.remainingMs));
}

/**
 * Polls until `isSettled`, waiting {@link nextPollDelay} between polls. Returns the settled value even when it is a failure (openai-node `poll()`
 * style): the caller inspects the status. An unknown status counts as still in progress until
 * the deadline, then {@link PollTimeoutError}. Errors of the poll request itself propagate
 * (after the transport's own retries).
 */
export async function pollUntilSettled<T>(
  target: PollTarget<T>,
  options: Required<Pick<PollOptions<T>, 'pollIntervalMs' | 'maxPollIntervalMs' | 'deadlineMs'>> &
    PollOptions<T>,
): Promise<T> {
  const { signal } = options;
  const pollStarted = target.now();
  const started = pollStarted - Math.max(0, options.alreadyElapsedMs ?? 0);
  const fraction = options.elapsedFraction ?? DEFAULT_POLL_ELAPSED_FRACTION;
  const intervalMs = Math.max(0, options.pollIntervalMs);
  for (let pollNumber = 1; ; pollNumber++) {
    if (signal?.aborted) throw new AbortedError(undefined, { cause: signal.reason });
    const value = await target.fetch(signal);
    options.onPoll?.(value, pollNumber);
    if (target.isSettled(value)) return value;
    const now = target.now();
    const remaining = options.deadlineMs - (now - pollStarted);
    if (remaining <= 0)
      throw new PollTimeoutError(target.subject, options.deadlineMs, target.statusOf(value));
    const delay = nextPollDelay(now - started, {
      intervalMs,
      maxIntervalMs: options.maxPollIntervalMs,
      fraction,
      remainingMs: remaining,
    });
    await target.sleep(delay, signal);
  }
}
