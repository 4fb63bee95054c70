import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import { inspect } from 'node:util';
import { Agent } from 'undici';
import type { Dispatcher } from 'undici';
import type { Logger } from '../log/logger.js';
import { noopLogger } from '../log/logger.js';
import { redact, registerSecret } from '../log/redact.js';
import { AbortedError } from '../util/domain-sync-error.js';
import { sleep as abortableSleep } from '../util/sleep.js';
import type { DomainServiceApi, CompaniesApi } from './domain-service-api.js';
import {
  ApiError,
  ClientConfigError,
  errorFromResponse,
  headerValue,
  NetworkError,
  ProtocolError,
} from './errors.js';
import type { NetworkFailure } from './errors.js';
import type { CanonicalFilterName, DomainFilters } from './filters.js';
import { RequestLimiter } from './limiter.js';
import { iterateDomainPages, iterateDomains } from './paginate.js';
import type { DomainPage, IterateDomainsOptions } from './paginate.js';
import type { PollOptions } from './poll.js';
import { getAccount } from './resources/account.js';
import { companyResolve, companySearch, companySearchPreview } from './resources/companies.js';
import type { CompanyParams } from './resources/companies.js';
import { getDomain, searchDomains } from './resources/domains.js';
import type { GetDomainOptions, RequestOptions } from './resources/domains.js';
import { getEnrichmentRun, startEnrichment, waitForEnrichmentRun } from './resources/enrichments.js';
import type { StartEnrichmentParams, StartEnrichmentResult } from './resources/enrichments.js';
import { createExport, downloadExport, getExport, waitForExport } from './resources/exports.js';
import type { CreateExportParams, ExportCreated, ExportDownload } from './resources/exports.js';
import { decideRetry } from './retry.js';
import type { RequestSafety, RetryPolicy } from './retry.js';
import type { ApiTransport, JsonRequest, JsonResponse, StreamResponse } from './transport.js';
import { parseBaseUrl, resolveServiceUrl, serviceUrl } from './urls.js';
import type { ParsedBaseUrl, ResolvedUrl } from './urls.js';
import type {
  Account,
  CompanyResponse,
  DomainProfile,
  DomainSearchPage,
  DomainSummary,
  EnrichmentRun,
  ExportInfo,
} from './wire.js';

/** Version sent in the User-Agent. */
export const CLIENT_VERSION = '0.1.0';

/** Default cap on a JSON response body: 64 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024;
/** How much of an error response body is read (the rest is discarded). */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** Which header carries the key (docs/service-api.md "Authentication"). */
export type AuthHeader = 'x-api-key' | 'bearer';

/**
 * Options of {@link createClient}. Only `baseUrl` and `apiKey` are required. The key is kept in
 * a private field: it never shows in `util.inspect(client)`, `JSON.stringify(client)`, logs or
 * error messages, and is only sent to the base URL's origin.
 */
