import type { ApiTransport } from '../transport.js';
import { buildQuery } from '../urls.js';
import type { QueryValue } from '../urls.js';
import { CompanyResponseSchema, parseWire } from '../wire.js';
import type { CompanyResponse } from '../wire.js';
import type { RequestOptions } from './domains.js';

/**
 * Query parameters of a company endpoint. Their names and payloads are not described
 * (docs/service-api.md "Company endpoints and the lobby monitor"), so they are passed through as
 * given; a list is sent as a repeated parameter under the given name.
 */
export type CompanyParams = Readonly<Record<string, string | number | boolean | readonly string[]>>;

async function companyRequest(
  transport: ApiTransport,
  relativePath: string,
  params: CompanyParams,
  safety: 'safe' | 'credit',
  options: RequestOptions,
): Promise<CompanyResponse> {
  const url = transport.url(relativePath, buildQuery(Object.entries(params) as Array<[string, QueryValue]>));
  const response = await transport.requestJson({ method: 'GET', url, safety, signal: options.signal });
  return parseWire(CompanyResponseSchema, response.body, 'GET', url.endpointPath, response.status);
}

/** `GET /companies/search/preview` (0 credits: count, facets, cost). Retried like any safe GET. */
export function companySearchPreview(
  transport: ApiTransport,
  params: CompanyParams = {},
  options: RequestOptions = {},
): Promise<CompanyResponse> {
  return companyRequest(transport, '/companies/search/preview', params, 'safe', options);
}

/**
 * `GET /companies/search` (1 credit per result). Credit-costing although a GET, so it is only
 * retried when the service surely did not process it; an ambiguous failure is
 * `OutcomeUnknownError`.
 */
export function companySearch(
  transport: ApiTransport,
  params: CompanyParams = {},
  options: RequestOptions = {},
): Promise<CompanyResponse> {
  return companyRequest(transport, '/companies/search', params, 'credit', options);
}

/** `GET /companies/resolve` (3 credits per profile). Credit-costing: same retry rule as search. */
export function companyResolve(
  transport: ApiTransport,
  params: CompanyParams = {},
  options: RequestOptions = {},
): Promise<CompanyResponse> {
  return companyRequest(transport, '/companies/resolve', params, 'credit', options);
}
