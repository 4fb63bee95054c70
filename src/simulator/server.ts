import { createServer, STATUS_CODES } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { noopLogger } from '../log/logger.js';
import { sleep } from '../util/sleep.js';
import { createControl, handleControlRequest } from './control.js';
import { isoFromMs } from '../util/time.js';
import { errorBody, templateOf } from './request.js';
import type { SimRequest, SimResponse } from './request.js';
import { BASE_PATH, SimService } from './service.js';
import type { FaultRule, RequestEntry, RunningSimulator, SimulatorOptions, UsageEntry } from './types.js';

const MAX_BODY_BYTES = 1_000_000;

/**
 * Starts the Domain Enrichment Service simulator on loopback and resolves once it listens.
 *
 * The server serves every endpoint of docs/service-api.md under `/api/v1/igaming` and the control
 * surface under `/_sim`. `close()` destroys every open socket, so it resolves promptly even
 * with keep-alive clients or streams in flight.
 *
 * @example
 * const sim = await startSimulator({ domains: 200, timeScale: 0.01 });
 * await fetch(`${sim.baseUrl}/account`, { headers: { 'X-API-Key': sim.apiKey } });
 * await sim.close();
 */
export async function startSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const logger = options.logger ?? noopLogger;
  const service = new SimService(options);
  const control = createControl(service);
  const keys = new Set(service.options.apiKeys);
  const closing = new AbortController();

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      logger.error('simulator request failed', { error: (error as Error).message });
      if (!res.headersSent) sendJson(res, 500, errorBody('Internal Server Error'));
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 5_000;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const rawUrl = req.url ?? '/';
    const qIndex = rawUrl.indexOf('?');
    const pathname = qIndex === -1 ? rawUrl : rawUrl.slice(0, qIndex);
    const query = new URLSearchParams(qIndex === -1 ? '' : rawUrl.slice(qIndex + 1));
    const text = hasBody(req) ? await readBody(req) : '';
    let body: unknown;
    let badJson = false;
    if (text.length > 0) {
      try {
        body = JSON.parse(text);
      } catch {
        badJson = true;
      }
    }

    if (pathname === '/_sim' || pathname.startsWith('/_sim/')) {
      if (badJson) return sendJson(res, 400, { error: 'body must be JSON' });
      const result = handleControlRequest(control, service, method, pathname, query, body);
      return sendJson(res, result.status, result.json);
    }
    if (pathname !== BASE_PATH && !pathname.startsWith(`${BASE_PATH}/`)) {
      return sendJson(res, 404, errorBody('Not Found', {}, service.now()));
    }

    const rawPath = pathname.slice(BASE_PATH.length) || '/';
    const path = safeDecode(rawPath);
    const auth = authOf(req, keys, service.options.acceptAnyClientKey === true);
    const entry: RequestEntry = {
      at: isoFromMs(service.now()),
      method,
      path,
      query: queryRecord(query),
      auth: auth.kind,
      authValid: auth.valid,
    };
    if (body !== undefined) entry.body = body;
    service.requestLog.push(entry);
    logger.debug('simulator request', { method, path: entry.path });

    const decision = service.faults.decide(method, path);
    if (decision.latencyMs > 0) {
      try {
        await sleep(decision.latencyMs, closing.signal);
      } catch {
        res.destroy();
        return;
      }
    }
    const simReq: SimRequest = { method, rawPath, query, body, badJson, authValid: auth.valid };
    const fault = decision.fault;
    const endpoint = templateOf(method, rawPath.split('/').slice(1));

    if (fault && !fault.afterProcessing) {
      // A fault before processing has no effect on the service; only a GET is computed (it has no
      // side effects) so that its body can be truncated or mangled realistically.
      let response: SimResponse | undefined;
      if ((fault.kind === 'truncate' || fault.kind === 'malformed') && method === 'GET')
        response = await service.handle(simReq);
      const status = deliverFault(res, req, fault, response, service.now());
      logUsage({ endpoint, credits: 0 }, status, path, method);
      return;
    }

    const response = await service.handle(simReq);
    if (fault) {
      const status = deliverFault(res, req, fault, response, service.now());
      const entryLogged = logUsage(response.usage, status, path, method);
      response.onUsage?.(entryLogged);
      return;
    }
    const entryLogged = logUsage(response.usage, response.status, path, method);
    response.onUsage?.(entryLogged);
    await send(res, response);
  }

  /** Logs one usage entry; `path` is already percent-decoded. */
  function logUsage(usage: SimResponse['usage'], status: number, path: string, method: string): UsageEntry {
    const entry: UsageEntry = {
      at: isoFromMs(service.now()),
      method,
      path,
      endpoint: usage.endpoint,
      status,
      credits: usage.credits ?? 0,
    };
    if (usage.domain !== undefined) entry.domain = usage.domain;
    if (usage.exportId !== undefined) entry.exportId = usage.exportId;
    if (usage.runId !== undefined) entry.runId = usage.runId;
    service.usageLog.push(entry);
    return entry;
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(service.options.port, service.options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const origin = `http://${host}:${address.port}`;
  service.origin = origin;
  logger.info('simulator listening', {
    origin,
    domains: service.options.domains,
    seed: service.options.seed,
  });

  let closed: Promise<void> | undefined;
  return {
    origin,
    baseUrl: origin + BASE_PATH,
    apiKey: service.options.apiKeys[0] as string,
    control,
    close() {
      closed ??= new Promise<void>((resolve) => {
        closing.abort();
        server.close(() => resolve());
        server.closeAllConnections();
        logger.info('simulator closed', { origin });
      });
      return closed;
    },
  };
}

/**
 * Which header carries the key and whether it is accepted. docs/service-api.md "Authentication":
 * when both headers are present X-API-Key wins, even when it is the invalid one.
 */
function authOf(
  req: IncomingMessage,
  keys: Set<string>,
  anyClientKey: boolean,
): { kind: RequestEntry['auth']; valid: boolean } {
  const accepted = (key: string): boolean => keys.has(key) || (anyClientKey && /^client_[^\s]+$/.test(key));
  const headerKey = req.headers['x-api-key'];
  if (headerKey !== undefined) {
    const value = Array.isArray(headerKey) ? headerKey[0] : headerKey;
    return { kind: 'x-api-key', valid: value !== undefined && accepted(value.trim()) };
  }
  const authorization = req.headers.authorization;
  if (authorization !== undefined) {
    const match = /^Bearer\s+(.+)$/i.exec(authorization.trim());
    return { kind: 'bearer', valid: match !== null && accepted((match[1] as string).trim()) };
  }
  return { kind: 'none', valid: false };
}

function queryRecord(query: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [key, value] of query) {
    const existing = out[key];
    if (existing === undefined) out[key] = value;
    else out[key] = Array.isArray(existing) ? [...existing, value] : [existing, value];
  }
  return out;
}

