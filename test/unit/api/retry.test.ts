import { describe, expect, it } from 'vitest';
import {
  NetworkError,
  OutcomeUnknownError,
  ProtocolError,
  QuotaExceededError,
  RateLimitedError,
  ServerError,
  AuthError,
} from '../../../src/api/errors.js';
import { decideRetry, parseRetryAfterMs } from '../../../src/api/retry.js';
import type { RequestSafety, RetryPolicy } from '../../../src/api/retry.js';

const policy: RetryPolicy = {
  maxRetries: 3,
  baseDelayMs: 100,
  maxDelayMs: 1000,
  deadlineMs: 10_000,
  retryAfterMaxMs: 5000,
  random: () => 0.5,
};
const d = { method: 'GET', path: '/x' };

const errors = {
  server: new ServerError({ ...d, status: 503 }),
  rateLimited: new RateLimitedError({ ...d, status: 429 }, 2000),
  rateLimitedLong: new RateLimitedError({ ...d, status: 429 }, 600_000),
  quota: new QuotaExceededError({ ...d, status: 429 }, { granted: 1, used: 1, reserved: 0 }),
  auth: new AuthError({ ...d, status: 401 }),
  refused: new NetworkError(d, 'connect', false, 'refused'),
  reset: new NetworkError(d, 'reset', true, 'reset'),
  timeout: new NetworkError(d, 'timeout', true, 'timeout'),
  truncated: new ProtocolError({ ...d, status: 200 }, 'truncated', 'truncated'),
  malformed: new ProtocolError({ ...d, status: 200 }, 'json', 'bad json'),
  schema: new ProtocolError({ ...d, status: 200 }, 'schema', 'data.x: expected string', 'data.x'),
  plain: new Error('bug'),
};

type Expect = 'retry' | 'throw' | 'outcome-unknown';
const table: Array<[keyof typeof errors, RequestSafety, Expect]> = [
  ['server', 'safe', 'retry'],
  ['rateLimited', 'safe', 'retry'],
  ['quota', 'safe', 'throw'],
  ['auth', 'safe', 'throw'],
  ['refused', 'safe', 'retry'],
  ['reset', 'safe', 'retry'],
  ['timeout', 'safe', 'retry'],
  ['truncated', 'safe', 'retry'],
  ['malformed', 'safe', 'retry'],
  ['schema', 'safe', 'throw'],
  ['plain', 'safe', 'throw'],
  // Credit-costing: only a refusal or a connection never made is retried.
  ['server', 'credit', 'outcome-unknown'],
  ['rateLimited', 'credit', 'retry'],
  ['quota', 'credit', 'throw'],
  ['auth', 'credit', 'throw'],
  ['refused', 'credit', 'retry'],
  ['reset', 'credit', 'outcome-unknown'],
  ['timeout', 'credit', 'outcome-unknown'],
  ['truncated', 'credit', 'outcome-unknown'],
  ['malformed', 'credit', 'outcome-unknown'],
  ['schema', 'credit', 'throw'],
];

describe('decideRetry', () => {
  for (const [name, safety, expected] of table) {
    it(`${safety} request, ${name}: ${expected}`, () => {
      const error = errors[name];
      const decision = decideRetry(error, 0, 0, policy, safety);
      if (expected === 'retry') {
        expect(decision.retry).toBe(true);
      } else {
        expect(decision.retry).toBe(false);
        if (decision.retry) return;
        if (expected === 'throw') expect(decision.error).toBe(error);
        else {
          expect(decision.error).toBeInstanceOf(OutcomeUnknownError);
          expect((decision.error as OutcomeUnknownError).code).toBe('ERR_OUTCOME_UNKNOWN');
          expect((decision.error as OutcomeUnknownError).cause).toBe(error);
        }
      }
    });
  }

  it('uses full jitter backoff that doubles per retry, capped', () => {
    const delays = [0, 1, 2, 3].map((n) => {
      const decision = decideRetry(errors.server, n, 0, { ...policy, maxRetries: 10 }, 'safe');
      return decision.retry ? decision.delayMs : -1;
    });
    expect(delays).toEqual([50, 100, 200, 400]);
    const capped = decideRetry(errors.server, 9, 0, { ...policy, maxRetries: 10 }, 'safe');
    expect(capped.retry && capped.delayMs).toBe(500);
  });

  it('honours Retry-After instead of backoff, clamped to retryAfterMaxMs', () => {
    const decision = decideRetry(errors.rateLimited, 0, 0, policy, 'safe');
    expect(decision.retry && decision.delayMs).toBe(2000);
    const long = decideRetry(errors.rateLimitedLong, 0, 0, policy, 'safe');
    expect(long.retry && long.delayMs).toBe(5000);
  });

  it('stops after maxRetries', () => {
    expect(decideRetry(errors.server, 2, 0, policy, 'safe').retry).toBe(true);
    const last = decideRetry(errors.server, 3, 0, policy, 'safe');
    expect(last.retry).toBe(false);
    expect(!last.retry && last.reason).toBe('retries exhausted');
  });

  it('does not start a wait that ends past the deadline', () => {
    const decision = decideRetry(errors.rateLimited, 0, 9000, policy, 'safe');
    expect(decision.retry).toBe(false);
    expect(!decision.retry && decision.reason).toBe('retry deadline reached');
  });
});

describe('parseRetryAfterMs', () => {
  const now = Date.parse('2026-03-01T12:00:00Z');
  it.each([
    ['0', 0],
    ['3', 3000],
    [' 10 ', 10_000],
    ['1.5', 1500],
    ['Sun, 01 Mar 2026 12:00:30 GMT', 30_000],
    ['Sun, 01 Mar 2026 11:00:00 GMT', 0],
  ])('%s → %d ms', (value, expected) => {
    expect(parseRetryAfterMs(value, now)).toBe(expected);
  });
  it.each([[undefined], [''], ['soon'], ['-5']])('%s → undefined', (value) => {
    expect(parseRetryAfterMs(value, now)).toBeUndefined();
  });
});
