import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { createClient, readProfileText } from '../../../src/api/index.js';
import { checkProfileText } from '../../../src/api/profile-text-check.js';
import type { ClientOptions, DomainServiceApi, DomainServiceClient } from '../../../src/api/index.js';
import {
  AuthError,
  ForeignOriginError,
  NetworkError,
  NotFoundError,
  OutcomeUnknownError,
  ProtocolError,
  QuotaExceededError,
  RateLimitedError,
} from '../../../src/api/index.js';
import { MemoryLogger } from '../../../src/log/logger.js';
import type { RunningSimulator, SimulatorOptions } from '../../../src/simulator/index.js';
import { startTestSimulator } from '../../helpers/start-simulator.js';

// One key for the whole file, so "the key never appears" covers every log line and error below.
const API_KEY = 'client_integration_api_suite_key_4f9a2c';
const logger = new MemoryLogger();
const errorsSeen: unknown[] = [];
const inspected: string[] = [];

async function sim(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  return startTestSimulator({ apiKeys: [API_KEY], domains: 200, ...options });
}

/** A client against `s` that records waits instead of sleeping (retry tests assert on them). */
function client(
  s: RunningSimulator,
  options: Partial<ClientOptions> = {},
): DomainServiceClient & { sleeps: number[] } {
  const sleeps: number[] = [];
  const c = createClient({
    baseUrl: s.baseUrl,
    apiKey: API_KEY,
    requestsPerSecond: Infinity,
    logger,
    random: () => 0.5,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    ...options,
  });
  inspected.push(inspect(c, { depth: 10, showHidden: true }), JSON.stringify(c));
  onTestFinished(() => c.close());
  return Object.assign(c, { sleeps });
}

/** Awaits `promise`, expecting a rejection; records it for the key check. */
async function failure(promise: Promise<unknown>): Promise<Error & { code: string }> {
  try {
    await promise;
  } catch (error) {
    errorsSeen.push(error);
    return error as Error & { code: string };
  }
  throw new Error('expected a rejection');
}

const realSleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(Object.assign(new Error('aborted'), { code: 'ERR_ABORTED' }));
    });
  });

afterAll(() => {
  // docs/contract.md "Promises": the key never appears in logs or error messages.
  expect(logger.events.length).toBeGreaterThan(50);
  expect(logger.text()).not.toContain(API_KEY);
  expect(errorsSeen.length).toBeGreaterThan(10);
  for (const error of errorsSeen) {
    const e = error as Error & { cause?: unknown };
    expect(e.message).not.toContain(API_KEY);
    expect(String(e.stack)).not.toContain(API_KEY);
    expect(JSON.stringify(e)).not.toContain(API_KEY);
    expect(inspect(e, { depth: 6 })).not.toContain(API_KEY);
  }
  for (const text of inspected) expect(text).not.toContain(API_KEY);
});

describe('authentication', () => {
  it('sends X-API-Key by default and Authorization: Bearer when asked, never both', async () => {
    const s = await sim();
    await client(s).getAccount();
    await client(s, { authHeader: 'bearer' }).getAccount();
    const auths = s.control.requests().map((r) => [r.auth, r.authValid]);
    expect(auths).toEqual([
      ['x-api-key', true],
      ['bearer', true],
    ]);
  });

  it('maps 401 to AuthError for either header, without retrying', async () => {
    const s = await sim();
    for (const authHeader of ['x-api-key', 'bearer'] as const) {
      const c = client(s, { apiKey: 'client_wrong_key_for_401', authHeader });
      const error = await failure(c.getAccount());
      expect(error).toBeInstanceOf(AuthError);
      expect(error.code).toBe('ERR_AUTH');
      expect((error as AuthError).status).toBe(401);
      expect(error.message).not.toContain('client_wrong_key_for_401');
    }
    expect(s.control.requests()).toHaveLength(2);
  });

  it('keeps the key out of util.inspect and JSON.stringify of the client', async () => {
    const s = await sim();
    const c = client(s);
    expect(inspect(c, { showHidden: true, depth: 20 })).not.toContain(API_KEY);
    expect(JSON.stringify(c)).not.toContain(API_KEY);
    expect(JSON.stringify(c)).toContain(s.baseUrl);
  });
});

