import { DomainSyncError } from '../util/domain-sync-error.js';
import { redactText } from '../log/redact.js';

/**
 * The error taxonomy of the Domain Enrichment Service client.
 *
 * Every class has a stable `code`, the request's `method` and `path` (relative to the base URL,
 * query redacted), the HTTP `status` when there was one, a shortened redacted `body`, a `cause`,
 * and a `retryable` flag that the retry policy in `retry.ts` reads. Messages are one line and
 * never contain the API key or raw headers.
 */

/** Longest response body excerpt kept on an error. */
export const MAX_ERROR_BODY_CHARS = 500;

/** Fields every API error carries. */
export interface ApiErrorDetails {
  /** HTTP method of the request, e.g. `GET`. */
  method: string;
  /** Path of the request relative to the base URL (e.g. `/domains/example.com`), redacted. */
  path: string;
  /** HTTP status, or `undefined` when no response arrived. */
  status?: number | undefined;
  /** The response body (parsed JSON or text); stored shortened and redacted. */
  body?: unknown;
  /** The underlying error. */
  cause?: unknown;
  /** Overrides the class's default retryable flag. */
  retryable?: boolean;
}

/** Shortens and redacts a response body for storage on an error or in a log line. */
export function shortenBody(body: unknown, maxChars: number = MAX_ERROR_BODY_CHARS): string | undefined {
  if (body === undefined || body === null || body === '') return undefined;
  let text: string;
  if (typeof body === 'string') text = body;
  else if (body instanceof Uint8Array) text = Buffer.from(body).toString('utf8');
  else {
    try {
      text = JSON.stringify(body);
    } catch {
      text = String(body);
    }
  }
  text = redactText(text).replace(/\s+/g, ' ').trim();
  return text.length > maxChars ? `${text.slice(0, maxChars)}… (${text.length} chars)` : text;
}

/**
 * Base class of every error raised by `src/api`. Carries the request coordinates and a short,
 * redacted body. Match on `code`, not on the class name or message.
 */
export class ApiError extends DomainSyncError {
  /** HTTP method of the failed request. */
  readonly method: string;
  /** Path relative to the base URL, query redacted. */
  readonly path: string;
  /** HTTP status, when a response arrived. */
  readonly status: number | undefined;
  /** Shortened, redacted response body (at most {@link MAX_ERROR_BODY_CHARS} characters). */
  readonly body: string | undefined;

  constructor(code: string, summary: string, details: ApiErrorDetails, defaultRetryable: boolean) {
    const path = redactText(details.path);
    super(code, redactText(`${details.method} ${path}: ${summary}`), {
      cause: details.cause,
      retryable: details.retryable ?? defaultRetryable,
    });
    this.method = details.method;
    this.path = path;
    this.status = details.status;
    this.body = shortenBody(details.body);
  }

  /** A JSON-safe summary (no stack, no cause object), e.g. for the `--json` output. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      code: this.code,
      message: this.message,
      method: this.method,
      path: this.path,
      status: this.status,
      retryable: this.retryable,
      body: this.body,
    };
  }
}

/** 401 (key missing or invalid, docs/service-api.md "Errors") or 403. Never retried. */
export class AuthError extends ApiError {
  constructor(details: ApiErrorDetails, serviceMessage?: string) {
    super(
      'ERR_AUTH',
      `the service rejected the API key (${details.status ?? 401}${serviceMessage ? ` ${serviceMessage}` : ''}); check DOMAIN_SYNC_API_KEY`,
      details,
      false,
    );
  }
}

/** 404: the domain, run or export does not exist (or, for a download, is pending or expired). */
export class NotFoundError extends ApiError {
  constructor(details: ApiErrorDetails, serviceMessage?: string) {
    super('ERR_NOT_FOUND', `not found (404${serviceMessage ? ` ${serviceMessage}` : ''})`, details, false);
  }
}

/** Credit figures from a 429 `quota_exceeded` body (docs/service-api.md "Errors"). */
export interface QuotaDetails {
  granted: number | undefined;
  used: number | undefined;
  reserved: number | undefined;
}

/** 429 with `error.code` `quota_exceeded`: the credit balance is exhausted. Never retried. */
export class QuotaExceededError extends ApiError {
  /** `error.details.granted` from the body, when present. */
  readonly granted: number | undefined;
  /** `error.details.used` from the body, when present. */
  readonly used: number | undefined;
  /** `error.details.reserved` from the body, when present. */
  readonly reserved: number | undefined;