export interface ClientOptions {
  /** Service base URL; must end in `/api/v1/igaming` (a trailing slash is tolerated). */
  baseUrl: string;
  /** API key (`client_…`), from `DOMAIN_SYNC_API_KEY`; registered with `registerSecret`. */
  apiKey: string;
  /**
   * Header that carries the key: `X-API-Key: <key>` or `Authorization: Bearer <key>`.
   * @default 'x-api-key' (the spec's recommendation)
   */
  authHeader?: AuthHeader | undefined;
  /**
   * Per-attempt timeout in ms, enforced by undici: at most this long to connect (capped at
   * 10 s), to receive the headers once sent, and between two body chunks. A connect timeout
   * means the request was surely not sent; a later one is ambiguous (`requestSent: true`).
   * @default 30000
   */
  timeoutMs?: number | undefined;
  /**
   * Retries of a safe request after the first attempt.
   * @default 5
   */
  maxRetries?: number | undefined;
  /**
   * First backoff ceiling in ms; doubles per retry (full jitter: a random delay below it).
   * @default 250
   */
  retryBaseMs?: number | undefined;
  /**
   * Largest backoff ceiling in ms.
   * @default 30000
   */
  retryMaxDelayMs?: number | undefined;
  /**
   * Total time budget of one call across attempts and waits, in ms; no retry starts past it.
   * @default 120000
   */
  retryDeadlineMs?: number | undefined;
  /**
   * Largest `Retry-After` honoured, in ms; a longer one is clamped to this.
   * @default 60000
   */
  retryAfterMaxMs?: number | undefined;
  /**
   * Requests in flight at most (per client).
   * @default 8
   */
  concurrency?: number | undefined;
  /**
   * Request starts per second at most (per client); `Infinity` disables the limit.
   * @default 10
   */
  requestsPerSecond?: number | undefined;
  /**
   * First wait between polls of a run or export, in ms; then it backs off.
   * @default 5000
   */
  pollIntervalMs?: number | undefined;
  /**
   * Longest wait between polls, in ms.
   * @default 60000
   */
  maxPollIntervalMs?: number | undefined;
  /**
   * How long `waitFor…` waits before `PollTimeoutError`, in ms.
   * @default 1800000 (30 minutes)
   */
  pollDeadlineMs?: number | undefined;
  /**
   * Canonical filter name → wire name (`api.queryParams`); applies to the query of
   * `GET /domains` (`page` and `per_page` included) and to the keys of an export's `filters`.
   * @default identity (each filter is sent under its canonical name)
   */
  queryParams?: Partial<Record<CanonicalFilterName, string>> | undefined;
  /**
   * Receives `api request` (method, path, status, ms, attempt), `api retry` and `api gave up`
   * events at debug level, redacted.
   * @default noopLogger
   */
  logger?: Logger | undefined;
  /**
   * Largest JSON response body accepted, in bytes; a larger one is a `ProtocolError`.
   * Downloads are streamed and not capped.
   * @default 67108864 (64 MiB)
   */
  maxBodyBytes?: number | undefined;
  /**
   * Random source in [0, 1) for backoff jitter (tests pass a fixed one).
   * @default Math.random
   */
  random?: (() => number) | undefined;
  /**
   * undici dispatcher to send through (tests, benchmarks, proxies). When given, the client does
   * not close it.
   * @default a pooled `undici.Agent` owned by the client (keep-alive, no pipelining)
   */
  dispatcher?: Dispatcher | undefined;
  /**
   * Sleep used for backoff and polling (tests inject one to observe waits).
   * @default abortable `setTimeout` sleep from `src/util/sleep.ts`
   */
  sleep?: ((ms: number, signal?: AbortSignal) => Promise<void>) | undefined;
  /**
   * Clock in ms for retry and poll deadlines.
   * @default Date.now
   */
  now?: (() => number) | undefined;
  /**
   * `User-Agent` header.
   * @default `domain-sync/<version> (node <version>)`
   */
  userAgent?: string | undefined;
}

/** The resolved, frozen options (everything but the key). */
export interface ResolvedClientOptions {
  readonly baseUrl: string;
  readonly authHeader: AuthHeader;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly retryBaseMs: number;
  readonly retryMaxDelayMs: number;
  readonly retryDeadlineMs: number;
  readonly retryAfterMaxMs: number;
  readonly concurrency: number;
  readonly requestsPerSecond: number;
  readonly pollIntervalMs: number;
  readonly maxPollIntervalMs: number;
  readonly pollDeadlineMs: number;
  readonly queryParams: Readonly<Record<string, string>>;
  readonly maxBodyBytes: number;
  readonly userAgent: string;
}

