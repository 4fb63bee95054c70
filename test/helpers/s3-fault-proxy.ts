/**
 * A streaming fault proxy in front of the S3-compatible test server, on 127.0.0.1 (real HTTP both
 * ways), the way the simulator's fault settings give the service client its faults: every request
 * is forwarded unchanged (bodies streamed, so multipart uploads pass through at full size) unless
 * a {@link S3FaultRule} matches it first, which then
 *
 * - `reset`: destroys the connection before any answer (the client sees ECONNRESET or EPIPE);
 * - `status`: reads the request and answers with an S3 error (`InternalError` 500 by default,
 *   `SlowDown` for 503) without forwarding;
 * - `slowBody`: forwards, but lets the request body through `chunkBytes` at a time every
 *   `delayMs` (a slow link; the request still completes);
 * - `hang`: reads the request and never answers (the client's timeout must fire).
 *
 * Every request is logged (method, path with query, the fault applied) so a test can assert that
 * a fault really happened, and which requests came in which order.
 */
import { createServer, request as httpRequest } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One request the proxy received. */
export interface ProxiedS3Request {
  method: string;
  /** Path and query as received (percent-encoded), e.g. `/bucket/p/_manifests/snapshot_date%3D2026-11-24.json?x-id=PutObject`. */
  url: string;
  /** The path alone, decoded: `/bucket/p/_manifests/snapshot_date=2026-11-24.json`. */
  path: string;
  /** The fault applied, or null when forwarded unchanged. */
  fault: S3FaultRule['kind'] | null;
  /** Status of the answer forwarded or made up (null for a reset or a hang). */
  status: number | null;
}

/** A fault: which requests it hits and how often. The first matching rule with times left applies. */
export interface S3FaultRule {
  kind: 'reset' | 'status' | 'slowBody' | 'hang';
  /** Only this method (`PUT`, `HEAD`, `GET`, `DELETE`, `POST`). @default any */
  method?: string;
  /** Only requests whose decoded path, or path-and-query as received, matches. @default every request */
  url?: RegExp;
  /** How many matching requests it hits. @default Infinity */
  times?: number;
  /** For `status`. @default 500 */
  status?: number;
  /** For `slowBody`. @default 16384 */
  chunkBytes?: number;
  /** For `slowBody`. @default 20 */
  delayMs?: number;
}

/** A running proxy. */
export interface S3FaultProxy {
  /** `http://127.0.0.1:<port>`: the endpoint to configure. */
  endpoint: string;
  requests: ProxiedS3Request[];
  /** Replaces the rules. */
  setRules(rules: S3FaultRule[]): void;
  /** Faults applied so far, by kind. */
  injected(): Record<string, number>;
  close(): Promise<void>;
}

const S3_ERRORS: Record<number, string> = {
  500: 'InternalError',
  502: 'BadGateway',
  503: 'SlowDown',
};

/** Starts a proxy to `target` (the S3 server's `http://127.0.0.1:<port>`). */
export async function startS3FaultProxy(target: string): Promise<S3FaultProxy> {
  const upstream = new URL(target);
  let rules: Array<S3FaultRule & { left: number }> = [];
  const requests: ProxiedS3Request[] = [];
  const sockets = new Set<Socket>();

  const server = createServer((req, res) => {
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const rule = rules.find(
      (r) =>
        r.left > 0 &&
        (r.method === undefined || r.method === method) &&
        (r.url === undefined || r.url.test(url) || r.url.test(decodePath(url))),
    );
    if (rule) rule.left--;
    const entry: ProxiedS3Request = {
      method,
      url,
      path: decodePath(url),
      fault: rule?.kind ?? null,
      status: null,
    };
    requests.push(entry);
    if (rule?.kind === 'reset') {
      req.socket.destroy();
      return;
    }
    if (rule?.kind === 'hang') {
      req.resume();
      return;
    }
    if (rule?.kind === 'status') {
      const status = rule.status ?? 500;
      entry.status = status;
      req.resume();
      req.on('end', () => {
        const code = S3_ERRORS[status] ?? 'InternalError';
        res
          .writeHead(status, { 'content-type': 'application/xml' })
          .end(
            `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>fault injected by the test proxy</Message></Error>`,
          );
      });
      return;
    }
    forward(req, res, entry, rule?.kind === 'slowBody' ? rule : null);
  });

  const forward = (
    req: IncomingMessage,
    res: ServerResponse,
    entry: ProxiedS3Request,
    slow: S3FaultRule | null,
  ): void => {
    const out = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        entry.status = answer.statusCode ?? 502;
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    res.on('close', () => out.destroy());
    if (slow === null) {
      req.pipe(out);
      return;
    }
    const chunkBytes = slow.chunkBytes ?? 16_384;
    const delayMs = slow.delayMs ?? 20;
    void (async () => {
      try {
        for await (const chunk of req as AsyncIterable<Buffer>) {
          for (let at = 0; at < chunk.length; at += chunkBytes) {
            await new Promise((r) => setTimeout(r, delayMs));
            if (!out.write(chunk.subarray(at, at + chunkBytes))) {
              await new Promise((r) => out.once('drain', r));
            }
          }
        }
        out.end();
      } catch {
        out.destroy();
      }
    })();
  };

  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    setRules(next) {
      rules = next.map((r) => ({ ...r, left: r.times ?? Number.POSITIVE_INFINITY }));
    },
    injected() {
      const counts: Record<string, number> = {};
      for (const r of requests) if (r.fault !== null) counts[r.fault] = (counts[r.fault] ?? 0) + 1;
      return counts;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function decodePath(url: string): string {
  const path = url.split('?')[0]!;
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/**
 * A TCP server on 127.0.0.1 that accepts connections and never says a word: "an endpoint that
 * does not answer" (unlike a closed port, which refuses at once).
 */
export async function startSilentServer(): Promise<{
  endpoint: string;
  connections(): number;
  close(): Promise<void>;
}> {
  const { createServer: createTcpServer } = await import('node:net');
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createTcpServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
