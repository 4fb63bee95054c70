/*
 * The one rule for the service's base URL, shared by the config (which reports a bad one as a
 * config error naming its source) and the client (which throws ClientConfigError). Each words
 * the refusal for its own audience; the rule itself lives only here. The simulator serves the
 * same path but reads requests on its own, as an independent reading of the service.
 */

/** The path every base URL of the service ends in (docs/service-api.md "Conventions"). */
export const BASE_PATH = '/api/v1/igaming';

/** A base URL that passed {@link checkServiceBaseUrl}, split into what its users need. */
export interface ServiceBaseUrl {
  /** `scheme://host[:port]`, the only origin that ever receives the key. */
  origin: string;
  /** The base path without a trailing slash, ending in {@link BASE_PATH}. */
  basePath: string;
  /** `origin + basePath`. */
  href: string;
}

/** The rule a refused base URL broke, with what a message about it needs. */
export type BaseUrlProblem =
  | { rule: 'url' }
  | { rule: 'protocol'; protocol: string }
  | { rule: 'credentials' }
  | { rule: 'query' }
  /** `got`: the URL's origin and path as given. */
  | { rule: 'path'; got: string };

/**
 * Checks a base URL: http or https, no credentials, no query or fragment, and a path ending in
 * {@link BASE_PATH} (trailing slashes are dropped). The rules are checked in that order and the
 * first one broken is returned.
 */
export function checkServiceBaseUrl(
  input: string,
): { base: ServiceBaseUrl; problem?: undefined } | { base?: undefined; problem: BaseUrlProblem } {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return { problem: { rule: 'url' } };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { problem: { rule: 'protocol', protocol: url.protocol } };
  }
  if (url.username || url.password) return { problem: { rule: 'credentials' } };
  if (url.search || url.hash) return { problem: { rule: 'query' } };
  const basePath = url.pathname.replace(/\/+$/, '');
  if (!basePath.endsWith(BASE_PATH))
    return { problem: { rule: 'path', got: `${url.origin}${url.pathname}` } };
  return { base: { origin: url.origin, basePath, href: `${url.origin}${basePath}` } };
}