/** Defaults of {@link ClientOptions} (docs/contract.md "Config file" for the `api.*` ones). */
export const CLIENT_DEFAULTS = Object.freeze({
  authHeader: 'x-api-key' as AuthHeader,
  timeoutMs: 30_000,
  maxRetries: 5,
  retryBaseMs: 250,
  retryMaxDelayMs: 30_000,
  retryDeadlineMs: 120_000,
  retryAfterMaxMs: 60_000,
  concurrency: 8,
  requestsPerSecond: 10,
  pollIntervalMs: 5_000,
  maxPollIntervalMs: 60_000,
  pollDeadlineMs: 30 * 60_000,
  maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
});

function checkNumber(
  name: string,
  value: number | undefined,
  fallback: number,
  min: number,
  allowInfinity = false,
): number {
  if (value === undefined) return fallback;
  if (
    typeof value !== 'number' ||
    Number.isNaN(value) ||
    value < min ||
    (!allowInfinity && !Number.isFinite(value))
  ) {
    throw new ClientConfigError(`${name} must be a number ≥ ${min}, got ${String(value)}`);
  }
  return value;
}

function resolveOptions(options: ClientOptions): ResolvedClientOptions {
  const base = parseBaseUrl(options.baseUrl);
  const authHeader = options.authHeader ?? CLIENT_DEFAULTS.authHeader;
  if (authHeader !== 'x-api-key' && authHeader !== 'bearer') {
    throw new ClientConfigError(
      `authHeader must be 'x-api-key' or 'bearer', got ${JSON.stringify(authHeader)}`,
    );
  }
  const queryParams: Record<string, string> = {};
  for (const [name, wire] of Object.entries(options.queryParams ?? {})) {
    if (typeof wire !== 'string' || wire === '')
      throw new ClientConfigError(`queryParams.${name} must be a non-empty string`);
    queryParams[name] = wire;
  }
  return Object.freeze({
    baseUrl: base.href,
    authHeader,
    timeoutMs: checkNumber('timeoutMs', options.timeoutMs, CLIENT_DEFAULTS.timeoutMs, 1),
    maxRetries: Math.floor(checkNumber('maxRetries', options.maxRetries, CLIENT_DEFAULTS.maxRetries, 0)),
    retryBaseMs: checkNumber('retryBaseMs', options.retryBaseMs, CLIENT_DEFAULTS.retryBaseMs, 0),
    retryMaxDelayMs: checkNumber(
      'retryMaxDelayMs',
      options.retryMaxDelayMs,
      CLIENT_DEFAULTS.retryMaxDelayMs,
      0,
    ),
    retryDeadlineMs: checkNumber(
      'retryDeadlineMs',
      options.retryDeadlineMs,
      CLIENT_DEFAULTS.retryDeadlineMs,
      0,
      true,
    ),
    retryAfterMaxMs: checkNumber(
      'retryAfterMaxMs',
      options.retryAfterMaxMs,
      CLIENT_DEFAULTS.retryAfterMaxMs,
      0,
    ),
    concurrency: Math.floor(checkNumber('concurrency', options.concurrency, CLIENT_DEFAULTS.concurrency, 1)),
    requestsPerSecond: checkNumber(
      'requestsPerSecond',
      options.requestsPerSecond,
      CLIENT_DEFAULTS.requestsPerSecond,
      Number.MIN_VALUE,
      true,
    ),
    pollIntervalMs: checkNumber('pollIntervalMs', options.pollIntervalMs, CLIENT_DEFAULTS.pollIntervalMs, 0),
    maxPollIntervalMs: checkNumber(
      'maxPollIntervalMs',
      options.maxPollIntervalMs,
      CLIENT_DEFAULTS.maxPollIntervalMs,
      0,
    ),
    pollDeadlineMs: checkNumber(
      'pollDeadlineMs',
      options.pollDeadlineMs,
      CLIENT_DEFAULTS.pollDeadlineMs,
      0,
      true,
    ),
    queryParams: Object.freeze(queryParams),
    maxBodyBytes: Math.floor(
      checkNumber('maxBodyBytes', options.maxBodyBytes, CLIENT_DEFAULTS.maxBodyBytes, 1),
    ),
    userAgent: options.userAgent ?? `domain-sync/${CLIENT_VERSION} (node ${process.version})`,
  });
}

