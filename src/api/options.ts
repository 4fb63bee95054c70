import type { Dispatcher } from 'undici';
import type { Logger } from '../log/logger.js';
import { ClientConfigError } from './errors.js';
import type { CanonicalFilterName } from './filters.js';
import { parseBaseUrl } from './urls.js';
import { DOMAIN_SYNC_VERSION } from '../util/version.js';

/*
 * The client's options: what a caller may set, the defaults, and their validation. Resolved once
 * when the client is made; the transport and the facade read only the frozen result.
 */

/** Version sent in the User-Agent: domain-sync's own. */
export const CLIENT_VERSION = DOMAIN_SYNC_VERSION;

/** Default cap on a JSON response body: 64 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024;

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

/**
 * Validates `options` and fills in the defaults (everything but the key). Throws
 * `ClientConfigError` naming the bad option.
 */
export function resolveOptions(options: ClientOptions): ResolvedClientOptions {
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
