import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { OutcomeUnknownError, ProtocolError } from '../../../src/api/index.js';
import type { DomainServiceClient } from '../../../src/api/index.js';
import { richDomain, startProxiedSimulator } from './fixtures.js';
import type { ProxiedSimulator } from './fixtures.js';
import type { ProxyRule } from './proxy.js';
import { caseName, getAt, matrixCases, SPEC_RESOURCES } from './spec-table.js';
import type { MatrixCase } from './spec-table.js';

/*
 * The bad-input matrix at the client: every resource and field of docs/service-api.md × {missing, null,
 * wrong type, unseen enum value, extra field}, served by the mutating proxy from a REAL simulator
 * answer. Each row asserts either the exact value the client hands on (tolerated) or a
 * ProtocolError whose field path is exactly the mutated field, sent once (a schema mismatch would
 * come back the same, so it is never retried). What the mirror then stores is in
 * mirror-sync.test.ts and mirror-jobs.test.ts.
 */

let main: ProxiedSimulator;
let cached: ProxiedSimulator;
let client: DomainServiceClient;
let cachedClient: DomainServiceClient;
let profileDomain: string;
let completedRunId: number;
let failedRunId: number;
let exportId: number;
let enrichTargets: string[];

beforeAll(async () => {
  // Runs settle within milliseconds of simulator time; half of them fail (seeded).
  main = await startProxiedSimulator({
    domains: 40,
    seed: 81,
    cacheWindowMs: 0,
    runFailureRate: 0.5,
    timeScale: 0.0001,
    exportReadyMs: 1,
  });
  cached = await startProxiedSimulator({ domains: 6, seed: 82, cacheWindowMs: 10 * 365 * 86_400_000 });
  client = main.client();
  cachedClient = cached.client();
  profileDomain = richDomain(main.sim);
  enrichTargets = main.sim.control.truth.listDomains();
  const runs: number[] = [];
  for (const domain of enrichTargets.slice(0, 8)) {
    const answer = await client.startEnrichment({ domain });
    if (answer.kind === 'started') runs.push(answer.runId);
  }
  main.sim.control.advanceClock(200_000);
  const statusOf = (id: number) => (main.sim.control.truth.run(id) as { status: string }).status;
  completedRunId = runs.find((id) => statusOf(id) === 'completed')!;
  failedRunId = runs.find((id) => statusOf(id) === 'failed')!;
  expect(completedRunId).toBeTypeOf('number');
  expect(failedRunId).toBeTypeOf('number');
  const created = await client.createExport({ format: 'json', filters: { jurisdiction: 'mga' } });
  main.sim.control.advanceClock(1_000);
  exportId = created.exportId;
  expect((main.sim.control.truth.export(exportId) as { status: string }).status).toBe('completed');
});

afterAll(async () => {
  await main?.close();
  await cached?.close();
});

/** How one resource is requested, which proxy rule serves it, and which part of the body the result is. */
interface Route {
  proxied: () => ProxiedSimulator;
  method: string;
  path: ProxyRule['path'];
  call: () => Promise<unknown>;
  /** The body path the (unwrapped) result corresponds to; fields outside it are not read back. */
  resultRoot: string;
  /** Unwraps the client's result to that part of the body. */
  unwrap?: (result: unknown) => unknown;
}

let enrichIndex = 8;
const ROUTES: Record<string, Route> = {
  'GET /account': {
    proxied: () => main,
    method: 'GET',
    path: '/account',
    call: () => client.getAccount(),
    resultRoot: 'data',
  },
  'GET /domains': {
    proxied: () => main,
    method: 'GET',
    path: '/domains',
    call: () => client.searchDomains({ per_page: 5 }),
    resultRoot: 'data',
  },
  'GET /domains/:domain': {
    proxied: () => main,
    method: 'GET',
    path: (p) => p.startsWith('/domains/'),
    call: () => client.getDomain(profileDomain),
    resultRoot: 'data',
  },
  'POST /enrichments cached': {
    proxied: () => cached,
    method: 'POST',
    path: '/enrichments',
    call: async () => {
      const answer = await cachedClient.startEnrichment({
        domain: cached.sim.control.truth.listDomains()[0]!,
      });
      expect(answer.kind).toBe('cached');
      return answer;
    },
    resultRoot: 'data',
    unwrap: (answer) => (answer as { raw: unknown }).raw,
  },
  'POST /enrichments started': {
    proxied: () => main,
    method: 'POST',
    path: '/enrichments',
    call: async () => {
      // A fresh domain each time: every row starts (and pays for) its own run.
      const domain = enrichTargets[enrichIndex++ % enrichTargets.length]!;
      const answer = await client.startEnrichment({ domain });
      expect(answer.kind).toBe('started');
      return answer;
    },
    resultRoot: 'data',
    unwrap: (answer) => (answer as { raw: unknown }).raw,
  },
  'GET /enrichment_runs/:id completed': {
    proxied: () => main,
    method: 'GET',
    path: /^\/enrichment_runs\/\d+$/,
    call: () => client.getEnrichmentRun(completedRunId),
    resultRoot: 'data',
  },
  'GET /enrichment_runs/:id failed': {
    proxied: () => main,
    method: 'GET',
    path: /^\/enrichment_runs\/\d+$/,
    call: () => client.getEnrichmentRun(failedRunId),
    resultRoot: 'data',
  },
  'POST /exports': {
    proxied: () => main,
    method: 'POST',
    path: '/exports',
    call: () => client.createExport({ format: 'json', filters: { jurisdiction: 'ukgc' } }),
    resultRoot: 'data',
    unwrap: (created) => (created as { raw: unknown }).raw,
  },
  'GET /exports/:id': {
    proxied: () => main,
    method: 'GET',
    path: /^\/exports\/\d+$/,
    call: () => client.getExport(exportId),
    resultRoot: 'data',
  },
};