/** Classifies a transport error by its code (undici `UND_ERR_*` or a system `E…` code). */
function classifyNetworkError(error: unknown): {
  failure: NetworkFailure;
  requestSent: boolean;
  what: string;
  retryable: boolean;
} {
  const record = error as { code?: unknown; cause?: { code?: unknown } } | null;
  const code = String(record?.code ?? record?.cause?.code ?? '');
  switch (code) {
    // The connection was never made, so the request surely did not reach the service.
    case 'ECONNREFUSED':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return {
        failure: 'connect',
        requestSent: false,
        what: `connection refused (${code})`,
        retryable: true,
      };
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return { failure: 'dns', requestSent: false, what: `host not found (${code})`, retryable: true };
    case 'UND_ERR_CONNECT_TIMEOUT':
      return { failure: 'connect_timeout', requestSent: false, what: 'connect timeout', retryable: true };
    // The client itself is closed: nothing was sent, and retrying cannot help.
    case 'UND_ERR_CLOSED':
    case 'UND_ERR_DESTROYED':
      return { failure: 'other', requestSent: false, what: 'client closed', retryable: false };
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return {
        failure: 'timeout',
        requestSent: true,
        what: 'timed out waiting for the response',
        retryable: true,
      };
    // A reset may come before or after the service processed the request: ambiguous.
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
      return { failure: 'reset', requestSent: true, what: `connection reset (${code})`, retryable: true };
    default:
      return {
        failure: 'other',
        requestSent: true,
        what: code ? `request failed (${code})` : 'request failed',
        retryable: true,
      };
  }
}

/**
 * The HTTP layer: the only code that imports undici. Applies the base URL and origin rule, the
 * auth header, the limiter, the per-attempt timeout, the body cap, the retry policy and the
 * request log. Exposed to resources through {@link ApiTransport}.
 */
class HttpTransport implements ApiTransport {
  readonly options: ResolvedClientOptions;
  readonly #base: ParsedBaseUrl;
  readonly #headers: Readonly<Record<string, string>>;
  /** {@link #headers} plus the JSON content type, for requests with a body. */
  readonly #bodyHeaders: Readonly<Record<string, string>>;
  readonly #dispatcher: Dispatcher;
  readonly #ownsDispatcher: boolean;
  readonly #limiter: RequestLimiter;
  readonly #logger: Logger;
  readonly #policy: RetryPolicy;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly #now: () => number;
  #closed = false;

