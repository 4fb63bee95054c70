import { InvalidArgumentError } from '../errors.js';
import { toWireQueryEntries } from '../filters.js';
import type { DomainFilters } from '../filters.js';
import type { ApiTransport } from '../transport.js';
import { buildQuery, pathSegment } from '../urls.js';
import {
  DomainProfileResponseSchema,
  DomainSearchResponseSchema,
  parseJsonText,
  parseWire,
} from '../wire.js';
import { getData } from './requests.js';
import type { DomainProfile, DomainSearchPage, ProfileSection } from '../wire.js';

/** Options of a single request. */
export interface RequestOptions {
  /** Cancels the request, its wait for a slot and its retries. */
  signal?: AbortSignal | undefined;
}

/** Options of {@link getDomain}. */
export interface GetDomainOptions extends RequestOptions {
  /**
   * Sections to include, sent as repeated `include[]` (docs/service-api.md "GET /domains/:domain").
   * @default all sections (the parameter is not sent)
   */
  include?: readonly ProfileSection[] | undefined;
}

/**
 * `GET /domains` (0 credits): one page of the search. Filters use canonical names and are sent
 * under their configured wire names (`page` and `per_page` included). `per_page` above 500 is
 * refused before sending. Unknown response fields are kept.
 */
export async function searchDomains(
  transport: ApiTransport,
  filters: DomainFilters = {},
  options: RequestOptions = {},
): Promise<DomainSearchPage> {
  const query = buildQuery(toWireQueryEntries(filters, (name) => transport.wireName(name)));
  const url = transport.url('/domains', query);
  return getData(transport, url, DomainSearchResponseSchema, options);
}

/**
 * `GET /domains/:domain` (0 credits): the profile of one domain. The domain is percent-encoded
 * as UTF-8 in the path, so Unicode domains work. A domain not in the database gives
 * `NotFoundError` (`ERR_NOT_FOUND`).
 */
export async function getDomain(
  transport: ApiTransport,
  domain: string,
  options: GetDomainOptions = {},
): Promise<DomainProfile> {
  // `return await`: an async function returning a promise as it is adopts it in two more ticks.
  return await getData(
    transport,
    domainUrl(transport, domain, options),
    DomainProfileResponseSchema,
    options,
  );
}

/**
 * `GET /domains/:domain` (0 credits) as the body's text, neither parsed nor validated: for a
 * caller that hands profiles on as text and parses each once, elsewhere (the sync's mirror writer
 * thread). Limits, retries and error mapping are {@link getDomain}'s, except that the body's
 * contents are not looked at (an empty body is still refused): the caller reads the text with
 * {@link readProfileText}, and a text that is not JSON (a retryable `json` ProtocolError there)
 * is the fault getDomain would have retried, so the caller should fetch it again.
 */
export async function getDomainText(
  transport: ApiTransport,
  domain: string,
  options: GetDomainOptions = {},
): Promise<string> {
  const url = domainUrl(transport, domain, options);
  const { text } = await transport.requestText({ url, safety: 'safe', signal: options.signal });
  return text;
}

/**
 * The profile in the text of a `GET /domains/:domain` body (from {@link getDomainText}), checked
 * exactly as {@link getDomain} checks it. Throws the `ProtocolError` getDomain would have
 * thrown, naming the endpoint and field: of kind `json` (retryable) when the text is not JSON, of
 * kind `schema` when the profile does not match. Unknown fields are kept. `domain` is the one
 * requested, for the endpoint the error names (`/domains/:domain` without it).
 */
export function readProfileText(text: string, domain?: string): DomainProfile {
  const path = `/domains/${domain === undefined ? ':domain' : pathSegment(domain)}`;
  const body = parseJsonText(text, 'GET', path);
  return parseWire(DomainProfileResponseSchema, body, 'GET', path).data;
}

function domainUrl(transport: ApiTransport, domain: string, options: GetDomainOptions) {
  if (typeof domain !== 'string' || domain.trim() === '')
    throw new InvalidArgumentError('domain must be a non-empty string');
  const query = options.include ? buildQuery([['include[]', options.include]]) : '';
  return transport.url(`/domains/${pathSegment(domain)}`, query);
}