function routeOf(c: MatrixCase): Route {
  const key =
    c.resource.name === 'enrichment cached (200)'
      ? 'POST /enrichments cached'
      : c.resource.name === 'enrichment started (202)'
        ? 'POST /enrichments started'
        : c.resource.name === 'enrichment run (completed)'
          ? 'GET /enrichment_runs/:id completed'
          : c.resource.name === 'enrichment run (failed)'
            ? 'GET /enrichment_runs/:id failed'
            : c.resource.endpoint;
  const route = ROUTES[key];
  if (!route) throw new Error(`no route for ${key}`);
  return route;
}

const CASES = matrixCases();

describe('bad-input matrix: the client', () => {
  test('covers every resource of the spec', () => {
    expect(new Set(CASES.map((c) => c.resource.name))).toEqual(new Set(SPEC_RESOURCES.map((r) => r.name)));
  });

  test.each(CASES.map((c) => [caseName(c), c] as const))('%s', async (_name, c) => {
    const route = routeOf(c);
    const { proxy } = route.proxied();
    proxy.reset();
    proxy.setRules([
      {
        method: route.method,
        path: route.path,
        json: (body) => {
          c.apply(body);
          return body;
        },
      },
    ]);
    let result: unknown;
    let error: unknown;
    try {
      result = await route.call();
    } catch (e) {
      error = e;
    }
    const served = proxy.requests.filter((r) => r.rewritten);
    // Exactly one mutated answer was served: tolerated rows need no retry, and a schema
    // mismatch is never retried (it would come back the same).
    expect(served).toHaveLength(1);
    if (c.expect.outcome === 'error') {
      if (route.method === 'POST') {
        // A 2xx answer to a paid POST that cannot be read: processed (maybe billed), result
        // unknown. Never a plain refusal, so no caller pays again; the message names the field.
        expect(error).toBeInstanceOf(OutcomeUnknownError);
        expect((error as OutcomeUnknownError).code).toBe('ERR_OUTCOME_UNKNOWN');
        expect((error as OutcomeUnknownError).retryable).toBe(false);
        expect(
          (error as OutcomeUnknownError).message.endsWith(`: ${c.expect.fieldPath}: ${c.expect.expected}`),
        ).toBe(true);
        error = (error as OutcomeUnknownError).cause;
      }
      expect(error, 'expected a ProtocolError').toBeInstanceOf(ProtocolError);
      const protocol = error as ProtocolError;
      expect(protocol.code).toBe('ERR_PROTOCOL');
      expect(protocol.failure).toBe('schema');
      expect(protocol.retryable).toBe(false);
      expect(protocol.fieldPath).toBe(c.expect.fieldPath);
      expect(protocol.message).toMatch(new RegExp(`^${route.method} /\\S+: `));
      expect(protocol.message.endsWith(`: ${c.expect.fieldPath}: ${c.expect.expected}`)).toBe(true);
      return;
    }
    expect(error).toBeUndefined();
    const unwrapped = route.unwrap ? route.unwrap(result) : result;
    if (c.path === route.resultRoot || c.path.startsWith(`${route.resultRoot}.`)) {
      const relative = c.path.slice(route.resultRoot.length + 1);
      const value = getAt(unwrapped, relative);
      expect(value).toEqual(c.expect.value);
      if (c.kind === 'missing') {
        const parentPath = relative.includes('.') ? relative.slice(0, relative.lastIndexOf('.')) : '';
        const parent = parentPath === '' ? unwrapped : getAt(unwrapped, parentPath);
        expect(Object.keys(parent as object)).not.toContain(relative.slice(relative.lastIndexOf('.') + 1));
      }
    }
  });
});