  constructor(options: ClientOptions, resolved: ResolvedClientOptions) {
    this.options = resolved;
    this.#base = parseBaseUrl(resolved.baseUrl);
    // The key lives only in this private, frozen header object (docs/service-api.md "Authentication":
    // X-API-Key recommended; when both are sent X-API-Key wins, so exactly one is sent).
    this.#headers = Object.freeze({
      ...(resolved.authHeader === 'bearer'
        ? { authorization: `Bearer ${options.apiKey}` }
        : { 'x-api-key': options.apiKey }),
      'user-agent': resolved.userAgent,
      accept: 'application/json',
    });
    this.#bodyHeaders = Object.freeze({ ...this.#headers, 'content-type': 'application/json' });
    this.#ownsDispatcher = options.dispatcher === undefined;
    this.#dispatcher =
      options.dispatcher ??
      new Agent({
        connections: Math.max(resolved.concurrency, 1),
        pipelining: 1,
        connect: { timeout: Math.min(resolved.timeoutMs, 10_000) },
        headersTimeout: resolved.timeoutMs,
        bodyTimeout: resolved.timeoutMs,
      });
    this.#limiter = new RequestLimiter({
      concurrency: resolved.concurrency,
      requestsPerSecond: resolved.requestsPerSecond,
    });
    this.#logger = options.logger ?? noopLogger;
    this.#policy = {
      maxRetries: resolved.maxRetries,
      baseDelayMs: resolved.retryBaseMs,
      maxDelayMs: resolved.retryMaxDelayMs,
      deadlineMs: resolved.retryDeadlineMs,
      retryAfterMaxMs: resolved.retryAfterMaxMs,
      random: options.random ?? Math.random,
    };
    this.#sleep = options.sleep ?? abortableSleep;
    this.#now = options.now ?? Date.now;
  }

  url(relativePath: string, query = ''): ResolvedUrl {
    return serviceUrl(this.#base, relativePath, query);
  }

  resolveUrl(urlOrPath: string, method = 'GET'): ResolvedUrl {
    return resolveServiceUrl(this.#base, urlOrPath, method);
  }

  wireName(canonicalName: string): string {
    return this.options.queryParams[canonicalName] ?? canonicalName;
  }

  now(): number {
    return this.#now();
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return this.#sleep(ms, signal);
  }

  requestJson(request: JsonRequest): Promise<JsonResponse> {
    return this.#withRetries(request, (attempt) => this.#attemptJson(request, attempt));
  }

  requestStream(request: Omit<JsonRequest, 'body' | 'method'>): Promise<StreamResponse> {
    const full: JsonRequest = { ...request, method: 'GET' };
    return this.#withRetries(full, (attempt) => this.#attemptStream(full, attempt));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#limiter.clear();
    if (this.#ownsDispatcher) await this.#dispatcher.close();
  }

  /** The retry loop: each attempt takes a limiter slot; backoff waits hold none. */
  async #withRetries<T>(request: JsonRequest, attemptFn: (attempt: number) => Promise<T>): Promise<T> {
    const started = this.#now();
    for (let retries = 0; ; retries++) {
      try {
        return await this.#limiter.run(() => attemptFn(retries + 1), request.signal);
      } catch (error) {
        if (error instanceof AbortedError || request.signal?.aborted) {
          throw error instanceof AbortedError
            ? error
            : new AbortedError(undefined, { cause: request.signal?.reason });
        }
        const decision = decideRetry(error, retries, this.#now() - started, this.#policy, request.safety);
        if (!decision.retry) {
          if (error instanceof ApiError && error.retryable) {
            this.#log('api gave up', {
              method: request.method,
              path: request.url.displayPath,
              attempts: retries + 1,
              reason: decision.reason,
              code: decision.error instanceof ApiError ? decision.error.code : undefined,
            });
          }
          throw decision.error;
        }
        this.#log('api retry', {
          method: request.method,
          path: request.url.displayPath,
          attempt: retries + 1,
          reason: decision.reason,
          delayMs: decision.delayMs,
          retryAfterMs: decision.retryAfterMs,
        });
        await this.#sleep(decision.delayMs, request.signal);
      }
    }
  }

  /** False for the no-op logger, so the hot path builds no log fields at all. */
  get #logging(): boolean {
    return this.#logger !== noopLogger;
  }

  #log(msg: string, fields: Record<string, unknown>): void {
    if (this.#logging) this.#logger.debug(msg, redact(fields));
  }

  /** Sends one attempt; resolves with the response once headers arrived. */
  async #send(request: JsonRequest, attempt: number): Promise<Dispatcher.ResponseData> {
    if (this.#closed) {
      throw new NetworkError(
        { method: request.method, path: request.url.endpointPath, retryable: false },
        'other',
        false,
        'client closed',
      );
    }
    // Both header objects are built once (frozen; undici only reads them).
    const headers = request.body === undefined ? this.#headers : this.#bodyHeaders;
    try {
      // The per-attempt timeout is undici's: headersTimeout (request sent → headers) and
      // bodyTimeout (longest pause between body chunks), plus the Agent's connect timeout. This
      // avoids a timer and an AbortController per request on the hot paging path, and keeps the
      // timeout's phase visible in the error code (connect timeout = surely not sent).
      return await this.#dispatcher.request({
        origin: this.#base.origin,
        path: request.url.pathAndQuery,
        method: request.method,
        headers,
        body: request.body === undefined ? null : JSON.stringify(request.body),
        signal: request.signal ?? null,
        headersTimeout: this.options.timeoutMs,
        bodyTimeout: this.options.timeoutMs,
      });
    } catch (error) {
      throw this.#transportError(request, error, undefined, attempt);
    }
  }

  /** Maps a failure without a usable response to an error (abort, timeout, network). */
  #transportError(request: JsonRequest, error: unknown, status: number | undefined, _attempt: number): Error {
    if (error instanceof ApiError || error instanceof AbortedError) return error;
    if (request.signal?.aborted) return new AbortedError(undefined, { cause: request.signal.reason });
    const details = { method: request.method, path: request.url.endpointPath, status, cause: error };
    const kind = classifyNetworkError(error);
    if (status !== undefined) {
      // Headers arrived but the body broke off (reset, close or body timeout): truncated.
      return new ProtocolError(details, 'truncated', `response body truncated (${kind.what})`);
    }
    return new NetworkError(
      { ...details, retryable: kind.retryable },
      kind.failure,
      kind.requestSent,
      kind.what,
    );
  }

  /** The error for a non-2xx response; an error body that is not JSON is kept as text. */
  #errorFromBody(
    request: JsonRequest,
    status: number,
    headers: Record<string, string | string[] | undefined>,
    text: string,
  ): ApiError {
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // Not JSON: the text itself is what the service said.
    }
    return errorFromResponse(request.method, request.url.endpointPath, status, headers, body, this.#now());
  }

  async #attemptJson(request: JsonRequest, attempt: number): Promise<JsonResponse> {
    const startedAt = this.#logging ? performance.now() : 0;
    let status: number | undefined;
    let outcome: string | undefined;
    try {
      const response = await this.#send(request, attempt);
      status = response.statusCode;
      const ok = status >= 200 && status < 300;
      let text: string;
      try {
        text = await readBodyText(
          response.body,
          ok ? this.options.maxBodyBytes : MAX_ERROR_BODY_BYTES,
          !ok,
          response.headers,
        );
      } catch (error) {
        if (error instanceof BodyTooLarge) {
          throw new ProtocolError(
            { method: request.method, path: request.url.endpointPath, status },
            'too_large',
            `response body larger than maxBodyBytes (${this.options.maxBodyBytes} bytes)`,
          );
        }
        throw this.#transportError(request, error, status, attempt);
      }
      if (!ok) throw this.#errorFromBody(request, status, response.headers, text);
      if (text.trim() === '') {
        throw new ProtocolError(
          { method: request.method, path: request.url.endpointPath, status },
          'json',
          'empty response body',
        );
      }
      try {
        return { status, body: JSON.parse(text) as unknown };
      } catch (error) {
        // Usually a transport fault (a body cut short with a consistent Content-Length, or
        // garbled bytes), so it is retryable for safe requests.
        throw new ProtocolError(
          { method: request.method, path: request.url.endpointPath, status, body: text, cause: error },
          'json',
          `response is not valid JSON (${text.length} chars)`,
        );
      }
    } catch (error) {
      outcome =
        error instanceof ApiError || error instanceof AbortedError
          ? (error as { code: string }).code
          : 'error';
      throw error;
    } finally {
      if (this.#logging) {
        this.#log('api request', {
          method: request.method,
          path: request.url.displayPath,
          status,
          ms: Math.round(performance.now() - startedAt),
          attempt,
          ...(outcome ? { error: outcome } : {}),
        });
      }
    }
  }

  async #attemptStream(request: JsonRequest, attempt: number): Promise<StreamResponse> {
    const startedAt = performance.now();
    let status: number | undefined;
    let outcome: string | undefined;
    try {
      const response = await this.#send(request, attempt);
      status = response.statusCode;
      if (status < 200 || status >= 300) {
        let text = '';
        try {
          text = await readBodyText(response.body, MAX_ERROR_BODY_BYTES, true, response.headers);
        } catch {
          // The status is what matters; a broken error body is ignored.
        }
        throw this.#errorFromBody(request, status, response.headers, text);
      }
      // From here the body belongs to the caller; undici's bodyTimeout still limits stalls and
      // the caller's signal still aborts it.
      return { status, headers: response.headers, body: response.body as unknown as Readable };
    } catch (error) {
      outcome =
        error instanceof ApiError || error instanceof AbortedError
          ? (error as { code: string }).code
          : 'error';
      throw error;
    } finally {
      this.#log('api request', {
        method: request.method,
        path: request.url.displayPath,
        status,
        ms: Math.round(performance.now() - startedAt),
        attempt,
        ...(outcome ? { error: outcome } : { streaming: true }),
      });
    }
  }
}

