import { describe, expect, it } from 'vitest';
import { classifyStoreError } from '../../../src/destinations/s3/classify.js';
import { StoreFailure } from '../../../src/destinations/s3/errors.js';
import {
  DEFAULT_RETRY_POLICY,
  RetriesExhausted,
  RetryBudget,
  retryPolicyFor,
} from '../../../src/destinations/s3/retry.js';
import { AbortedError } from '../../../src/util/domain-sync-error.js';

/** A budget on a fake clock: sleeping and failing attempts move time, nothing waits. */
function fakeBudget(policy = DEFAULT_RETRY_POLICY, random = () => 1) {
  let now = 1_000_000;
  const sleeps: number[] = [];
  const budget = new RetryBudget({
    policy,
    clock: () => now,
    random,
    sleep: async (ms) => {
      sleeps.push(ms);
      now += ms;
    },
  });
  return { budget, sleeps, advance: (ms: number) => (now += ms), now: () => now };
}

const unreachable = () =>
  new StoreFailure('unreachable', 'no answer (ECONNREFUSED)', { storeCode: 'ECONNREFUSED' });

describe('RetryBudget: a destination that keeps failing is given up within about a minute', () => {
  it('instant failures (a refused connection): retried with growing backoff, given up before 60 s', async () => {
    const { budget, sleeps, now } = fakeBudget();
    const start = now();
    let attempts = 0;
    const error = await budget
      .run('list', async () => {
        attempts++;
        throw unreachable();
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RetriesExhausted);
    expect((error as RetriesExhausted).attempts).toBe(attempts);
    expect(attempts).toBeGreaterThanOrEqual(5);
    // Backoff ceilings double from 500 ms up to 8 s (random() = 1 takes the ceiling).
    expect(sleeps.slice(0, 5)).toEqual([500, 1000, 2000, 4000, 8000]);
    expect(now() - start).toBeLessThanOrEqual(DEFAULT_RETRY_POLICY.giveUpAfterMs);
  });

  it('attempts that hang until their timeout: the total stays within giveUpAfterMs', async () => {
    const { budget, advance, now } = fakeBudget();
    const start = now();
    await expect(
      budget.run('HEAD k', async () => {
        advance(DEFAULT_RETRY_POLICY.attemptTimeoutMs);
        throw new StoreFailure('unreachable', 'no answer (TimeoutError)');
      }),
    ).rejects.toBeInstanceOf(RetriesExhausted);
    expect(now() - start).toBeLessThanOrEqual(DEFAULT_RETRY_POLICY.giveUpAfterMs);
    expect(now() - start).toBeGreaterThanOrEqual(DEFAULT_RETRY_POLICY.giveUpAfterMs / 2);
  });

  it('a success starts the clock over; the clock is shared by every operation of the destination', async () => {
    const { budget } = fakeBudget(retryPolicyFor(10_000));
    let calls = 0;
    // Fails twice, then works: fine.
    await expect(
      budget.run('a', async () => {
        if (++calls <= 2) throw new StoreFailure('server', 'HTTP 500', { status: 500 });
        return 'ok';
      }),
    ).resolves.toBe('ok');
    expect(budget.retries).toBe(2);
    // Many operations, each failing then working: never given up.
    for (let i = 0; i < 20; i++) {
      let n = 0;
      await budget.run(`op ${i}`, async () => {
        if (++n === 1) throw new StoreFailure('server', 'HTTP 503', { status: 503 });
      });
    }
    expect(budget.retries).toBe(22);
  });

  it('does not retry what retrying cannot fix, and stops on an abort', async () => {
    const { budget } = fakeBudget();
    let attempts = 0;
    const auth = new StoreFailure('auth', 'refused');
    await expect(
      budget.run('list', async () => {
        attempts++;
        throw auth;
      }),
    ).rejects.toBe(auth);
    expect(attempts).toBe(1);
    const controller = new AbortController();
    const aborting = new RetryBudget({ signal: controller.signal, sleep: async () => {} });
    await expect(
      aborting.run('upload', async () => {
        controller.abort();
        throw unreachable();
      }),
    ).rejects.toBeInstanceOf(AbortedError);
  });

  it('retryPolicyFor scales the attempt timeout to the deadline', () => {
    expect(retryPolicyFor(60_000).attemptTimeoutMs).toBe(15_000);
    expect(retryPolicyFor(8_000).attemptTimeoutMs).toBe(2_000);
    expect(retryPolicyFor(1_000).attemptTimeoutMs).toBe(1_000);
  });
});

/** An SDK-like error: what @aws-sdk/client-s3 throws (name, message, $metadata). */
function sdkError(name: string, status: number | undefined, message = name, extra: object = {}): Error {
  return Object.assign(new Error(message), { name, $metadata: { httpStatusCode: status }, ...extra });
}

describe('classifyStoreError', () => {
  it.each([
    [
      'NoSuchBucket',
      sdkError('NoSuchBucket', 404, 'The specified bucket does not exist'),
      'not_found',
      false,
    ],
    ['InvalidAccessKeyId', sdkError('InvalidAccessKeyId', 403), 'auth', false],
    ['SignatureDoesNotMatch', sdkError('SignatureDoesNotMatch', 403), 'auth', false],
    ['a bare 403 of a HEAD', sdkError('Forbidden', 403, 'UnknownError'), 'auth', false],
    [
      'no credentials',
      Object.assign(new Error('Could not load credentials from any providers'), {
        name: 'CredentialsProviderError',
      }),
      'auth',
      false,
    ],
    ['no region', new Error('Region is missing'), 'failed', false],
    ['500', sdkError('InternalError', 500), 'server', true],
    ['503 SlowDown', sdkError('SlowDown', 503), 'server', true],
    ['429', sdkError('TooManyRequests', 429), 'server', true],
    ['an HTML 502 from a proxy', sdkError('Unknown', 502, 'UnknownError'), 'server', true],
    [
      'connection refused',
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }),
      'unreachable',
      true,
    ],
    [
      'reset, wrapped',
      Object.assign(new Error('upload failed'), {
        cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
      }),
      'unreachable',
      true,
    ],
    ['socket hang up', new Error('socket hang up'), 'unreachable', true],
    [
      'timeout',
      sdkError('TimeoutError', undefined, 'Connection timed out after 5000 ms'),
      'unreachable',
      true,
    ],
    ['400 InvalidArgument', sdkError('InvalidArgument', 400), 'failed', false],
  ])('%s', (_label, error, kind, retryable) => {
    const failure = classifyStoreError(error);
    expect(failure.kind).toBe(kind);
    expect(failure.retryable).toBe(retryable);
  });

  it('never copies what a refused signature carries beyond the message', () => {
    const error = sdkError(
      'SignatureDoesNotMatch',
      403,
      'The request signature we calculated does not match',
      {
        StringToSign: 'AWS4-HMAC-SHA256 secret-bits',
        CanonicalRequest: 'PUT /x host:y',
        $response: { headers: { authorization: 'AWS4-HMAC-SHA256 Credential=AKIA…' } },
      },
    );
    const failure = classifyStoreError(error);
    expect(failure.message).not.toMatch(/secret-bits|Credential|CanonicalRequest|host:y/);
  });
});
