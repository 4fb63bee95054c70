import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { exportPipeline } from '../../../pipelines/export/index.js';
import { syncPipeline } from '../../../pipelines/sync.js';
import { BadRequestError, ProtocolError } from '../../../src/api/index.js';
import type { RunningSimulator } from '../../../src/simulator/index.js';
import { runCli } from '../../helpers/cli.js';
import { queryMirror } from '../../helpers/mirror.js';
import { openTestContext } from '../../helpers/test-context.js';
import { scale } from '../mode.js';
import { richDomain, startProxiedSimulator } from './fixtures.js';
import type { ProxiedSimulator } from './fixtures.js';
import { getAt } from './spec-table.js';

/*
 * Hostile strings (SQL fragments, LIKE wildcards, quotes, RTL and combining marks, emoji, NUL,
 * very long values) as domain names served by the service and as filter values given by the
 * user; and a response over the client's body cap. Each must round-trip byte-exact (and be
 * percent-encoded on the wire) or be refused with a clear error, never half-written.
 */

const LONG = scale(100_000, 1_000_000);
const HOSTILE: ReadonlyArray<readonly [string, string]> = [
  ['SQL fragment', "x'; DROP TABLE domains; --.example"],
  ['LIKE wildcards', '100%_off_.example'],
  ['quotes and backslash', `"quoted" 'single' \\back.example`],
  ['URL metacharacters', 'a/b?c=d&e#f%2F..%00.example'],
  ['RTL override and Arabic', '\u202Eevil\u202C.مرحبا.example'],
  ['combining marks', 'e\u0301\u0301\u0327.example'],
  ['emoji (astral plane)', '🎰🎲👩‍👩‍👧.example'],
  ['NUL inside', 'nul\u0000byte.example'],
  [`${LONG / 1000} KB long`, `${'a'.repeat(LONG)}.example`],
];

let proxied: ProxiedSimulator;
let target: RunningSimulator;

beforeAll(async () => {
  proxied = await startProxiedSimulator({ domains: 3, seed: 87, timeScale: 0.0001, exportReadyMs: 1 });
  target = { ...proxied.sim, baseUrl: proxied.proxy.baseUrl };
});

afterAll(async () => {
  await proxied?.close();
});

describe('hostile domain names from the service round-trip into the mirror byte-exact', () => {
  test.each(HOSTILE)('%s', async (_label, hostile) => {
    const real = richDomain(proxied.sim);
    const encoded = encodeURIComponent(hostile);
    const rename = (body: unknown, path: string): unknown => {
      const value = getAt(body, path);
      if (value === real)
        (getAt(body, path.slice(0, path.lastIndexOf('.'))) as Record<string, unknown>)[
          path.slice(path.lastIndexOf('.') + 1)
        ] = hostile;
      return body;
    };
    proxied.proxy.reset();
    proxied.proxy.setRules([
      {
        method: 'GET',
        path: '/domains',
        json: (body) => {
          for (const item of getAt(body, 'data.domains') as Array<Record<string, unknown>>)
            if (item.domain_normalized === real) item.domain_normalized = hostile;
          return body;
        },
      },
      {
        method: 'GET',
        path: `/domains/${encoded}`,
        forwardPath: (p) => p.replace(`/domains/${encoded}`, `/domains/${encodeURIComponent(real)}`),
        json: (body) => rename(rename(body, 'data.domain_normalized'), 'data.domain'),
      },
    ]);
    const ctx = await openTestContext(target);
    const run = await syncPipeline(ctx);
    expect(run.status).toBe('done');
    expect(run.failures).toEqual([]);
    // On the wire: the name is one percent-encoded path segment (UTF-8), nothing raw.
    const profileRequests = proxied.proxy.requests.filter(
      (r) => r.rewritten && r.path.startsWith('/domains/'),
    );
    expect(profileRequests.map((r) => r.rawUrl)).toEqual([`/api/v1/igaming/domains/${encoded}`]);
    // In the mirror: byte-exact, as a key and in every child table.
    const rows = queryMirror<{ domain_normalized: string; domain: string; n: number }>(
      ctx.mirror.path,
      `SELECT d.domain_normalized, d.domain,
              (SELECT count(*) FROM licenses l WHERE l.domain_normalized = d.domain_normalized) AS n
       FROM domains d WHERE d.domain_normalized = ?`,
      hostile,
    );
    expect(rows).toHaveLength(1);
    expect(Buffer.from(rows[0]!.domain_normalized)).toEqual(Buffer.from(hostile));
    expect(rows[0]!.domain).toBe(hostile);
    expect(rows[0]!.n).toBe(proxied.sim.control.truth.profile(real)!.licenses.length);
    const all = queryMirror<{ n: number }>(ctx.mirror.path, 'SELECT count(*) AS n FROM domains')[0]!;
    expect(all.n).toBe(proxied.sim.control.truth.count());
  });
});