class BodyTooLarge extends Error {}

/**
 * Reads a body as UTF-8 text, up to `cap` bytes. Over the cap: throws {@link BodyTooLarge}, or
 * with `truncateOk` returns the first `cap` bytes (error bodies are only excerpted). A body with
 * a Content-Length within the cap goes through undici's fast `text()`; otherwise chunks are
 * counted as they arrive.
 */
async function readBodyText(
  body: Dispatcher.ResponseData['body'],
  cap: number,
  truncateOk: boolean,
  headers: Record<string, unknown>,
): Promise<string> {
  const lengthHeader = headerValue(headers, 'content-length');
  const declared = lengthHeader === undefined ? Number.NaN : Number(lengthHeader);
  if (Number.isFinite(declared) && declared <= cap) return body.text();
  if (!truncateOk && Number.isFinite(declared)) {
    body.destroy();
    throw new BodyTooLarge();
  }
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (): void => resolve(Buffer.concat(chunks).toString('utf8'));
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= cap) {
        chunks.push(chunk);
        return;
      }
      body.removeAllListeners('data');
      body.removeAllListeners('end');
      body.on('error', () => {});
      body.destroy();
      if (!truncateOk) {
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(chunk.subarray(0, chunk.length - (size - cap)));
      finish();
    });
    body.once('end', finish);
    body.once('error', reject);
  });
}

