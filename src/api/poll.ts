import { AbortedError } from '../util/domain-sync-error.js';
import { PollTimeoutError } from './errors.js';

/** Options of a `waitFor…` call. Unset keys fall back to the client's options. */
export interface PollOptions<T = unknown> {
  /** Stops waiting (rejects with `AbortedError`). */
  signal?: AbortSignal | undefined;
  /**
   * First wait between polls; later waits grow by {@link PollOptions.backoffFactor}.
   * @default the client's `pollIntervalMs` (5000)
   */
  pollIntervalMs?: number | undefined;
  /**
   * Longest wait between polls.
   * @default the client's `maxPollIntervalMs` (60000)
   */
  maxPollIntervalMs?: number | undefined;
  /**
   * Growth of the wait after each poll that saw no settled state.
   * @default 1.5
   */
  backoffFactor?: number | undefined;
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

/** Default growth of the wait between polls. */
export const DEFAULT_POLL_BACKOFF_FACTOR = 1.5;

/**
 * Polls until `isSettled`, waiting `pollIntervalMs` first and growing by `backoffFactor` up to
 * `maxPollIntervalMs`. Returns the settled value even when it is a failure (openai-node `poll()`
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
  const started = target.now();
  const factor = options.backoffFactor ?? DEFAULT_POLL_BACKOFF_FACTOR;
  let interval = Math.max(0, options.pollIntervalMs);
  for (let pollNumber = 1; ; pollNumber++) {
    if (signal?.aborted) throw new AbortedError(undefined, { cause: signal.reason });
    const value = await target.fetch(signal);
    options.onPoll?.(value, pollNumber);
    if (target.isSettled(value)) return value;
    const elapsed = target.now() - started;
    const remaining = options.deadlineMs - elapsed;
    if (remaining <= 0)
      throw new PollTimeoutError(target.subject, options.deadlineMs, target.statusOf(value));
    await target.sleep(Math.min(interval, options.maxPollIntervalMs, remaining), signal);
    interval = Math.min(options.maxPollIntervalMs, Math.max(1, interval) * factor);
  }
}