  constructor(details: ApiErrorDetails, quota: QuotaDetails, serviceMessage?: string) {
    const figures = [
      quota.granted !== undefined ? `granted ${quota.granted}` : undefined,
      quota.used !== undefined ? `used ${quota.used}` : undefined,
      quota.reserved !== undefined ? `reserved ${quota.reserved}` : undefined,
    ].filter(Boolean);
    super(
      'ERR_QUOTA_EXCEEDED',
      `credit quota exhausted (429 quota_exceeded${figures.length ? `; ${figures.join(', ')}` : ''})${serviceMessage ? `: ${serviceMessage}` : ''}`,
      details,
      false,
    );
    this.granted = quota.granted;
    this.used = quota.used;
    this.reserved = quota.reserved;
  }
}

/** Any other 429: a refusal (the request was not processed), so it is retryable even for paid calls. */
export class RateLimitedError extends ApiError {
  /** Delay the service asked for through `Retry-After`, in milliseconds, when it gave one. */
  readonly retryAfterMs: number | undefined;

  constructor(details: ApiErrorDetails, retryAfterMs: number | undefined, serviceMessage?: string) {
    super(
      'ERR_RATE_LIMITED',
      `rate limited by the service (429${serviceMessage ? ` ${serviceMessage}` : ''}${
        retryAfterMs !== undefined ? `; retry after ${Math.ceil(retryAfterMs / 1000)}s` : ''
      })`,
      details,
      true,
    );
    this.retryAfterMs = retryAfterMs;
  }
}

/** 5xx from the service. Retryable for safe requests. */
export class ServerError extends ApiError {
  /** `Retry-After` in milliseconds (a 503 may carry one). */
  readonly retryAfterMs: number | undefined;

  constructor(details: ApiErrorDetails, retryAfterMs?: number, serviceMessage?: string) {
    super(
      'ERR_SERVER',
      `service error (${details.status ?? 500}${serviceMessage ? ` ${serviceMessage}` : ''})`,
      details,
      true,
    );
    this.retryAfterMs = retryAfterMs;
  }
}

/** 400/422 (and other unexpected 4xx): the service refused the request as given. Never retried. */
export class BadRequestError extends ApiError {
  /** The service's own message, when the body carried one. */
  readonly serviceMessage: string | undefined;

  constructor(details: ApiErrorDetails, serviceMessage?: string) {
    super(
      'ERR_BAD_REQUEST',
      `the service refused the request (${details.status ?? 400}${serviceMessage ? `: ${serviceMessage}` : ''})`,
      details,
      false,
    );
    this.serviceMessage = serviceMessage === undefined ? undefined : redactText(serviceMessage);
  }
}

/** What went wrong on the network. */
export type NetworkFailure = 'connect' | 'dns' | 'connect_timeout' | 'timeout' | 'reset' | 'other';

/**
 * No (complete) response: connection refused, DNS failure, reset, timeout.
 * `requestSent` is false only when the request surely never reached the service (refused, DNS,
 * connect timeout); the retry policy relies on that for credit-costing requests.
 */
export class NetworkError extends ApiError {
  /** Whether the request may have reached the service. */
  readonly requestSent: boolean;
  /** Kind of failure. */
  readonly failure: NetworkFailure;

  constructor(details: ApiErrorDetails, failure: NetworkFailure, requestSent: boolean, what: string) {
    super('ERR_NETWORK', `network error: ${what}`, details, true);
    this.requestSent = requestSent;
    this.failure = failure;
  }
}

/** Why a response could not be used. */
export type ProtocolFailure = 'json' | 'truncated' | 'schema' | 'too_large' | 'content_type';

/**
 * The response could not be used: bad JSON, truncated body, schema mismatch (the message names
 * the field path, e.g. `data.domains[3].domain_normalized: expected string`), or too large.
 * Bad or truncated bodies come from transport faults and are retryable for safe requests; a
 * schema mismatch or an over-large body would come back the same, so they are not.
 */
export class ProtocolError extends ApiError {
  /** Kind of failure. */
  readonly failure: ProtocolFailure;
  /** Field path of a schema mismatch, e.g. `data.domains[3].domain_normalized`. */
  readonly fieldPath: string | undefined;

  constructor(details: ApiErrorDetails, failure: ProtocolFailure, what: string, fieldPath?: string) {
    super('ERR_PROTOCOL', what, details, failure === 'json' || failure === 'truncated');
    this.failure = failure;
    this.fieldPath = fieldPath;
  }
}

/**
 * A credit-costing request (POST /enrichments, POST /exports, company search/resolve) failed in a
 * way that does not tell whether the service processed it (timeout or reset after sending, 5xx,
 * truncated body). It is never retried: the caller reconciles from its recorded intent (for
 * example by reading the domain's profile or `GET /account`). `cause` is the original error.
 */
export class OutcomeUnknownError extends ApiError {
  constructor(details: ApiErrorDetails) {
    const causeText = details.cause instanceof Error ? `: ${details.cause.message}` : '';
    super(
      'ERR_OUTCOME_UNKNOWN',
      `outcome unknown; the request may have been processed and billed, so it was not retried${causeText}`,
      details,
      false,
    );
  }
}

/**
 * A `poll_url` or `download_url` pointed to another origin than the base URL's. The URL was not
 * requested, so the foreign host never saw the key (docs/contract.md "Behaviour details").
 */
export class ForeignOriginError extends ApiError {
  /** The origin that was refused. */
  readonly foreignOrigin: string;

