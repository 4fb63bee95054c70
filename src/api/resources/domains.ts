import { InvalidArgumentError } from '../errors.js';
import { toWireQueryEntries } from '../filters.js';
import type { DomainFilters } from '../filters.js';
import type { ApiTransport } from '../transport.js';
import { buildQuery, pathSegment } from '../urls.js';
import { DomainProfileResponseSchema, DomainSearchResponseSchema } from '../wire.js';
import { getData, getDataWithText } from './requests.js';
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
  return getData(transport, domainUrl(transport, domain, options), DomainProfileResponseSchema, options);
}

/**
 * A profile as {@link getDomain} returns it, with the response body's text as received: the
 * profile is its `data` member (docs/service-api.md "Responses"), validated exactly as
 * {@link getDomain} validates it. For a caller that hands profiles on as text (the sync's mirror
 * writer thread parses them again) rather than keeping the parsed objects.
 */
export async function getDomainWithText(
  transport: ApiTransport,
  domain: string,
  options: GetDomainOptions = {},
): Promise<DomainProfileText> {
  const url = domainUrl(transport, domain, options);
  const { data, text } = await getDataWithText(transport, url, DomainProfileResponseSchema, options);
  return { profile: data, text };
}

/** The member of a `GET /domains/:domain` body that holds the profile: the success envelope's. */
export const PROFILE_BODY_MEMBER = 'data';

/** A profile with the text it was parsed from; see {@link getDomainWithText}. */
export interface DomainProfileText {
  /** The validated profile. */
  profile: DomainProfile;
  /** The response body as received: a JSON object whose {@link PROFILE_BODY_MEMBER} is {@link profile}. */
  text: string;
}

function domainUrl(transport: ApiTransport, domain: string, options: GetDomainOptions) {
  if (typeof domain !== 'string' || domain.trim() === '')
    throw new InvalidArgumentError('domain must be a non-empty string');
  const query = options.include ? buildQuery([['include[]', options.include]]) : '';
  return transport.url(`/domains/${pathSegment(domain)}`, query);
}
