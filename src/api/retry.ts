import { backoffDelayMs } from '../util/sleep.js';
import { ApiError, NetworkError, OutcomeUnknownError, RateLimitedError, ServerError } from './errors.js';

/**
 * What a request may do when retried.
 *
 * - `safe`: costs nothing and changes nothing (every GET except the paid company endpoints);
 *   retried on any retryable error.
 * - `credit`: costs credits (POST /enrichments, POST /exports, GET /companies/search,
 *   GET /companies/resolve; docs/service-api.md "Limits and credits"); retried only when the
 *   service surely did not process it.
 */
export type RequestSafety = 'safe' | 'credit';

/** Retry settings, a slice of the client options. */
export interface RetryPolicy {
  /** Retries after the first attempt. */
  maxRetries: number;
  /** First backoff ceiling; doubles per retry. */
  baseDelayMs: number;
  /** Largest backoff ceiling. */
  maxDelayMs: number;
  /** Total time budget of one call, attempts and waits included. */
  deadlineMs: number;
  /** Largest `Retry-After` honoured; a longer one is clamped to this. */
  retryAfterMaxMs: number;
  /** Random source in [0, 1) for full jitter. */
  random: () => number;
}

/** The outcome of {@link decideRetry}. */
export type RetryDecision =
  | { retry: true; delayMs: number; reason: string; retryAfterMs: number | undefined }
  | { retry: false; reason: string; error: unknown };

/** `Retry-After` carried by an error, if any. */
export function retryAfterOf(error: unknown): number | undefined {
  if (error instanceof RateLimitedError || error instanceof ServerError) return error.retryAfterMs;
  return undefined;
}

/**
 * Whether a failed attempt of a credit-costing request surely did not reach the service.
 * A 429 that is not `quota_exceeded` is a refusal; a connection that was never made (refused,
 * DNS, connect timeout) carried nothing.
 */
export function surelyNotProcessed(error: unknown): boolean {
  if (error instanceof RateLimitedError) return true;
  if (error instanceof NetworkError) return !error.requestSent;
  return false;
}

/**
 * Turns the error of a credit-costing request into what the caller sees: a refusal or a
 * definite error stays as it is; an ambiguous one (5xx, reset or timeout after sending,
 * truncated or malformed body) becomes {@link OutcomeUnknownError} wrapping it.
 */
export function classifyCreditFailure(error: unknown): unknown {
  if (!(error instanceof ApiError)) return error;
  if (surelyNotProcessed(error)) return error;
  if (error.retryable) {
    return new OutcomeUnknownError({
      method: error.method,
      path: error.path,
      status: error.status,
      cause: error,
    });
  }
  return error;
}

/**
 * Decides whether to retry after attempt number `retriesSoFar` (0 = the first attempt failed).
 *
 * Reads only the error's `retryable` flag plus, for credit-costing requests,
 * {@link surelyNotProcessed}. Delay: the service's `Retry-After` when given (clamped to
 * `retryAfterMaxMs`), else exponential backoff with full jitter. Gives up when the retries are
 * used up or the wait would pass the call's deadline; the returned `error` is then what the
 * caller should throw (an {@link OutcomeUnknownError} for an ambiguous credit-costing failure).
 */
export function decideRetry(
  error: unknown,
  retriesSoFar: number,
  elapsedMs: number,
  policy: RetryPolicy,
  safety: RequestSafety,
): RetryDecision {
  const retryable = error instanceof ApiError && error.retryable;
  if (!retryable) return { retry: false, reason: 'not retryable', error };
  if (safety === 'credit' && !surelyNotProcessed(error)) {
    // Never a second paid request when the first may have been processed (docs/contract.md "Promises").
    return { retry: false, reason: 'outcome unknown', error: classifyCreditFailure(error) };
  }
  if (retriesSoFar >= policy.maxRetries) return { retry: false, reason: 'retries exhausted', error };
  const retryAfterMs = retryAfterOf(error);
  const delayMs =
    retryAfterMs !== undefined
      ? Math.min(Math.max(0, retryAfterMs), policy.retryAfterMaxMs)
      : backoffDelayMs(retriesSoFar, policy.baseDelayMs, policy.maxDelayMs, policy.random);
  if (elapsedMs + delayMs > policy.deadlineMs)
    return { retry: false, reason: 'retry deadline reached', error };
  return { retry: true, delayMs, reason: error.code, retryAfterMs };
}

export { parseRetryAfterMs } from './errors.js';
