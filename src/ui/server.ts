import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../log/logger.js';
import { noopLogger } from '../log/logger.js';
import type { Mirror } from '../mirror/database.js';
import { ASSETS } from './assets.js';
import { ChangeCounts } from './change-counts.js';
import type { UiConfig, UiContext } from './context.js';
import { html } from './html.js';
import { renderDocument } from './layout.js';
import type { Page } from './layout.js';
import { changesPage } from './pages/changes.js';
import { creditsPage } from './pages/credits.js';
import { domainPage, domainsPage } from './pages/domains.js';
import { overviewPage } from './pages/overview.js';
import { runPage, runsPage } from './pages/runs.js';
import { snapshotsPage } from './pages/snapshots.js';
import { BadRequestError } from './params.js';

/** Options of {@link startUiServer}. */
export interface UiServerOptions {
  /** The mirror, opened read-only by the caller (the server never writes). */
  mirror: Mirror;
  config: UiConfig;
  /** Address to listen on. @default '127.0.0.1' */
  host?: string;
  /** Port; 0 picks a free one. @default 0 */
  port?: number;
  /** @default noopLogger */
  logger?: Logger;
  /** The current time in ms, for ages and date windows. @default Date.now */
  now?: () => number;
  /**
   * At most this many new `change_log` rows are counted for the charts per request; the rest on
   * later requests (the page says so). Counting 50,000 took about 70 ms in the ui benchmark. @default 50000
   */
  maxChangeRowsPerRequest?: number;
}

/** A running dashboard. */
export interface RunningUi {
  /** `http://HOST:PORT` as bound (IPv6 hosts in brackets). */
  readonly origin: string;
  /** Time it took to count the change log before listening, in ms. */
  readonly startupCountMs: number;
  /** Stops listening and closes open connections. Does not close the mirror. */
  close(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/** Whether `host` only accepts connections from this machine. */
export function isLoopbackHost(host: string): boolean {
  return LOOPBACK.has(host) || /^127(\.\d{1,3}){3}$/.test(host);
}

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  // No script at all, styles and images only from the dashboard itself, forms only to it.
  'content-security-policy':
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-resource-policy': 'same-origin',
};

class HttpProblem extends Error {
  readonly status: number;
  readonly title: string;
  constructor(status: number, title: string, message: string) {
    super(message);
    this.status = status;
    this.title = title;
  }
}

/**
 * Serves the dashboard over `options.mirror` (docs/ui.md). Counts the change log once before it
 * listens, then answers GET and HEAD only: 405 for any other method, 404 for an unknown path, 400
 * for a bad parameter, and a plain 500 page (details in the log, never in the page) for a bug.
 * While bound to a loopback address it also refuses a `Host` that is not a loopback name, so a
 * web page elsewhere cannot reach it through DNS rebinding.
 */
export async function startUiServer(options: UiServerOptions): Promise<RunningUi> {
  const logger = options.logger ?? noopLogger;
  const host = options.host ?? '127.0.0.1';
  const changes = new ChangeCounts();
  const countStarted = performance.now();
  changes.refresh(options.mirror);
  const startupCountMs = performance.now() - countStarted;
  const ctx: UiContext = {
    mirror: options.mirror,
    config: options.config,
    now: options.now ?? Date.now,
    changes,
  };
  const maxChangeRows = options.maxChangeRowsPerRequest ?? 50_000;
  let port = 0;
  const loopbackOnly = isLoopbackHost(host);

  const server: Server = createServer((req, res) => {
    const started = performance.now();
    void handle(req, res)
      .catch((error: unknown) => {
        logger.error('ui request failed', { path: pathOf(req), error: (error as Error)?.message });
        logger.debug('stack', { stack: (error as Error)?.stack });
        if (!res.headersSent)
          send(
            req,
            res,
            500,
            problemPage(
              500,
              'Internal error',
              'The page could not be drawn. This is a bug; the log has the details.',
            ),
          );
        else res.destroy();
      })
      .finally(() => {
        logger.debug('ui request', {
          method: req.method,
          path: pathOf(req),
          status: res.statusCode,
          ms: Math.round(performance.now() - started),
        });
      });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.setHeader('allow', 'GET, HEAD');
        throw new HttpProblem(
          405,
          'Method not allowed',
          `This dashboard is read-only: it answers GET and HEAD, not ${req.method ?? '?'}.`,
        );
      }
      if (loopbackOnly && !allowedHost(req.headers.host, port))
        throw new HttpProblem(
          400,
          'Bad request',
          'The Host header does not name this dashboard (127.0.0.1, localhost or [::1] with its port).',
        );
      const url = new URL(req.url ?? '/', 'http://dashboard.invalid');
      const assetFile = ASSETS.get(url.pathname);
      if (assetFile !== undefined) {
        res.setHeader('etag', assetFile.etag);
        res.setHeader('cache-control', 'no-cache');
        if (req.headers['if-none-match'] === assetFile.etag) {
          send(req, res, 304, null, assetFile.contentType);
          return;
        }
        send(req, res, 200, assetFile.body, assetFile.contentType);
        return;
      }
      const page = await route(url);
      if (page === null) throw new HttpProblem(404, 'Not found', `There is no page at ${url.pathname}.`);
      send(req, res, 200, renderDocument(page, { mirrorPath: ctx.mirror.path, nowMs: ctx.now() }));
    } catch (error) {
      if (error instanceof HttpProblem) {
        send(req, res, error.status, problemPage(error.status, error.title, error.message));
        return;
      }
      if (error instanceof BadRequestError) {
        send(req, res, 400, problemPage(400, 'Bad request', error.message));
        return;
      }
      throw error;
    }
  }