describe('errors', () => {
  it('maps 404 to NotFoundError', async () => {
    const s = await sim();
    const error = await failure(client(s).getDomain('no-such-domain.example'));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.code).toBe('ERR_NOT_FOUND');
    expect(error.message).toContain('GET /domains/no-such-domain.example');
  });

  it('maps 429 quota_exceeded to QuotaExceededError and never retries it', async () => {
    const s = await sim({ credits: 5, cacheWindowMs: 0 });
    const [domain] = s.control.truth.listDomains();
    const error = await failure(client(s).startEnrichment({ domain: domain! }));
    expect(error).toBeInstanceOf(QuotaExceededError);
    expect(error.code).toBe('ERR_QUOTA_EXCEEDED');
    expect((error as QuotaExceededError).granted).toBe(5);
    expect(s.control.usage().filter((u) => u.endpoint === 'POST /enrichments')).toHaveLength(1);
  });

  it('maps a rate-limit 429 to RateLimitedError once retries are used up, honouring Retry-After', async () => {
    const s = await sim();
    s.control.setFaults([{ path: '/account', kind: 'rate_limit', retryAfterSeconds: 3 }]);
    const c = client(s, { maxRetries: 2 });
    const error = await failure(c.getAccount());
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error.code).toBe('ERR_RATE_LIMITED');
    expect((error as RateLimitedError).retryAfterMs).toBe(3000);
    expect(c.sleeps).toEqual([3000, 3000]);
    expect(s.control.requests()).toHaveLength(3);
  });

  it('honours Retry-After on a 503, clamped to retryAfterMaxMs', async () => {
    const s = await sim();
    s.control.setFaults([{ path: '/account', kind: 'status', status: 503, retryAfterSeconds: 7, times: 1 }]);
    const c = client(s);
    await c.getAccount();
    expect(c.sleeps).toEqual([7000]);
    s.control.setFaults([
      { path: '/account', kind: 'status', status: 503, retryAfterSeconds: 3600, times: 1 },
    ]);
    const clamped = client(s, { retryAfterMaxMs: 10_000 });
    await clamped.getAccount();
    expect(clamped.sleeps).toEqual([10_000]);
    const retryEvents = logger.events.filter((e) => e.msg === 'api retry' && e.fields.path === '/account');
    expect(retryEvents.some((e) => e.fields.retryAfterMs === 7000 && e.fields.delayMs === 7000)).toBe(true);
  });

  it('retries 5xx and resets on GETs, then succeeds', async () => {
    const s = await sim();
    const [domain] = s.control.truth.listDomains();
    s.control.setFaults([
      { path: '/domains/', kind: 'status', status: 500, times: 1 },
      { path: '/domains/', kind: 'reset', times: 1 },
      { path: '/domains/', kind: 'status', status: 502, times: 1 },
    ]);
    const c = client(s);
    const profile = await c.getDomain(domain!);
    expect(profile.domain_normalized).toBe(domain);
    expect(s.control.faultStats().total).toBe(3);
    expect(s.control.requests()).toHaveLength(4);
    // Full jitter with random 0.5: 125, 250, 500 ms.
    expect(c.sleeps).toEqual([125, 250, 500]);
  });

  it('gives ProtocolError for malformed JSON after the GET retries are exhausted', async () => {
    const s = await sim();
    s.control.setFaults([{ path: '/account', kind: 'malformed' }]);
    const error = await failure(client(s, { maxRetries: 2 }).getAccount());
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.code).toBe('ERR_PROTOCOL');
    expect((error as ProtocolError).failure).toBe('json');
    expect(s.control.faultStats().injected.malformed).toBe(3);
  });

  it('getDomainText retries what getDomain retries except the body, which readProfileText checks as getDomain does', async () => {
    const s = await sim();
    const [domain] = s.control.truth.listDomains();
    const expected = await client(s).getDomain(domain!);
    // A 503 and a truncated body are retried before any text is returned.
    s.control.setFaults([
      { path: '/domains/', kind: 'status', status: 503, times: 1 },
      { path: '/domains/', kind: 'truncate', times: 1 },
    ]);
    const text = await client(s).getDomainText(domain!);
    expect(s.control.faultStats().injected).toMatchObject({ status: 1, truncate: 1 });
    const { meta: _now, ...profile } = readProfileText(text, domain!);
    const { meta: _then, ...before } = expected;
    expect(profile).toEqual(before);
    // A body that is not JSON is returned as it came: reading it gives getDomain's ProtocolError,
    // retryable, and checkProfileText (the mirror writer's) the same code and message.
    s.control.setFaults([{ path: '/domains/', kind: 'malformed', times: 1 }]);
    const garbled = await client(s).getDomainText(domain!);
    expect(s.control.faultStats().injected.malformed).toBe(1);
    let error: unknown;
    try {
      readProfileText(garbled, domain!);
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error).toMatchObject({ code: 'ERR_PROTOCOL', failure: 'json', retryable: true });
    expect((error as Error).message).toMatch(
      new RegExp(`^GET /domains/${domain!.replace(/\./g, '\\.')}: response is not valid JSON`),
    );
    expect(checkProfileText(garbled, domain)).toEqual({
      failure: { code: 'ERR_PROTOCOL', message: (error as Error).message, retryable: true },
    });
    s.control.setFaults([{ path: '/domains/', kind: 'malformed' }]);
    const viaGetDomain = await failure(client(s, { maxRetries: 1 }).getDomain(domain!));
    const sized = (message: string): string => message.replace(/\(\d+ chars\)$/, '(n chars)');
    expect(sized(viaGetDomain.message)).toBe(sized((error as Error).message));
    expect(viaGetDomain).toMatchObject({ code: 'ERR_PROTOCOL', failure: 'json' });
  });

  it('readProfileText names the endpoint and the field of a profile that does not match, not retryable', () => {
    const body = JSON.stringify({ success: true, data: { domain_normalized: 5 } });
    let error: unknown;
    try {
      readProfileText(body, 'bücher.example');
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error).toMatchObject({ failure: 'schema', retryable: false, fieldPath: 'data.domain_normalized' });
    expect((error as Error).message).toBe(
      'GET /domains/b%C3%BCcher.example: data.domain_normalized: expected string, got number',
    );
    expect(checkProfileText(body, 'bücher.example')).toEqual({
      failure: { code: 'ERR_PROTOCOL', message: (error as Error).message, retryable: false },
    });
    expect(checkProfileText('{"success":true,"data":{"domain_normalized":"a.example"}}', undefined)).toEqual({
      profile: { domain_normalized: 'a.example' },
    });
    expect(checkProfileText('[]', undefined)).toMatchObject({
      failure: {
        code: 'ERR_PROTOCOL',
        message: expect.stringMatching(/^GET \/domains\/:domain: /),
        retryable: false,
      },
    });
  });

  it('gives ProtocolError for a truncated body after the GET retries are exhausted', async () => {
    const s = await sim();
    s.control.setFaults([{ path: '/domains', kind: 'truncate' }]);
    const error = await failure(client(s, { maxRetries: 1 }).searchDomains({ per_page: 50 }));
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).failure).toMatch(/truncated|json/);
    expect(s.control.faultStats().injected.truncate).toBe(2);
  });

  it('recovers from one truncated and one malformed body', async () => {
    const s = await sim();
    s.control.setFaults([
      { path: '/domains', kind: 'truncate', times: 1 },
      { path: '/domains', kind: 'malformed', times: 1 },
    ]);
    const page = await client(s).searchDomains({ per_page: 100 });
    expect(page.domains).toHaveLength(100);
  });

  it('gives NetworkError (requestSent false) when nothing listens, after retries', async () => {
    const s = await sim();
    const origin = s.origin;
    await s.close();
    const c = client({ ...s, baseUrl: `${origin}/api/v1/igaming` }, { maxRetries: 2 });
    const error = await failure(c.getAccount());
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).requestSent).toBe(false);
    expect(c.sleeps).toHaveLength(2);
  });

  it('refuses a bad per_page before sending', async () => {
    const s = await sim();
    const error = await failure(client(s).searchDomains({ per_page: 501 }));
    expect(error.code).toBe('ERR_INVALID_ARGUMENT');
    expect(s.control.requests()).toHaveLength(0);
  });
});

