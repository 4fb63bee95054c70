import { describe, expect, it } from 'vitest';
import {
  ApiError,
  AuthError,
  BadRequestError,
  errorFromResponse,
  NotFoundError,
  QuotaExceededError,
  RateLimitedError,
  ServerError,
} from '../../../src/api/errors.js';
import { registerSecret } from '../../../src/log/redact.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');

interface Scenario {
  name: string;
  status: number;
  headers?: Record<string, string>;
  body: unknown;
  type: new (...args: never[]) => ApiError;
  code: string;
  retryable: boolean;
  extra?: (error: ApiError) => void;
}

// One table of scenarios, the same assertions for each (as undici's own error tests do).
const scenarios: Scenario[] = [
  {
    name: '401 with the documented body',
    status: 401,
    body: { success: false, message: 'Unauthorized', errors: {}, timestamp: '2026-01-01T00:00:00Z' },
    type: AuthError,
    code: 'ERR_AUTH',
    retryable: false,
  },
  { name: '403', status: 403, body: 'Forbidden', type: AuthError, code: 'ERR_AUTH', retryable: false },
  {
    name: '404 domain not found',
    status: 404,
    body: { success: false, message: 'Domain not found', errors: {} },
    type: NotFoundError,
    code: 'ERR_NOT_FOUND',
    retryable: false,
  },
  {
    name: '429 quota_exceeded',
    status: 429,
    headers: { 'retry-after': '5' },
    body: {
      error: {
        code: 'quota_exceeded',
        message: 'Credit balance exhausted',
        details: { granted: 100, used: 95, reserved: 5 },
      },
    },
    type: QuotaExceededError,
    code: 'ERR_QUOTA_EXCEEDED',
    retryable: false,
    extra: (error) => {
      const quota = error as QuotaExceededError;
      expect([quota.granted, quota.used, quota.reserved]).toEqual([100, 95, 5]);
      expect(error.message).toContain('granted 100');
    },
  },
  {
    name: '429 rate limited with Retry-After seconds',
    status: 429,
    headers: { 'retry-after': '3' },
    body: { error: { code: 'rate_limited', message: 'Too many requests' } },
    type: RateLimitedError,
    code: 'ERR_RATE_LIMITED',
    retryable: true,
    extra: (error) => expect((error as RateLimitedError).retryAfterMs).toBe(3000),
  },
  {
    name: '429 rate limited with an HTTP-date Retry-After',
    status: 429,
    headers: { 'retry-after': new Date(NOW + 7000).toUTCString() },
    body: '',
    type: RateLimitedError,
    code: 'ERR_RATE_LIMITED',
    retryable: true,
    extra: (error) => expect((error as RateLimitedError).retryAfterMs).toBe(7000),
  },
  {
    name: '429 without a body or Retry-After',
    status: 429,
    body: undefined,
    type: RateLimitedError,
    code: 'ERR_RATE_LIMITED',
    retryable: true,
    extra: (error) => expect((error as RateLimitedError).retryAfterMs).toBeUndefined(),
  },
  {
    name: '500',
    status: 500,
    body: '<html>oops</html>',
    type: ServerError,
    code: 'ERR_SERVER',
    retryable: true,
  },
  {
    name: '503 with Retry-After',
    status: 503,
    headers: { 'retry-after': '2' },
    body: { message: 'maintenance' },
    type: ServerError,
    code: 'ERR_SERVER',
    retryable: true,
    extra: (error) => expect((error as ServerError).retryAfterMs).toBe(2000),
  },
  {
    name: '400 validation with the service message',
    status: 400,
    body: { success: false, message: 'Validation failed', errors: { per_page: ['must be at most 500'] } },
    type: BadRequestError,
    code: 'ERR_BAD_REQUEST',
    retryable: false,
    extra: (error) => expect((error as BadRequestError).serviceMessage).toBe('Validation failed'),
  },
  {
    name: '422',
    status: 422,
    body: { message: 'Unprocessable' },
    type: BadRequestError,
    code: 'ERR_BAD_REQUEST',
    retryable: false,
  },
  {
    name: '405',
    status: 405,
    body: { message: 'Method Not Allowed' },
    type: BadRequestError,
    code: 'ERR_BAD_REQUEST',
    retryable: false,
  },
];

describe('errorFromResponse', () => {
  for (const s of scenarios) {
    it(`maps ${s.name}`, () => {
      const error = errorFromResponse('GET', '/domains/example.com', s.status, s.headers ?? {}, s.body, NOW);
      expect(error).toBeInstanceOf(s.type);
      expect(error).toBeInstanceOf(ApiError);
      expect(error.code).toBe(s.code);
      expect(error.retryable).toBe(s.retryable);
      expect(error.status).toBe(s.status);
      expect(error.method).toBe('GET');
      expect(error.path).toBe('/domains/example.com');
      expect(error.message.startsWith('GET /domains/example.com: ')).toBe(true);
      expect(error.message).not.toContain('\n');
      s.extra?.(error);
    });
  }

  it('keeps a shortened, redacted body and never the key', () => {
    const key = 'client_unit_errors_secret_1';
    registerSecret(key);
    const long = { message: `bad key ${key}`, padding: 'x'.repeat(5000) };
    const error = errorFromResponse('GET', `/domains?key=${key}`, 500, {}, long, NOW);
    expect(error.body!.length).toBeLessThan(600);
    expect(error.body).not.toContain(key);
    expect(error.message).not.toContain(key);
    expect(JSON.stringify(error)).not.toContain(key);
    expect(error.path).not.toContain(key);
  });
});