  async function route(url: URL): Promise<Page | null> {
    const path = url.pathname;
    const search = url.searchParams;
    const refresh = (): void => changes.refresh(ctx.mirror, maxChangeRows);
    switch (path) {
      case '/':
        refresh();
        return overviewPage(ctx, search);
      case '/runs':
        return runsPage(ctx, search);
      case '/credits':
        return creditsPage(ctx, search);
      case '/changes':
        refresh();
        return changesPage(ctx, search);
      case '/domains':
        refresh();
        return domainsPage(ctx, search);
      case '/snapshots':
        return snapshotsPage(ctx, search);
    }
    const run = /^\/runs\/([1-9]\d{0,15})$/.exec(path);
    if (run) return runPage(ctx, search, Number(run[1]));
    if (path.startsWith('/domains/') && path.length > '/domains/'.length) {
      let name: string;
      try {
        name = decodeURIComponent(path.slice('/domains/'.length));
      } catch {
        throw new BadRequestError('the domain in the address is not valid percent-encoding');
      }
      return domainPage(ctx, search, name);
    }
    return null;
  }

  function problemPage(status: number, title: string, message: string): string {
    const body = html`<h1>${status} ${title}</h1>
      <div class="error-box">
        <p>${message}</p>
        <p><a href="/">Overview</a></p>
      </div>`;
    return renderDocument(
      { title: `${status} ${title}`, current: null, body },
      { mirrorPath: ctx.mirror.path, nowMs: ctx.now() },
    );
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  port = address.port;
  const origin = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  return {
    origin,
    startupCountMs,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function allowedHost(header: string | undefined, port: number): boolean {
  if (header === undefined) return false;
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(header.toLowerCase());
  if (!match) return false;
  const [, name, portText] = match;
  return isLoopbackHost(name as string) && (portText === undefined ? port === 80 : Number(portText) === port);
}

function pathOf(req: IncomingMessage): string {
  return (req.url ?? '/').split('?')[0] ?? '/';
}

function send(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  body: string | Buffer | null,
  contentType = 'text/html; charset=utf-8',
): void {
  const bytes = body === null ? null : typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  res.statusCode = status;
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
  if (!res.hasHeader('cache-control')) res.setHeader('cache-control', 'no-store');
  res.setHeader('content-type', contentType);
  if (bytes !== null) res.setHeader('content-length', bytes.length);
  res.end(req.method === 'HEAD' || bytes === null ? undefined : bytes);
}
