import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import { Agent } from 'undici';
import type { Dispatcher } from 'undici';
import type { Logger } from '../log/logger.js';
import { noopLogger } from '../log/logger.js';
import { redact } from '../log/redact.js';
import { AbortedError } from '../util/domain-sync-error.js';
import { sleep as abortableSleep } from '../util/sleep.js';
import { abortRelayOf } from './abort-relay.js';
import { ApiError, errorFromResponse, NetworkError, ProtocolError } from './errors.js';
import { RequestLimiter } from './limiter.js';
import { classifyNetworkError } from './network-failure.js';
import type { ClientOptions, ResolvedClientOptions } from './options.js';
import { decideRetry } from './retry.js';
import type { RetryPolicy } from './retry.js';
import { BodyTooLarge, readBodyText } from './response-body.js';
import type { ApiTransport, JsonRequest, JsonResponse, StreamResponse, TextResponse } from './transport.js';
import { parseBaseUrl, resolveServiceUrl, serviceUrl } from './urls.js';
import type { ParsedBaseUrl, ResolvedUrl } from './urls.js';
import { parseJsonText } from './wire.js';

/*
 * The HTTP side of the client: the one module that sends through undici. The retry loop, the
 * limiter slots, the request log, and mapping each answer or failure to its error. Beside it:
 * reading (and capping) response bodies (`response-body.ts`), telling network failures apart by
 * whether the request may have reached the service (`network-failure.ts`), and what undici
 * listens to for an abort (`abort-relay.ts`).
 */

/** How much of an error response body is read (the rest is discarded). */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/**
 * The HTTP layer. Applies the base URL and origin rule, the
 * auth header, the limiter, the per-attempt timeout, the body cap, the retry policy and the
 * request log. Exposed to resources through {@link ApiTransport}.
 */
export class HttpTransport implements ApiTransport {
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

  requestText(request: Omit<JsonRequest, 'body' | 'method'>): Promise<TextResponse> {
    const full: JsonRequest = { ...request, method: 'GET' };
    return this.#withRetries(full, (attempt) =>
      this.#attempt(full, attempt, false, (response) => this.#readBody(full, response, false)),
    );
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