describe('hostile filter values are percent-encoded on the wire and reach the service exactly', () => {
  const SHORT = HOSTILE.filter(([, v]) => v.length < 1000 && !v.includes('\u0000'));

  test.each(SHORT)('client: %s', async (_label, value) => {
    proxied.proxy.reset();
    const client = proxied.client();
    const page = await client.searchDomains({ geo: value, game_provider: value, per_page: 10 });
    expect(page.domains).toEqual([]);
    const [request] = proxied.proxy.requests;
    const query = request!.rawUrl.slice(request!.rawUrl.indexOf('?') + 1);
    // Only unreserved characters and %XX escapes travel raw.
    expect(query).toMatch(/^[A-Za-z0-9_.~*+=&%-]*$/);
    const params = new URLSearchParams(query);
    expect(params.get('geo')).toBe(value);
    expect(params.get('game_provider')).toBe(value);
    // The simulator (an independent reader) decoded the same string.
    const seen = proxied.sim.control.requests().at(-1)!;
    expect(seen.query).toMatchObject({ geo: value, game_provider: value });
  });

  test('client: a filter value with NUL is sent as %00 and decoded exactly', async () => {
    proxied.proxy.reset();
    const value = 'nul\u0000byte';
    await proxied.client().searchDomains({ geo: value, per_page: 10 });
    expect(proxied.proxy.requests[0]!.rawUrl).toContain('geo=nul%00byte');
  });

  test(`client: a ${LONG / 1000} KB filter value reaches the wire whole; the service's refusal is a clear error`, async () => {
    proxied.proxy.reset();
    const value = `${'ß'.repeat(LONG / 2)}`;
    const error = await proxied
      .client()
      .searchDomains({ geo: value, per_page: 10 })
      .catch((e: unknown) => e);
    const [request] = proxied.proxy.requests;
    expect(new URLSearchParams(request!.rawUrl.split('?')[1]).get('geo')).toBe(value);
    // The simulator (node:http, 16 KiB header limit) refuses the request line: 431, not retried.
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).status).toBe(431);
    expect((error as BadRequestError).message).toMatch(
      /^GET \/domains: the service refused the request \(431/,
    );
    expect(proxied.proxy.requests).toHaveLength(1);
  });

  test('export: hostile filter values are stored in the mirror byte-exact and sent as JSON unchanged', async () => {
    const ctx = await openTestContext(target, { config: { api: { pollIntervalMs: 1 } } });
    proxied.proxy.reset();
    const filters = { geo: HOSTILE[0]![1], game_provider: HOSTILE[6]![1] };
    // csv: the filters match nothing, and a csv file still has its header row (an empty NDJSON
    // export fails to load, a defect reported apart from this matrix).
    const run = await exportPipeline(ctx, { filters, format: 'csv' });
    expect(run.error).toBeUndefined();
    expect(run.status).toBe('done');
    const [post] = proxied.proxy.requests.filter((r) => r.method === 'POST');
    expect(JSON.parse(post!.body).filters).toEqual(filters);
    const [row] = queryMirror<{ filters: string }>(ctx.mirror.path, 'SELECT filters FROM exports');
    expect(JSON.parse(row!.filters)).toEqual(filters);
  });

  test('CLI: --filter values with SQL, quotes, RTL and emoji are sent percent-encoded and exact', async () => {
    proxied.proxy.reset();
    const ctx = await openTestContext(target);
    const geo = HOSTILE[0]![1];
    const provider = `${HOSTILE[4]![1]} ${HOSTILE[6]![1]}`;
    const result = await runCli(
      [
        'sync',
        '--no-profiles',
        '--json',
        '--config',
        ctx.configPath,
        '--filter',
        `geo=${geo}`,
        '--filter',
        `game_provider=${provider}`,
      ],
      { env: { DOMAIN_SYNC_API_KEY: proxied.sim.apiKey, DOMAIN_SYNC_BASE_URL: proxied.proxy.baseUrl } },
    );
    expect(result.code, result.stderr).toBe(0);
    const listing = proxied.proxy.requests.filter((r) => r.path === '/domains');
    expect(listing.length).toBeGreaterThan(0);
    for (const request of listing) {
      const query = request.rawUrl.slice(request.rawUrl.indexOf('?') + 1);
      expect(query).toMatch(/^[A-Za-z0-9_.~*+=&%-]*$/);
      const params = new URLSearchParams(query);
      expect(params.get('geo')).toBe(geo);
      expect(params.get('game_provider')).toBe(provider);
    }
  });
});