  constructor(details: ApiErrorDetails, foreignOrigin: string, expectedOrigin: string) {
    super(
      'ERR_FOREIGN_ORIGIN',
      `refused to follow a URL on ${foreignOrigin}; only ${expectedOrigin} (the base URL's origin) receives the API key`,
      details,
      false,
    );
    this.foreignOrigin = foreignOrigin;
  }
}

/** A caller passed an argument the client refuses before sending (bad per_page, unknown filter). */
export class InvalidArgumentError extends DomainSyncError {
  constructor(message: string) {
    super('ERR_INVALID_ARGUMENT', redactText(message));
  }
}

/** The client was configured wrongly (bad base URL, empty key). */
export class ClientConfigError extends DomainSyncError {
  constructor(message: string) {
    super('ERR_CLIENT_CONFIG', redactText(message));
  }
}

/** Polling a run or export did not see it settle before the deadline. */
export class PollTimeoutError extends DomainSyncError {
  /** The last status seen. */
  readonly lastStatus: string | undefined;
  /** What was polled, e.g. `enrichment run 42`. */
  readonly subject: string;

  constructor(subject: string, deadlineMs: number, lastStatus: string | undefined) {
    super(
      'ERR_POLL_TIMEOUT',
      `${subject} did not finish within ${Math.round(deadlineMs / 1000)}s (last status: ${lastStatus ?? 'unknown'})`,
      { retryable: true },
    );
    this.subject = subject;
    this.lastStatus = lastStatus;
  }
}

/** Reads `message` or `error.message` from an error body, if it has one. */
function serviceMessageOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const record = body as Record<string, unknown>;
  const error = record.error;
  if (typeof error === 'object' && error !== null) {
    const message = (error as Record<string, unknown>).message;
    if (typeof message === 'string' && message) return shortenBody(message, 200);
  }
  if (typeof error === 'string' && error) return shortenBody(error, 200);
  if (typeof record.message === 'string' && record.message) return shortenBody(record.message, 200);
  return undefined;
}

function intOrUndefined(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** Header lookup tolerant of undici's `string | string[]` values. */
export function headerValue(headers: Record<string, unknown> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  const value = headers[name.toLowerCase()];
  if (Array.isArray(value)) return typeof value[0] === 'string' ? value[0] : undefined;
  return typeof value === 'string' ? value : undefined;
}

/**
 * Parses a `Retry-After` value (delta-seconds or an HTTP date) into milliseconds from `nowMs`.
 * Returns `undefined` when absent or unparseable; a date in the past gives 0.
 */
export function parseRetryAfterMs(value: string | undefined, nowMs: number = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (text === '') return undefined;
  if (/^\d+(?:\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  // An HTTP date always has a weekday or month name; this keeps "-5" from parsing as a year.
  if (!/[A-Za-z]/.test(text)) return undefined;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}

/**
 * The one status + body → error factory (openai-node `APIError.generate`).
 * `body` is the parsed JSON body when it parsed, else its text. `headers` are only read for
 * `Retry-After`; they are never stored.
 */
export function errorFromResponse(
  method: string,
  path: string,
  status: number,
  headers: Record<string, unknown> | undefined,
  body: unknown,
  nowMs: number = Date.now(),
): ApiError {
  const details: ApiErrorDetails = { method, path, status, body };
  const serviceMessage = serviceMessageOf(body);
  if (status === 401 || status === 403) return new AuthError(details, serviceMessage);
  if (status === 404) return new NotFoundError(details, serviceMessage);
  if (status === 429) {
    // docs/service-api.md "Errors": quota exhaustion is 429 with error.code `quota_exceeded`. Any
    // other 429 is a rate limit (time-based limits are not described); it is a refusal, so retryable.
    const error =
      typeof body === 'object' && body !== null ? (body as Record<string, unknown>).error : undefined;
    const errorRecord =
      typeof error === 'object' && error !== null ? (error as Record<string, unknown>) : undefined;
    if (errorRecord?.code === 'quota_exceeded') {
      const quota =
        typeof errorRecord.details === 'object' && errorRecord.details !== null
          ? (errorRecord.details as Record<string, unknown>)
          : {};
      return new QuotaExceededError(
        details,
        {
          granted: intOrUndefined(quota.granted),
          used: intOrUndefined(quota.used),
          reserved: intOrUndefined(quota.reserved),
        },
        serviceMessage,
      );
    }
    return new RateLimitedError(
      details,
      parseRetryAfterMs(headerValue(headers, 'retry-after'), nowMs),
      serviceMessage,
    );
  }
  if (status >= 500) {
    return new ServerError(
      details,
      parseRetryAfterMs(headerValue(headers, 'retry-after'), nowMs),
      serviceMessage,
    );
  }
  return new BadRequestError(details, serviceMessage);
}
