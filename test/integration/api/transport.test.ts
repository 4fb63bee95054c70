import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createClient, NetworkError, OutcomeUnknownError, ProtocolError } from '../../../src/api/index.js';
import type { ClientOptions } from '../../../src/api/index.js';

// A scripted node:http server for what the simulator does not do on purpose: exact headers,
// odd bodies from test/fixtures/api, stalls, hostile file names (the way undici's own retry tests
// script failures on a real server).

const KEY = 'client_transport_fixture_key_77';
type Handler = (req: IncomingMessage, res: ServerResponse) => void;

function fixtureText(name: string): string {
  return readFileSync(fileURLToPath(new URL(`../../fixtures/api/${name}`, import.meta.url)), 'utf8');
}

async function server(routes: Record<string, Handler>) {
  const seen: Array<{ method: string; url: string; headers: IncomingHttpHeaders }> = [];
  const srv = createServer((req, res) => {
    seen.push({ method: req.method!, url: req.url!, headers: req.headers });
    const path = req.url!.replace('/api/v1/igaming', '').split('?')[0]!;
    const handler = routes[`${req.method} ${path}`];
    if (!handler) {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end('{"success":false,"message":"Not Found"}');
      return;
    }
    handler(req, res);
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        srv.closeAllConnections();
        srv.close(() => resolve());
      }),
  );
  const baseUrl = `http://127.0.0.1:${(srv.address() as AddressInfo).port}/api/v1/igaming`;
  const sleeps: number[] = [];
  const client = (options: Partial<ClientOptions> = {}) => {
    const c = createClient({
      baseUrl,
      apiKey: KEY,
      requestsPerSecond: Infinity,
      random: () => 0.5,
      sleep: async (ms) => {
        sleeps.push(ms);
      },
      ...options,
    });
    onTestFinished(() => c.close());
    return c;
  };
  return { seen, client, sleeps };
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Handler =>
  (_req, res) => {
    res
      .writeHead(status, { 'content-type': 'application/json', ...headers })
      .end(typeof body === 'string' ? body : JSON.stringify(body));
  };

const account = {
  success: true,
  data: { plan: 'p', credits_granted: 10, credits_used: 0, credits_reserved: 0, available_credits: 10 },
};