describe('credit-costing POSTs are never retried blindly', () => {
  for (const kind of ['status', 'reset'] as const) {
    it(`afterProcessing ${kind} on POST /enrichments → OutcomeUnknownError, exactly one POST`, async () => {
      const s = await sim({ cacheWindowMs: 0 });
      const [domain] = s.control.truth.listDomains();
      s.control.setFaults([
        { method: 'POST', path: '/enrichments', kind, status: 500, afterProcessing: true, times: 1 },
      ]);
      const c = client(s);
      const error = await failure(c.startEnrichment({ domain: domain! }));
      expect(error).toBeInstanceOf(OutcomeUnknownError);
      expect(error.code).toBe('ERR_OUTCOME_UNKNOWN');
      expect((error as OutcomeUnknownError).cause).toBeDefined();
      const posts = s.control.usage().filter((u) => u.endpoint === 'POST /enrichments');
      expect(posts).toHaveLength(1);
      expect(posts[0]!.credits).toBe(10); // the service did bill it
      expect(c.sleeps).toEqual([]);
    });
  }

  it('a truncated 202 on POST /exports → OutcomeUnknownError, one POST', async () => {
    const s = await sim();
    s.control.setFaults([
      { method: 'POST', path: '/exports', kind: 'truncate', afterProcessing: true, times: 1 },
    ]);
    const error = await failure(client(s).createExport({ filters: { jurisdiction: 'mga' } }));
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(s.control.usage().filter((u) => u.endpoint === 'POST /exports')).toHaveLength(1);
  });

  it('a rate-limit refusal on POST /enrichments is retried (the service did not process it)', async () => {
    const s = await sim({ cacheWindowMs: 0 });
    const [domain] = s.control.truth.listDomains();
    s.control.setFaults([
      { method: 'POST', path: '/enrichments', kind: 'rate_limit', retryAfterSeconds: 1, times: 1 },
    ]);
    const c = client(s);
    const result = await c.startEnrichment({ domain: domain! });
    expect(result.kind).toBe('started');
    expect(c.sleeps).toEqual([1000]);
    const posts = s.control.usage().filter((u) => u.endpoint === 'POST /enrichments');
    expect(posts.map((p) => [p.status, p.credits])).toEqual([
      [429, 0],
      [202, 10],
    ]);
  });

  it('a paid company search is not retried after a 5xx; the free preview is', async () => {
    const s = await sim();
    const c = client(s);
    s.control.setFaults([{ path: '/companies/search/preview', kind: 'status', status: 503, times: 2 }]);
    const preview = await c.companies.searchPreview({ q: '' });
    expect(preview.data).toMatchObject({ count: expect.any(Number) });
    expect(c.sleeps).toHaveLength(2);
    s.control.setFaults([{ path: '/companies/search', kind: 'status', status: 503, times: 1 }]);
    const error = await failure(c.companies.search({ q: '', per_page: 5 }));
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    const searched = await c.companies.search({ q: '', per_page: 5 });
    expect((searched.data as { companies: unknown[] }).companies).toHaveLength(5);
    const resolved = await c.companies.resolve({ domain: s.control.truth.listDomains()[0]! });
    expect(resolved.data).toMatchObject({ profiles: expect.any(Array) });
    const searches = s.control.usage().filter((u) => u.endpoint === 'GET /companies/search');
    expect(searches.map((u) => u.status)).toEqual([503, 200]);
  });
});