function safeDecode(path: string): string {
  // Most paths have no escapes, and decodeURIComponent only changes `%` sequences.
  if (!path.includes('%')) return path;
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/**
 * Whether a request has a body: one with neither header has none (RFC 9112 §6.3). A GET then skips
 * the stream iterator of readBody, which cost more than its routing; node:http discards the empty
 * stream itself.
 */
function hasBody(req: IncomingMessage): boolean {
  return req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) break;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function sendJson(
  res: ServerResponse,
  status: number,
  json: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(json);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

async function send(res: ServerResponse, response: SimResponse): Promise<void> {
  if (response.stream) {
    res.writeHead(response.status, response.headers ?? {});
    try {
      await pipeline(Readable.from(response.stream()), res);
    } catch {
      // The client went away or the server is closing; nothing to answer.
    }
    return;
  }
  sendJson(res, response.status, response.json, response.headers);
}

/** Delivers a fault; returns the status the client sees (0 for a reset connection). */
function deliverFault(
  res: ServerResponse,
  req: IncomingMessage,
  fault: FaultRule,
  response: SimResponse | undefined,
  nowMs: number,
): number {
  switch (fault.kind) {
    case 'reset':
      req.socket.destroy();
      return 0;
    case 'status': {
      const status = fault.status ?? 503;
      const headers: Record<string, string> =
        fault.retryAfterSeconds !== undefined ? { 'retry-after': String(fault.retryAfterSeconds) } : {};
      sendJson(res, status, errorBody(STATUS_CODES[status] ?? 'Error', {}, nowMs), headers);
      return status;
    }
    case 'rate_limit': {
      // A rate limit is a 429 whose body is NOT quota_exceeded (time-based limits: "not shown").
      sendJson(
        res,
        429,
        { error: { code: 'rate_limited', message: 'Too many requests; retry later' } },
        { 'retry-after': String(fault.retryAfterSeconds ?? 1) },
      );
      return 429;
    }
    case 'malformed': {
      const text = '{"success":true,"data":{"oops": <html>502 Bad Gateway</html>';
      res.writeHead(200, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(text),
      });
      res.end(text);
      return 200;
    }
    case 'truncate': {
      const status = response?.status ?? 200;
      if (response?.stream) {
        // A streamed download has no Content-Length: send headers and one partial chunk, then cut.
        res.writeHead(status, response.headers ?? {});
        void truncateStream(res, req, response.stream());
        return status;
      }
      const text = JSON.stringify(
        response?.json ?? { success: true, data: { simulated: true, note: 'truncated before processing' } },
      );
      const bytes = Buffer.from(text, 'utf8');
      res.writeHead(status, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': bytes.length,
      });
      res.write(bytes.subarray(0, Math.max(1, Math.floor(bytes.length / 2))), () => req.socket.destroy());
      return status;
    }
    case 'latency':
      // Latency never ends up here (FaultInjector only adds delays), but keep the switch total.
      return 0;
  }
}

async function truncateStream(
  res: ServerResponse,
  req: IncomingMessage,
  chunks: AsyncIterable<string>,
): Promise<void> {
  for await (const chunk of chunks) {
    res.write(chunk.slice(0, Math.max(1, Math.floor(chunk.length / 2))), () => req.socket.destroy());
    return;
  }
  req.socket.destroy();
}