describe('oversized responses', () => {
  const padded = (bytes: number) => (body: unknown) => ({ ...(body as object), padding: 'x'.repeat(bytes) });

  test.each([
    ['with Content-Length', true],
    ['streamed (chunked, no Content-Length)', false],
  ] as const)(
    'a body over maxBodyBytes (%s) is a ProtocolError naming the limit, not retried',
    async (_l, withLength) => {
      proxied.proxy.reset();
      const cap = 64 * 1024;
      proxied.proxy.setRules([
        {
          path: '/account',
          respond: (_req, res) => {
            const body = JSON.stringify(padded(cap)({ success: true, data: proxied.sim.control.account() }));
            res.writeHead(200, {
              'content-type': 'application/json',
              ...(withLength ? { 'content-length': String(Buffer.byteLength(body)) } : {}),
            });
            // Chunks, so that a streamed body is counted as it arrives.
            for (let i = 0; i < body.length; i += 8192) res.write(body.slice(i, i + 8192));
            res.end();
          },
        },
      ]);
      const error = await proxied
        .client({ maxBodyBytes: cap })
        .getAccount()
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ProtocolError);
      expect((error as ProtocolError).failure).toBe('too_large');
      expect((error as ProtocolError).retryable).toBe(false);
      expect((error as ProtocolError).message).toBe(
        `GET /account: response body larger than maxBodyBytes (${cap} bytes)`,
      );
      expect(proxied.proxy.requests).toHaveLength(1);
    },
  );

  test('sync: a profile over the default 64 MiB cap is an item failure naming the limit; nothing of it is written', async () => {
    const big = richDomain(proxied.sim);
    const others = proxied.sim.control.truth.listDomains().filter((d) => d !== big);
    const ctx = await openTestContext(target, { config: { api: { maxRetries: 1 } } });
    proxied.proxy.reset();
    proxied.proxy.setRules([
      {
        method: 'GET',
        path: `/domains/${encodeURIComponent(big)}`,
        respond: (_req, res) => {
          // A valid profile followed by 64 MiB + 1 of padding, streamed without Content-Length.
          res.writeHead(200, { 'content-type': 'application/json' });
          res.write(`{"success":true,"data":{"domain_normalized":${JSON.stringify(big)}},"padding":"`);
          const chunk = 'x'.repeat(1024 * 1024);
          for (let i = 0; i < 64; i++) res.write(chunk);
          res.end('x"}');
        },
      },
    ]);
    const run = await syncPipeline(ctx);
    expect(run.status).toBe('done');
    expect(run.failures).toEqual([
      expect.objectContaining({
        item: big,
        code: 'ERR_PROTOCOL',
        message: `GET /domains/${encodeURIComponent(big)}: response body larger than maxBodyBytes (67108864 bytes)`,
      }),
    ]);
    const [row] = queryMirror<{ profile_synced_at: string | null; profile_extra: string | null }>(
      ctx.mirror.path,
      'SELECT profile_synced_at, profile_extra FROM domains WHERE domain_normalized = ?',
      big,
    );
    expect(row).toEqual({ profile_synced_at: null, profile_extra: null });
    for (const table of ['licenses', 'payment_methods', 'domain_sections'])
      expect(queryMirror(ctx.mirror.path, `SELECT 1 FROM ${table} WHERE domain_normalized = ?`, big)).toEqual(
        [],
      );
    const synced = queryMirror<{ d: string }>(
      ctx.mirror.path,
      'SELECT domain_normalized AS d FROM domains WHERE profile_synced_at IS NOT NULL ORDER BY 1',
    ).map((r) => r.d);
    expect(synced).toEqual([...others].sort());
  });
});