describe('tolerance (quirks)', () => {
  it('accepts unknown fields, enum values, timestamp spellings, nulls and Unicode domains', async () => {
    const s = await sim({ quirks: true, domains: 300 });
    const c = client(s, { concurrency: 16 });
    const listed: string[] = [];
    for await (const d of c.iterateDomains({}, { perPage: 100 })) listed.push(d.domain_normalized);
    expect(listed.sort()).toEqual([...s.control.truth.listDomains()].sort());
    const profiles = await Promise.all(listed.map((d) => c.getDomain(d)));
    const unicode = listed.find((d) => [...d].some((ch) => ch.charCodeAt(0) > 127));
    expect(unicode).toBeDefined();
    expect(profiles.some((p) => p.operator?.legal_entity_name === null)).toBe(true);
    expect(profiles.some((p) => p.x_sim_revision !== undefined)).toBe(true);
    expect(profiles.some((p) => p.licenses?.some((l) => !['active'].includes(String(l.status))))).toBe(true);
    expect(profiles.some((p) => p.payment_methods?.some((m) => m.confidence !== 'high'))).toBe(true);
    // The same profiles as texts, read by readProfileText: the profile getDomain validated.
    for (const domain of [unicode!, ...listed.slice(0, 20)]) {
      const text = await c.getDomainText(domain);
      const read = readProfileText(text, domain);
      // The same profile as getDomain gave (its freshness age counts on between the two requests).
      const { meta: _now, ...rest } = read;
      const { meta: _then, ...before } = profiles[listed.indexOf(domain)]!;
      expect(rest).toEqual(before);
      // The body's own `data`, unknown fields and nulls included.
      expect(read).toEqual((JSON.parse(text) as { data: unknown }).data);
    }
    const only = await c.getDomain(unicode!, { include: ['licenses'] });
    expect(only.domain_normalized).toBe(unicode);
    expect(only.payment_methods).toBeUndefined();
    const q = s.control.requests().at(-1)!;
    expect(q.path).toBe(`/domains/${unicode}`);
    expect(q.query).toEqual({ 'include[]': 'licenses' });
  });
});