/**
 * The typed client of the Domain Enrichment Service over HTTP (undici, pooled keep-alive).
 * Implements {@link DomainServiceApi}; pipelines should depend on that interface. Create it with
 * {@link createClient} and `close()` it when done.
 */
export class DomainServiceClient implements DomainServiceApi {
  readonly #transport: HttpTransport;
  readonly #options: ResolvedClientOptions;

  /** The company endpoints. */
  readonly companies: CompaniesApi;

  constructor(options: ClientOptions) {
    if (typeof options?.apiKey !== 'string' || options.apiKey.trim() === '') {
      throw new ClientConfigError('apiKey is required (set DOMAIN_SYNC_API_KEY)');
    }
    registerSecret(options.apiKey);
    this.#options = resolveOptions(options);
    this.#transport = new HttpTransport(options, this.#options);
    const transport = this.#transport;
    this.companies = Object.freeze({
      searchPreview: (params?: CompanyParams, opts?: RequestOptions): Promise<CompanyResponse> =>
        companySearchPreview(transport, params, opts),
      search: (params?: CompanyParams, opts?: RequestOptions): Promise<CompanyResponse> =>
        companySearch(transport, params, opts),
      resolve: (params?: CompanyParams, opts?: RequestOptions): Promise<CompanyResponse> =>
        companyResolve(transport, params, opts),
    });
  }

  /** The resolved options (no key). */
  get options(): ResolvedClientOptions {
    return this.#options;
  }