describe('transport', () => {
  it('sends exactly one auth header, a User-Agent and Accept', async () => {
    const { seen, client } = await server({ 'GET /account': json(200, account) });
    await client().getAccount();
    await client({ authHeader: 'bearer' }).getAccount();
    expect(seen[0]!.headers['x-api-key']).toBe(KEY);
    expect(seen[0]!.headers.authorization).toBeUndefined();
    expect(seen[1]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(seen[1]!.headers['x-api-key']).toBeUndefined();
    expect(seen[0]!.headers['user-agent']).toMatch(/^domain-sync\//);
    expect(seen[0]!.headers.accept).toBe('application/json');
  });

  it('gives a retryable ProtocolError for a truncated fixture body (Content-Length consistent)', async () => {
    const { seen, client } = await server({ 'GET /domains': json(200, fixtureText('truncated.json.txt')) });
    const error = await client({ maxRetries: 1 })
      .searchDomains()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).retryable).toBe(true);
    expect(seen).toHaveLength(2);
  });

  it('gives ProtocolError for a malformed fixture body and for an empty body', async () => {
    const { client } = await server({
      'GET /account': json(200, fixtureText('malformed.json.txt')),
      'GET /domains': json(200, ''),
    });
    const c = client({ maxRetries: 0 });
    await expect(c.getAccount()).rejects.toMatchObject({ code: 'ERR_PROTOCOL', failure: 'json' });
    await expect(c.searchDomains()).rejects.toMatchObject({ code: 'ERR_PROTOCOL', failure: 'json' });
  });

  it('names the field of a schema mismatch and does not retry it', async () => {
    const { seen, client } = await server({
      'GET /domains': json(200, fixtureText('search-page-missing-field.json')),
    });
    await expect(client().searchDomains()).rejects.toThrow(
      'GET /domains: data.domains[3].domain_normalized: expected string',
    );
    expect(seen).toHaveLength(1);
  });

  it('refuses a body over maxBodyBytes without retrying', async () => {
    const { seen, client } = await server({
      'GET /account': json(200, { ...account, padding: 'x'.repeat(10_000) }),
    });
    await expect(client({ maxBodyBytes: 1000 }).getAccount()).rejects.toMatchObject({
      code: 'ERR_PROTOCOL',
      failure: 'too_large',
    });
    expect(seen).toHaveLength(1);
  });

  it('keeps a non-JSON error body as text and honours an HTTP-date Retry-After', async () => {
    let calls = 0;
    const { sleeps, client } = await server({
      'GET /account': (req, res) => {
        calls++;
        if (calls === 1) {
          res
            .writeHead(503, { 'retry-after': new Date(Date.now() + 4000).toUTCString() })
            .end('<html>busy</html>');
        } else json(200, account)(req, res);
      },
    });
    await client().getAccount();
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeGreaterThan(2000);
    expect(sleeps[0]).toBeLessThanOrEqual(4000);
  });

  it('times out a stalled GET (retried) and a stalled POST (outcome unknown, not retried)', async () => {
    const { seen, client } = await server({
      'GET /account': () => {
        /* never answers */
      },
      'POST /enrichments': () => {
        /* never answers */
      },
    });
    const c = client({ timeoutMs: 100, maxRetries: 1 });
    const getError = await c.getAccount().catch((e: unknown) => e);
    expect(getError).toBeInstanceOf(NetworkError);
    expect((getError as NetworkError).failure).toBe('timeout');
    expect((getError as NetworkError).requestSent).toBe(true);
    const postError = await c.startEnrichment({ domain: 'a.com' }).catch((e: unknown) => e);
    expect(postError).toBeInstanceOf(OutcomeUnknownError);
    expect(((postError as OutcomeUnknownError).cause as NetworkError).failure).toBe('timeout');
    expect(seen.filter((r) => r.method === 'GET')).toHaveLength(2);
    expect(seen.filter((r) => r.method === 'POST')).toHaveLength(1);
  });

  it('aborts an in-flight request with ERR_ABORTED', async () => {
    const { client } = await server({ 'GET /account': () => {} });
    const controller = new AbortController();
    const pending = client().getAccount({ signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await expect(pending).rejects.toMatchObject({ code: 'ERR_ABORTED' });
  });

  it('aborts only the requests of the signal that aborted, and sends nothing for an aborted signal', async () => {
    let release: (() => void) | undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    const { client, seen } = await server({
      'GET /account': (_req, res) => {
        void released.then(() =>
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(fixtureText('account-unlimited.json')),
        );
      },
    });
    const c = client();
    const run = new AbortController();
    const other = new AbortController();
    const aborted = [c.getAccount({ signal: run.signal }), c.getAccount({ signal: run.signal })];
    const kept = c.getAccount({ signal: other.signal });
    while (seen.length < 3) await new Promise((resolve) => setTimeout(resolve, 5));
    run.abort(new Error('stopping'));
    for (const pending of aborted) await expect(pending).rejects.toMatchObject({ code: 'ERR_ABORTED' });
    release!();
    await expect(kept).resolves.toMatchObject({ plan: expect.any(String) });
    // A signal that aborted before the request: nothing is sent, with or without a slot free.
    await expect(c.getAccount({ signal: run.signal })).rejects.toMatchObject({ code: 'ERR_ABORTED' });
    expect(seen).toHaveLength(3);
  });

  it('sanitises a hostile download file name and streams the body', async () => {
    const { client } = await server({
      'GET /exports/9/download': (_req, res) => {
        res.writeHead(200, {
          'content-type': 'text/csv',
          'content-disposition': 'attachment; filename="../../../etc/cron.d/evil.csv"',
        });
        res.write('a,b\n');
        setTimeout(() => res.end('1,2\n'), 20);
      },
    });
    const download = await client().downloadExport(9);
    expect(download.filename).toBe('evil.csv');
    let text = '';
    for await (const chunk of download.body) text += String(chunk);
    expect(text).toBe('a,b\n1,2\n');
  });

  it('maps a 202 without enrichment_run_id to a ProtocolError naming the field', async () => {
    const { client } = await server({
      'POST /enrichments': json(202, fixtureText('enrichment-202-missing-run-id.json')),
    });
    await expect(client().startEnrichment({ domain: 'a.com' })).rejects.toThrow(
      'POST /enrichments: data.enrichment_run_id: expected number, got missing',
    );
  });
});
