/**
 * A loopback HTTP relay for the security tests: it records every connection and request it
 * receives (method, URL, raw headers, body) and forwards the request to a target origin (the
 * simulator), optionally rewriting the response. Used two ways:
 *
 * - as a **foreign host**: the simulator hands out `poll_url`/`download_url` on the relay's
 *   origin; since the relay forwards, a client that followed them would succeed, so the only
 *   thing that can keep the relay's log empty is the client refusing to go there;
 * - as the **configured service** in front of the simulator, rewriting what the service says
 *   (a hostile `Content-Disposition` file name, a hostile export `format`).
 */
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { onTestFinished } from 'vitest';

/** One request the relay received. */
export interface RecordedRequest {
  method: string;
  url: string;
  /** Raw header lines as received: name, value, name, value… */
  rawHeaders: string[];
  body: Buffer;
}

/** A running relay. */
export interface Relay {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  port: number;
  /** TCP connections accepted (counts even a TLS hello or garbage that never parses as HTTP). */
  connections(): number;
  /** Requests received, in order. */
  requests(): RecordedRequest[];
  /** Every request as text: request line, raw headers and body. */
  receivedBytes(): Buffer;
  close(): Promise<void>;
}

/** Options of {@link startRelay}. */
export interface RelayOptions {
  /** Rewrites response headers (lower-case names) before they are sent on. */
  rewriteHeaders?: (
    request: RecordedRequest,
    status: number,
    headers: IncomingHttpHeaders,
  ) => OutgoingHttpHeaders;
  /** Rewrites a JSON response body; the relay then sends it with a fresh Content-Length. */
  rewriteJson?: (request: RecordedRequest, status: number, body: unknown) => unknown;
}

/** Starts a relay to `target` (an origin) on a free loopback port; closed when the test finishes. */
export async function startRelay(target: string, options: RelayOptions = {}): Promise<Relay> {
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        rawHeaders: [...req.rawHeaders],
        body: Buffer.concat(chunks),
      };
      requests.push(recorded);
      const headers: OutgoingHttpHeaders = { ...req.headers, host: new URL(target).host };
      delete headers.connection;
      const upstream = httpRequest(
        new URL(recorded.url, target),
        { method: recorded.method, headers },
        (upRes) => {
          const status = upRes.statusCode ?? 502;
          let outHeaders: OutgoingHttpHeaders = { ...upRes.headers };
          if (options.rewriteHeaders) outHeaders = options.rewriteHeaders(recorded, status, upRes.headers);
          const isJson = String(upRes.headers['content-type'] ?? '').includes('json');
          if (options.rewriteJson && isJson && !String(upRes.headers['content-type']).includes('ndjson')) {
            const body: Buffer[] = [];
            upRes.on('data', (c: Buffer) => body.push(c));
            upRes.on('end', () => {
              let text = Buffer.concat(body).toString('utf8');
              try {
                text = JSON.stringify(options.rewriteJson!(recorded, status, JSON.parse(text)));
              } catch {
                // Not JSON after all: pass it on unchanged.
              }
              delete outHeaders['transfer-encoding'];
              outHeaders['content-length'] = String(Buffer.byteLength(text));
              res.writeHead(status, outHeaders);
              res.end(text);
            });
          } else {
            res.writeHead(status, outHeaders);
            upRes.pipe(res);
          }
        },
      );
      upstream.on('error', () => res.destroy());
      upstream.end(recorded.body);
    });
  });
  server.on('connection', (socket: Socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const relay: Relay = {
    origin: `http://127.0.0.1:${port}`,
    port,
    connections: () => connections,
    requests: () => [...requests],
    receivedBytes: () =>
      Buffer.concat(
        requests.flatMap((r) => [
          Buffer.from(`${r.method} ${r.url}\r\n${r.rawHeaders.join('\r\n')}\r\n\r\n`),
          r.body,
        ]),
      ),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  onTestFinished(() => relay.close());
  return relay;
}