  searchDomains(filters?: DomainFilters, options?: RequestOptions): Promise<DomainSearchPage> {
    return searchDomains(this.#transport, filters, options);
  }

  iterateDomainPages(
    filters?: DomainFilters,
    options?: IterateDomainsOptions,
  ): AsyncGenerator<DomainPage, void, undefined> {
    return iterateDomainPages((f, signal) => searchDomains(this.#transport, f, { signal }), filters, options);
  }

  iterateDomains(
    filters?: DomainFilters,
    options?: IterateDomainsOptions,
  ): AsyncGenerator<DomainSummary, void, undefined> {
    return iterateDomains((f, signal) => searchDomains(this.#transport, f, { signal }), filters, options);
  }

  getDomain(domain: string, options?: GetDomainOptions): Promise<DomainProfile> {
    return getDomain(this.#transport, domain, options);
  }

  startEnrichment(params: StartEnrichmentParams, options?: RequestOptions): Promise<StartEnrichmentResult> {
    return startEnrichment(this.#transport, params, options);
  }

  getEnrichmentRun(idOrPollUrl: number | string, options?: RequestOptions): Promise<EnrichmentRun> {
    return getEnrichmentRun(this.#transport, idOrPollUrl, options);
  }

  async waitForEnrichmentRun(
    idOrPollUrl: number | string,
    options: PollOptions<EnrichmentRun> = {},
  ): Promise<EnrichmentRun> {
    return waitForEnrichmentRun(this.#transport, idOrPollUrl, this.#pollOptions(options));
  }

  getAccount(options?: RequestOptions): Promise<Account> {
    return getAccount(this.#transport, options);
  }

  createExport(params?: CreateExportParams, options?: RequestOptions): Promise<ExportCreated> {
    return createExport(this.#transport, params, options);
  }

  getExport(idOrPollUrl: number | string, options?: RequestOptions): Promise<ExportInfo> {
    return getExport(this.#transport, idOrPollUrl, options);
  }

  async waitForExport(
    idOrPollUrl: number | string,
    options: PollOptions<ExportInfo> = {},
  ): Promise<ExportInfo> {
    return waitForExport(this.#transport, idOrPollUrl, this.#pollOptions(options));
  }

  downloadExport(
    exportOrUrl: ExportInfo | number | string,
    options?: RequestOptions,
  ): Promise<ExportDownload> {
    return downloadExport(this.#transport, exportOrUrl, options);
  }

  /** Closes the connection pool (when the client owns it) and drops requests waiting for a slot. */
  close(): Promise<void> {
    return this.#transport.close();
  }

  /** `JSON.stringify(client)`: the base URL and auth header kind, never the key. */
  toJSON(): Record<string, unknown> {
    return { baseUrl: this.#options.baseUrl, authHeader: this.#options.authHeader };
  }

  /** `util.inspect(client)`: no key. */
  [inspect.custom](): string {
    return `DomainServiceClient { baseUrl: '${this.#options.baseUrl}', authHeader: '${this.#options.authHeader}' }`;
  }

  #pollOptions<T>(
    options: PollOptions<T>,
  ): PollOptions<T> & { pollIntervalMs: number; maxPollIntervalMs: number; deadlineMs: number } {
    return {
      ...options,
      pollIntervalMs: options.pollIntervalMs ?? this.#options.pollIntervalMs,
      maxPollIntervalMs: options.maxPollIntervalMs ?? this.#options.maxPollIntervalMs,
      deadlineMs: options.deadlineMs ?? this.#options.pollDeadlineMs,
    };
  }
}

/**
 * Creates a client. Validates the options (the base URL must end in `/api/v1/igaming`; a bad
 * option throws `ClientConfigError`, `ERR_CLIENT_CONFIG`) and registers the key as a secret so
 * `redact()` removes it everywhere.
 *
 * @example
 * const client = createClient({ baseUrl: 'https://service.example/api/v1/igaming', apiKey });
 * for await (const page of client.iterateDomainPages({ jurisdiction: 'mga' })) { … }
 * await client.close();
 */
export function createClient(options: ClientOptions): DomainServiceClient {
  return new DomainServiceClient(options);
}

export type { RequestSafety };