describe('paging', () => {
  it('yields every domain of a 1,200-domain catalogue exactly once', async () => {
    const s = await sim({ domains: 1200 });
    const c = client(s);
    const seen: string[] = [];
    let pages = 0;
    for await (const page of c.iterateDomainPages({}, { perPage: 500 })) {
      pages++;
      expect(page.totalChanged).toBe(false);
      for (const d of page.domains) seen.push(d.domain_normalized);
    }
    expect(pages).toBe(3);
    expect(seen).toHaveLength(1200);
    expect(new Set(seen).size).toBe(1200);
    expect(new Set(seen)).toEqual(new Set(s.control.truth.listDomains()));
  });

  it('sends filters, page and per_page under their configured wire names', async () => {
    const names = { jurisdiction: 'lic', page: 'pg', per_page: 'limit' } as const;
    const s = await sim({ domains: 400, queryParamNames: names });
    const c = client(s, { queryParams: names });
    const seen: string[] = [];
    for await (const d of c.iterateDomains({ jurisdiction: 'mga' }, { perPage: 50 }))
      seen.push(d.domain_normalized);
    expect(seen).toEqual(s.control.truth.listDomains({ jurisdiction: 'mga' }));
    expect(s.control.requests()[0]!.query).toEqual({ lic: 'mga', limit: '50', pg: '1' });
  });
});

describe('enrichment runs and exports', () => {
  it('starts a run, waits for it, and returns it settled; a fresh domain is served from cache', async () => {
    const s = await sim({ timeScale: 0.005, runFailureRate: 0 });
    const c = client(s, { sleep: realSleep, pollIntervalMs: 20, maxPollIntervalMs: 100 });
    const [domain] = s.control.truth.listDomains();
    s.control.advanceClock(30 * 86_400_000); // make it stale, so a run starts
    const started = await c.startEnrichment({ domain: domain!, strategy: 'full' });
    expect(started.kind).toBe('started');
    if (started.kind !== 'started') return;
    const polls: string[] = [];
    const run = await c.waitForEnrichmentRun(started.runId, { onPoll: (r) => polls.push(r.status) });
    expect(run.status).toBe('completed');
    expect(run.enrichment?.domain_normalized).toBe(domain);
    expect(polls.at(-1)).toBe('completed');
    const again = await c.startEnrichment({ domain: domain! });
    expect(again.kind).toBe('cached');
    const viaPollUrl = await c.getEnrichmentRun(started.pollUrl);
    expect(viaPollUrl.id).toBe(started.runId);
  });

  it('times out polling with a clear error and can be cancelled', async () => {
    const s = await sim({ timeScale: 1, cacheWindowMs: 0 });
    const c = client(s, { sleep: realSleep, pollIntervalMs: 10 });
    const started = await c.startEnrichment({ domain: s.control.truth.listDomains()[0]! });
    if (started.kind !== 'started') throw new Error('expected a run');
    const timeout = await failure(c.waitForEnrichmentRun(started.runId, { deadlineMs: 60 }));
    expect(timeout.code).toBe('ERR_POLL_TIMEOUT');
    expect(timeout.message).toContain('pending');
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    const aborted = await failure(c.waitForEnrichmentRun(started.runId, { signal: controller.signal }));
    expect(aborted.code).toBe('ERR_ABORTED');
  });

  it('creates, waits for and stream-downloads an export', async () => {
    const s = await sim({ domains: 300, timeScale: 0.001 });
    const c = client(s, { sleep: realSleep, pollIntervalMs: 10 });
    const created = await c.createExport({
      filters: { jurisdiction: 'ukgc' },
      format: 'csv',
      fields: ['licenses'],
    });
    expect(s.control.requests().at(-1)!.body).toEqual({
      filters: { jurisdiction: 'ukgc' },
      export_format: 'csv',
      fields: ['licenses'],
    });
    const info = await c.waitForExport(created.exportId);
    expect(info.status).toBe('completed');
    const download = await c.downloadExport(info);
    expect(download.filename).toMatch(/^[A-Za-z0-9._-]+$/);
    expect(download.contentType).toMatch(/csv/);
    let text = '';
    for await (const chunk of download.body) text += String(chunk);
    const rows = text.trim().split('\n').length - 1; // header line
    expect(rows).toBe(info.total_rows);
    expect(rows).toBe(s.control.truth.listDomains({ jurisdiction: 'ukgc' }).length);
  });

  it('a download of a pending export is NotFoundError', async () => {
    const s = await sim({ timeScale: 1 });
    const c = client(s);
    const created = await c.createExport({ format: 'json' });
    const pending = await c.getExport(created.exportId);
    expect(pending.status).not.toBe('completed');
    const error = await failure(c.downloadExport(created.exportId));
    expect(error).toBeInstanceOf(NotFoundError);
  });
});

