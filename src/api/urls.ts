import { BASE_PATH, checkServiceBaseUrl } from '../util/base-url.js';
import type { ServiceBaseUrl } from '../util/base-url.js';
import { ClientConfigError, ForeignOriginError } from './errors.js';

/** The path prefix every base URL ends in (docs/service-api.md "Conventions"). */
export const BASE_PATH_SUFFIX = BASE_PATH;

/** A validated base URL, split into what the client needs. */
export type ParsedBaseUrl = ServiceBaseUrl;

/**
 * Validates a base URL by the rule of `src/util/base-url.ts`: http or https, no credentials,
 * query or fragment, path ending in `/api/v1/igaming` (a trailing slash is tolerated). Throws
 * {@link ClientConfigError}.
 */
export function parseBaseUrl(baseUrl: string): ParsedBaseUrl {
  const { base, problem } = checkServiceBaseUrl(baseUrl);
  if (base !== undefined) return base;
  switch (problem.rule) {
    case 'url':
      throw new ClientConfigError(`baseUrl is not a valid URL: ${JSON.stringify(baseUrl)}`);
    case 'protocol':
      throw new ClientConfigError(`baseUrl must use http or https, got ${problem.protocol}`);
    case 'credentials':
      throw new ClientConfigError('baseUrl must not contain credentials');
    case 'query':
      throw new ClientConfigError('baseUrl must not contain a query or fragment');
    case 'path':
      throw new ClientConfigError(`baseUrl must end in ${BASE_PATH}, got ${problem.got}`);
  }
}

/** A URL the client may request: same origin as the base URL. */
export interface ResolvedUrl {
  /** Path and query to send to the base origin, e.g. `/api/v1/igaming/exports/3/download`. */
  pathAndQuery: string;
  /** The same, relative to the base path when it lies under it, with the query (for logs). */
  displayPath: string;
  /** {@link displayPath} without the query (for error messages: the endpoint, not the page). */
  endpointPath: string;
}

/**
 * Resolves a `poll_url` or `download_url` (a path or an absolute URL; the service's description
 * shows paths only) against the base URL's origin. Only the same origin (scheme, host and port) is accepted:
 * anything else throws {@link ForeignOriginError} before any request is made, so the key never
 * leaves for another host (docs/contract.md "Behaviour details").
 */
export function resolveServiceUrl(base: ParsedBaseUrl, urlOrPath: string, method = 'GET'): ResolvedUrl {
  let url: URL;
  try {
    // A relative path ("exports/3") is taken relative to the base path, an absolute path
    // ("/api/v1/igaming/exports/3") relative to the origin, as a browser would.
    url = new URL(urlOrPath, `${base.href}/`);
  } catch {
    throw new ForeignOriginError(
      { method, path: String(urlOrPath).slice(0, 200) },
      'an unparseable URL',
      base.origin,
    );
  }
  if (url.origin !== base.origin || url.username || url.password) {
    const shown = url.origin === 'null' ? url.protocol : url.origin;
    throw new ForeignOriginError({ method, path: `${url.origin}${url.pathname}` }, shown, base.origin);
  }
  return toResolved(base, url.pathname, url.search);
}

/** A path relative to the base path (e.g. `/domains`) plus a query string (`?…` or ``). */
export function serviceUrl(base: ParsedBaseUrl, relativePath: string, query = ''): ResolvedUrl {
  return toResolved(base, `${base.basePath}${relativePath}`, query);
}

function toResolved(base: ParsedBaseUrl, pathname: string, search: string): ResolvedUrl {
  const endpointPath = displayPathOf(base, pathname);
  return { pathAndQuery: `${pathname}${search}`, displayPath: `${endpointPath}${search}`, endpointPath };
}

/** `pathAndQuery` relative to the base path when it lies under it. */
export function displayPathOf(base: ParsedBaseUrl, pathAndQuery: string): string {
  if (pathAndQuery.startsWith(`${base.basePath}/`)) return pathAndQuery.slice(base.basePath.length);
  if (pathAndQuery === base.basePath) return '/';
  return pathAndQuery;
}

/** A path segment made safe for the URL path (Unicode domains are percent-encoded as UTF-8). */
export function pathSegment(value: string | number): string {
  return encodeURIComponent(String(value));
}

/** A query value: string, number, boolean or a list (sent as repeated parameters). */
export type QueryValue =
  string | number | boolean | readonly (string | number | boolean)[] | undefined | null;

/** Builds `?a=1&b=2` from ordered entries, skipping undefined and null; arrays repeat the name. */
export function buildQuery(entries: Iterable<[string, QueryValue]>): string {
  const params = new URLSearchParams();
  for (const [name, value] of entries) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) {
      for (const item of value as readonly (string | number | boolean)[]) params.append(name, String(item));
    } else {
      params.append(name, String(value));
    }
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}
