import { createServer, request as httpRequest } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A mutating HTTP proxy in front of the simulator, on 127.0.0.1 (real HTTP both ways).
 *
 * Every request is forwarded to the simulator unchanged; a matching {@link ProxyRule} then
 * rewrites the answer (its parsed JSON, its text, or the whole response). This is how the
 * bad-input matrix serves a real simulator body with one field missing, null, of the wrong type,
 * with an unseen enum value or an extra field, without teaching the simulator to lie.
 * Every request is logged with its raw URL (as sent on the wire, percent-encoding included).
 */

/** What a rule may change; the first matching rule applies. */
export interface ProxyRule {
  /** Only this method. @default any */
  method?: string;
  /** Path after the base path without the query: exact string, RegExp, or predicate. */
  path: string | RegExp | ((path: string) => boolean);
  /** Rewrites the parsed JSON body of the simulator's answer (any status); returns the new body. */
  json?: (body: unknown, status: number) => unknown;
  /** Rewrites the text body (e.g. an NDJSON download). */
  text?: (body: string) => string;
  /** Rewrites the path (and query) sent to the simulator, e.g. a hostile name → a real one. */
  forwardPath?: (pathAndQuery: string) => string;
  /** Answers by itself instead of forwarding. */
  respond?: (req: IncomingMessage, res: ServerResponse) => void;
}

/** One request the proxy received. */
export interface ProxiedRequest {
  method: string;
  /** The request target exactly as received (`/api/v1/igaming/domains?geo=%27…`). */
  rawUrl: string;
  /** Path after the base path, without the query, still percent-encoded. */
  path: string;
  /** Request body text (POSTs). */
  body: string;
  /** Whether a rule changed the answer. */
  rewritten: boolean;
}

/** A running proxy. */
export interface MutatingProxy {
  /** Base URL to give the client (`http://127.0.0.1:<port>/api/v1/igaming`). */
  baseUrl: string;
  /** Requests received since the last {@link reset}. */
  requests: ProxiedRequest[];
  /** Replaces the rules (checked in order). */
  setRules(rules: ProxyRule[]): void;
  /** Drops every rule and the request log. */
  reset(): void;
  close(): Promise<void>;
}

const BASE_PATH = '/api/v1/igaming';

function matches(rule: ProxyRule, method: string, path: string): boolean {
  if (rule.method !== undefined && rule.method !== method) return false;
  if (typeof rule.path === 'string') return rule.path === path;
  if (rule.path instanceof RegExp) return rule.path.test(path);
  return rule.path(path);
}

function readAll(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

function forward(
  targetOrigin: string,
  method: string,
  pathAndQuery: string,
  headers: IncomingHttpHeaders,
  body: Buffer,
): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  const target = new URL(targetOrigin);
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method,
        path: pathAndQuery,
        headers: { ...headers, host: target.host, 'content-length': String(body.length) },
      },
      (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        const done = (): void =>
          resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) });
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', done);
        // A server that refuses a request it has not read to the end (node:http's 431 for an
        // oversized request line) answers, then resets the socket; Node 22 and later report the
        // reset after the answer. An answer delimited by the connection's end (no Content-Length)
        // is whole at that point; one cut short of its Content-Length stays a proxy error.
        req.on('error', (error) => {
          if (res.headers['content-length'] === undefined && !res.headers['transfer-encoding']) done();
          else reject(error);
        });
      },
    );
    req.once('error', (error) => {
      if (!answered) reject(error);
    });
    req.end(body);
  });
}

/**
 * Starts a proxy to `targetOrigin` (the simulator's origin). It accepts request lines up to
 * 4 MiB, so a 100 KB domain name (300 KB percent-encoded) reaches it.
 */
export async function startMutatingProxy(targetOrigin: string): Promise<MutatingProxy> {
  let rules: ProxyRule[] = [];
  const requests: ProxiedRequest[] = [];
  const server = createServer({ maxHeaderSize: 4 * 1024 * 1024 }, (req, res) => {
    void (async () => {
      const rawUrl = req.url ?? '/';
      const method = req.method ?? 'GET';
      const bodyIn = await readAll(req);
      const pathOnly = rawUrl.split('?')[0]!;
      const path = pathOnly.startsWith(BASE_PATH) ? pathOnly.slice(BASE_PATH.length) : pathOnly;
      const rule = rules.find((r) => matches(r, method, path));
      const entry: ProxiedRequest = {
        method,
        rawUrl,
        path,
        body: bodyIn.toString('utf8'),
        rewritten: rule !== undefined,
      };
      requests.push(entry);
      if (rule?.respond) {
        rule.respond(req, res);
        return;
      }
      let target = rawUrl;
      if (rule?.forwardPath && rawUrl.startsWith(BASE_PATH)) {
        target = BASE_PATH + rule.forwardPath(rawUrl.slice(BASE_PATH.length));
      }
      const answer = await forward(targetOrigin, method, target, req.headers, bodyIn);
      let out = answer.body;
      if (rule?.json) {
        const parsed: unknown = JSON.parse(answer.body.toString('utf8'));
        out = Buffer.from(JSON.stringify(rule.json(parsed, answer.status)), 'utf8');
      } else if (rule?.text) {
        out = Buffer.from(rule.text(answer.body.toString('utf8')), 'utf8');
      }
      const headers: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(answer.headers)) {
        if (value === undefined) continue;
        if (['transfer-encoding', 'content-length', 'connection', 'keep-alive'].includes(name)) continue;
        headers[name] = value;
      }
      headers['content-length'] = String(out.length);
      res.writeHead(answer.status, headers).end(out);
    })().catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(599, { 'content-type': 'text/plain' });
      res.end(`proxy error: ${String(error)}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}${BASE_PATH}`,
    requests,
    setRules(next) {
      rules = next;
    },
    reset() {
      rules = [];
      requests.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
