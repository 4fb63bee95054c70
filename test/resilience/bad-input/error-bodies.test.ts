import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { AuthError, NotFoundError, QuotaExceededError, RateLimitedError } from '../../../src/api/index.js';
import type { DomainServiceClient } from '../../../src/api/index.js';
import { startProxiedSimulator } from './fixtures.js';
import type { ProxiedSimulator } from './fixtures.js';
import { EXTRA_KEY, EXTRA_VALUE, getAt, joinPath, setAt, wrongValues } from './spec-table.js';
import type { FieldType } from './spec-table.js';

/*
 * The bad-input matrix for the error bodies of docs/service-api.md "Errors": 401 (`success`, `message`,
 * `errors`, `timestamp`), 429 `quota_exceeded` (`error.code`, `error.message`, `error.details.
 * granted|used|reserved`) and 404 (envelope "not shown"). An error body is never a reason for a
 * second error: the status decides the class, and the body only adds what it can (the service's
 * message, the quota figures). A 429 whose `error.code` is not `quota_exceeded` is, by the
 * client's documented rule, a rate limit (a refusal, retried).
 */

let proxied: ProxiedSimulator;
let noCredits: ProxiedSimulator;
let wrongKeyClient: DomainServiceClient;
let quotaClient: DomainServiceClient;
let client: DomainServiceClient;

beforeAll(async () => {
  proxied = await startProxiedSimulator({ domains: 5, seed: 91 });
  noCredits = await startProxiedSimulator({ domains: 5, seed: 92, credits: 0, cacheWindowMs: 0 });
  wrongKeyClient = proxied.client({ apiKey: 'client_wrong_key_bad_input_401' });
  quotaClient = noCredits.client();
  client = proxied.client();
});

afterAll(async () => {
  await proxied?.close();
  await noCredits?.close();
});

interface BodyField {
  path: string;
  type: FieldType;
  known?: string[];
}

type Kind = 'missing' | 'null' | 'wrong type' | 'unseen enum value' | 'extra field';

interface BodyCase {
  name: string;
  kind: Kind;
  path: string;
  apply: (body: unknown) => void;
}

function bodyCases(fields: BodyField[], objects: string[]): BodyCase[] {
  const out: BodyCase[] = [];
  for (const f of fields) {
    out.push({
      name: `${f.path} · missing`,
      kind: 'missing',
      path: f.path,
      apply: (b) => setAt(b, f.path, undefined),
    });
    out.push({ name: `${f.path} · null`, kind: 'null', path: f.path, apply: (b) => setAt(b, f.path, null) });
    for (const w of wrongValues(f.type).slice(0, 1)) {
      out.push({
        name: `${f.path} · wrong type (${w.label})`,
        kind: 'wrong type',
        path: f.path,
        apply: (b) => setAt(b, f.path, w.value),
      });
    }
    if (f.known) {
      out.push({
        name: `${f.path} · unseen enum value`,
        kind: 'unseen enum value',
        path: f.path,
        apply: (b) => setAt(b, f.path, 'x_unseen_code'),
      });
    }
  }
  for (const o of objects) {
    out.push({
      name: `${joinPath(o, EXTRA_KEY)} · extra field`,
      kind: 'extra field',
      path: joinPath(o, EXTRA_KEY),
      apply: (b) => {
        (getAt(b, o) as Record<string, unknown>)[EXTRA_KEY] = EXTRA_VALUE;
      },
    });
  }
  return out;
}

const UNAUTHORIZED = bodyCases(
  [
    { path: 'success', type: 'boolean' },
    { path: 'message', type: 'string' },
    { path: 'errors', type: 'object' },
    { path: 'timestamp', type: 'timestamp' },
  ],
  [''],
);

const QUOTA = bodyCases(
  [
    { path: 'error', type: 'object' },
    { path: 'error.code', type: 'string', known: ['quota_exceeded'] },
    { path: 'error.message', type: 'string' },
    { path: 'error.details', type: 'object' },
    { path: 'error.details.granted', type: 'integer' },
    { path: 'error.details.used', type: 'integer' },
    { path: 'error.details.reserved', type: 'integer' },
  ],
  ['', 'error', 'error.details'],
);