describe('foreign origins never receive the key', () => {
  it('refuses a foreign poll_url and download_url without sending anything there', async () => {
    const hits: string[] = [];
    const foreign = createServer((req, res) => {
      hits.push(`${req.method} ${req.url} ${JSON.stringify(req.headers)}`);
      res.end('{}');
    });
    await new Promise<void>((resolve) => foreign.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => foreign.close(() => resolve())));
    const foreignOrigin = `http://127.0.0.1:${(foreign.address() as AddressInfo).port}`;

    const s = await sim({ timeScale: 0.001, cacheWindowMs: 0 });
    s.control.setUrlStyle({ pollUrl: { origin: foreignOrigin }, downloadUrl: { origin: foreignOrigin } });
    const c: DomainServiceApi = client(s, { sleep: realSleep, pollIntervalMs: 10 });

    const started = await c.startEnrichment({ domain: s.control.truth.listDomains()[0]! });
    if (started.kind !== 'started') throw new Error('expected a run');
    expect(started.pollUrl.startsWith(foreignOrigin)).toBe(true);
    for (const attempt of [c.getEnrichmentRun(started.pollUrl), c.waitForEnrichmentRun(started.pollUrl)]) {
      const error = await failure(attempt);
      expect(error).toBeInstanceOf(ForeignOriginError);
      expect(error.code).toBe('ERR_FOREIGN_ORIGIN');
    }

    const created = await c.createExport({});
    expect((await failure(c.getExport(created.pollUrl))).code).toBe('ERR_FOREIGN_ORIGIN');
    const info = await c.waitForExport(created.exportId);
    expect(info.download_url?.startsWith(foreignOrigin)).toBe(true);
    expect((await failure(c.downloadExport(info))).code).toBe('ERR_FOREIGN_ORIGIN');
    expect((await failure(c.downloadExport(info.download_url!))).code).toBe('ERR_FOREIGN_ORIGIN');

    expect(hits).toEqual([]);
  });
});

describe('request log', () => {
  it('logs method, path, status and ms at debug level', async () => {
    const s = await sim();
    const c = client(s);
    await c.searchDomains({ jurisdiction: 'mga', per_page: 10 });
    const event = logger.events.filter((e) => e.msg === 'api request').at(-1)!;
    expect(event.level).toBe('debug');
    expect(event.fields).toMatchObject({
      method: 'GET',
      path: '/domains?jurisdiction=mga&per_page=10',
      status: 200,
      attempt: 1,
    });
    expect(typeof event.fields.ms).toBe('number');
  });
});
