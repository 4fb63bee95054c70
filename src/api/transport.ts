import type { Readable } from 'node:stream';
import type { RequestSafety } from './retry.js';
import type { ResolvedUrl } from './urls.js';
import { pathSegment } from './urls.js';

/** One JSON request as resources describe it to the transport. */
export interface JsonRequest {
  /** HTTP method. */
  method: 'GET' | 'POST';
  /** Where to send it (from {@link ApiTransport.url} or {@link ApiTransport.resolveUrl}). */
  url: ResolvedUrl;
  /** JSON body of a POST. */
  body?: unknown;
  /** Whether it may be retried freely or costs credits (see `retry.ts`). */
  safety: RequestSafety;
  /** Cancels waiting, the request and retries. */
  signal?: AbortSignal | undefined;
}

/** A successful (2xx) JSON response, body parsed but not yet validated. */
export interface JsonResponse {
  /** HTTP status (2xx). */
  status: number;
  /** The parsed JSON body. */
  body: unknown;
  /** The body's text as received, of which `body` is the parse. */
  text: string;
}

/** A successful (2xx) response whose body is returned as text, neither parsed nor validated. */
export interface TextResponse {
  /** HTTP status (2xx). */
  status: number;
  /** The body's text as received: not empty, but not known to be JSON. */
  text: string;
}

/** A successful (2xx) streamed response. */
export interface StreamResponse {
  /** HTTP status (2xx). */
  status: number;
  /** Response headers (lower-case names); never logged or stored. */
  headers: Record<string, string | string[] | undefined>;
  /** The body, not buffered. The caller must consume or destroy it. */
  body: Readable;
}

/**
 * What resource functions need from the HTTP layer. Implemented by `HttpTransport` in
 * `http-transport.ts` (the only code that sends through undici); resource files depend on this
 * interface only.
 */
export interface ApiTransport {
  /** A URL under the base path, e.g. `url('/domains', '?page=2')`. */
  url(relativePath: string, query?: string): ResolvedUrl;
  /** Resolves a `poll_url`/`download_url`; throws `ForeignOriginError` for another origin. */
  resolveUrl(urlOrPath: string, method?: string): ResolvedUrl;
  /** Sends a JSON request with limits, retries and error mapping; throws an `ApiError` subclass. */
  requestJson(request: JsonRequest): Promise<JsonResponse>;
  /**
   * Sends a GET as {@link requestJson} does (limits, retries, error mapping, an empty body
   * refused) but returns its 2xx body as text without parsing it: for a caller that parses it
   * elsewhere (the sync's mirror writer thread) and must then treat a body that is not JSON as
   * the retryable fault that {@link requestJson} would have retried.
   */
  requestText(request: Omit<JsonRequest, 'body' | 'method'>): Promise<TextResponse>;
  /** Sends a GET whose 2xx body is returned as a stream (retries happen only before the body). */
  requestStream(request: Omit<JsonRequest, 'body' | 'method'>): Promise<StreamResponse>;
  /** Wire name of a canonical filter (`api.queryParams`; identity by default). */
  wireName(canonicalName: string): string;
  /** Current time in ms (injectable for tests). */
  now(): number;
  /** Abortable sleep (injectable for tests). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/**
 * The URL of one resource given either its id (a number, or a string of digits) or a URL the
 * service returned for it (`poll_url`, `download_url`): `/<collection>/<id><suffix>` under the
 * base path for an id, else the URL resolved with the same-origin check (`ForeignOriginError`).
 */
export function resourceUrl(
  transport: ApiTransport,
  collection: string,
  idOrUrl: number | string,
  suffix = '',
): ResolvedUrl {
  if (typeof idOrUrl === 'number' || /^\d+$/.test(idOrUrl)) {
    return transport.url(`/${collection}/${pathSegment(idOrUrl)}${suffix}`);
  }
  return transport.resolveUrl(idOrUrl);
}