describe('bad-input matrix: 401 body (docs/service-api.md "Errors")', () => {
  test.each(UNAUTHORIZED.map((c) => [c.name, c] as const))('%s → AuthError, not retried', async (_n, c) => {
    let sent: unknown;
    proxied.proxy.reset();
    proxied.proxy.setRules([
      {
        path: '/account',
        json: (body, status) => {
          expect(status).toBe(401);
          c.apply(body);
          sent = body;
          return body;
        },
      },
    ]);
    const error = await wrongKeyClient.getAccount().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthError);
    expect((error as AuthError).code).toBe('ERR_AUTH');
    expect((error as AuthError).status).toBe(401);
    const message = getAt(sent, 'message');
    expect((error as AuthError).message).toBe(
      `GET /account: the service rejected the API key (401${typeof message === 'string' ? ` ${message}` : ''}); check DOMAIN_SYNC_API_KEY`,
    );
    expect(proxied.proxy.requests).toHaveLength(1);
  });
});

describe('bad-input matrix: 429 quota_exceeded body (docs/service-api.md "Errors")', () => {
  test.each(QUOTA.map((c) => [c.name, c] as const))('%s', async (_n, c) => {
    const account = noCredits.sim.control.account();
    const real = {
      granted: account.credits_granted,
      used: account.credits_used,
      reserved: account.credits_reserved,
    };
    let sent: unknown;
    noCredits.proxy.reset();
    noCredits.proxy.setRules([
      {
        method: 'POST',
        path: '/enrichments',
        json: (body, status) => {
          expect(status).toBe(429);
          expect(getAt(body, 'error.code')).toBe('quota_exceeded');
          c.apply(body);
          sent = body;
          return body;
        },
      },
    ]);
    const domain = noCredits.sim.control.truth.listDomains()[0]!;
    const error = await quotaClient.startEnrichment({ domain }).catch((e: unknown) => e);
    const code = getAt(sent, 'error.code');
    if (code !== 'quota_exceeded') {
      // Not recognisably quota: a rate limit by the client's rule, a refusal retried (2 retries).
      expect(error).toBeInstanceOf(RateLimitedError);
      expect((error as RateLimitedError).code).toBe('ERR_RATE_LIMITED');
      expect(noCredits.proxy.requests).toHaveLength(3);
      return;
    }
    expect(error).toBeInstanceOf(QuotaExceededError);
    const quota = error as QuotaExceededError;
    expect(quota.code).toBe('ERR_QUOTA_EXCEEDED');
    expect(noCredits.proxy.requests).toHaveLength(1);
    // Each figure is kept when it is an integer in the body, dropped (undefined) otherwise.
    for (const name of ['granted', 'used', 'reserved'] as const) {
      const value = getAt(sent, `error.details.${name}`);
      expect(quota[name]).toBe(typeof value === 'number' ? real[name] : undefined);
    }
    if (c.kind === 'extra field' || !c.path.startsWith('error.details'))
      expect([quota.granted, quota.used, quota.reserved]).toEqual([real.granted, real.used, real.reserved]);
    const serviceMessage = getAt(sent, 'error.message');
    if (typeof serviceMessage === 'string') expect(quota.message).toContain(`: ${serviceMessage}`);
    else expect(quota.message).toMatch(/\(429 quota_exceeded[^)]*\)$/);
  });
});

describe('bad-input matrix: 404 body (envelope "not shown")', () => {
  test.each([
    ['an empty body', () => ''],
    ['a body that is not JSON', () => '<html>gone</html>'],
    ['an empty JSON object', () => '{}'],
    ['a JSON array', () => '[1,2]'],
    ['an extra field', (real: string) => JSON.stringify({ ...JSON.parse(real), [EXTRA_KEY]: EXTRA_VALUE })],
  ] as const)('%s → NotFoundError, not retried', async (_n, rewrite) => {
    proxied.proxy.reset();
    proxied.proxy.setRules([{ path: (p) => p.startsWith('/domains/'), text: (real) => rewrite(real) }]);
    const error = await client.getDomain('not-in-the-catalogue.example').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).code).toBe('ERR_NOT_FOUND');
    expect((error as NotFoundError).message).toMatch(
      /^GET \/domains\/not-in-the-catalogue\.example: not found \(404/,
    );
    expect(proxied.proxy.requests).toHaveLength(1);
  });
});