  /**
   * The retry loop: each attempt takes a limiter slot (`tryStart`, else `waitToStart`) and gives
   * it back (`finish`) in this function, with no promise layer of its own (see `#attempt`);
   * backoff waits hold none.
   */
  async #withRetries<T>(request: JsonRequest, attemptFn: (attempt: number) => Promise<T>): Promise<T> {
    const started = this.#now();
    const limiter = this.#limiter;
    for (let retries = 0; ; retries++) {
      try {
        if (!limiter.tryStart(request.signal)) await limiter.waitToStart(request.signal);
        try {
          return await attemptFn(retries + 1);
        } finally {
          limiter.finish();
        }
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

  /**
   * Whether the transport's events (all at debug) are written: false for the no-op logger and
   * below debug, so the hot path builds and redacts no log fields at all.
   */
  get #logging(): boolean {
    return this.#logger !== noopLogger && (this.#logger.levelEnabled?.('debug') ?? true);
  }

  #log(msg: string, fields: Record<string, unknown>): void {
    if (this.#logging) this.#logger.debug(msg, redact(fields));
  }

  /**
   * Sends one attempt; resolves with the response once headers arrived. Throws (synchronously)
   * when the client is closed or the signal has aborted; undici's own failures reject, and
   * `#attempt` maps them with `#transportError`.
   */
  #send(request: JsonRequest): Promise<Dispatcher.ResponseData> {
    if (this.#closed) {
      throw new NetworkError(
        { method: request.method, path: request.url.endpointPath, retryable: false },
        'other',
        false,
        'client closed',
      );
    }
    if (request.signal?.aborted) throw new AbortedError(undefined, { cause: request.signal.reason });
    // Both header objects are built once (frozen; undici only reads them).
    const headers = request.body === undefined ? this.#headers : this.#bodyHeaders;
    // The per-attempt timeout is undici's: headersTimeout (request sent → headers) and
    // bodyTimeout (longest pause between body chunks), plus the Agent's connect timeout. This
    // avoids a timer and an AbortController per request on the hot paging path, and keeps the
    // timeout's phase visible in the error code (connect timeout = surely not sent).
    return this.#dispatcher.request({
      origin: this.#base.origin,
      path: request.url.pathAndQuery,
      method: request.method,
      headers,
      body: request.body === undefined ? null : JSON.stringify(request.body),
      signal: request.signal === undefined ? null : abortRelayOf(request.signal),
      headersTimeout: this.options.timeoutMs,
      bodyTimeout: this.options.timeoutMs,
    });
  }

  /** Maps a failure without a usable response to an error (abort, timeout, network). */
  #transportError(request: JsonRequest, error: unknown, status: number | undefined): Error {
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

  #attemptJson(request: JsonRequest, attempt: number): Promise<JsonResponse> {
    return this.#attempt(request, attempt, false, (response) => this.#readBody(request, response, true));
  }

  #attemptStream(request: JsonRequest, attempt: number): Promise<StreamResponse> {
    return this.#attempt(request, attempt, true, (response) => this.#readStream(request, response));
  }

  /**
   * One attempt: sends it, hands the response to `read`, and logs the `api request` event with
   * its status, how long it took and how it ended (an error code, or `streaming` for a body
   * handed to the caller). Builds no log fields when not logging.
   *
   * The path of a request is kept to few async functions (this one, `#readBody`, the retry loop;
   * `#send` and `readBodyText` return undici's promises as they are): each layer is a promise
   * and its ticks on every request, and the client benchmark counts our client's own work per
   * request against a bare undici loop's.
   */
  async #attempt<T>(
    request: JsonRequest,
    attempt: number,
    streaming: boolean,
    read: (response: Dispatcher.ResponseData) => Promise<T>,
  ): Promise<T> {
    const startedAt = this.#logging ? performance.now() : 0;
    let status: number | undefined;
    let outcome: string | undefined;
    try {
      let response: Dispatcher.ResponseData;
      try {
        response = await this.#send(request);
      } catch (error) {
        throw this.#transportError(request, error, undefined);
      }
      status = response.statusCode;
      return await read(response);
    } catch (error) {
      outcome = error instanceof ApiError || error instanceof AbortedError ? error.code : 'error';
      throw error;
    } finally {
      if (this.#logging) {
        this.#log('api request', {
          method: request.method,
          path: request.url.displayPath,
          status,
          ms: Math.round(performance.now() - startedAt),
          attempt,
          ...(outcome ? { error: outcome } : streaming ? { streaming: true } : {}),
        });
      }
    }
  }

  /**
   * A 2xx answer's body read under its cap, not empty, and with `parse` parsed as JSON (a
   * {@link JsonResponse}); or the error the answer stands for.
   */
  #readBody(request: JsonRequest, response: Dispatcher.ResponseData, parse: true): Promise<JsonResponse>;
  #readBody(request: JsonRequest, response: Dispatcher.ResponseData, parse: false): Promise<TextResponse>;
  async #readBody(
    request: JsonRequest,
    response: Dispatcher.ResponseData,
    parse: boolean,
  ): Promise<TextResponse | JsonResponse> {
    const status = response.statusCode;
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
      throw this.#transportError(request, error, status);
    }
    if (!ok) throw this.#errorFromBody(request, status, response.headers, text);
    if (text.trim() === '') {
      throw new ProtocolError(
        { method: request.method, path: request.url.endpointPath, status },
        'json',
        'empty response body',
      );
    }
    if (!parse) return { status, text };
    return { status, body: parseJsonText(text, request.method, request.url.endpointPath, status), text };
  }

  /** A streamed answer: a 2xx body handed over unread, or the error a non-2xx one stands for. */
  async #readStream(request: JsonRequest, response: Dispatcher.ResponseData): Promise<StreamResponse> {
    const status = response.statusCode;
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
  }
}
