import type { DomainFilters } from './filters.js';
import type { DomainPage, IterateDomainsOptions } from './paginate.js';
import type { PollOptions } from './poll.js';
import type { CompanyParams } from './resources/companies.js';
import type { GetDomainOptions, RequestOptions } from './resources/domains.js';
import type { StartEnrichmentParams, StartEnrichmentResult } from './resources/enrichments.js';
import type { CreateExportParams, ExportCreated, ExportDownload } from './resources/exports.js';
// The same wire type names as client.ts imports: the interface and its implementation name one set of types.
import type {
  Account,
  CompanyResponse,
  DomainProfile,
  DomainSearchPage,
  DomainSummary,
  EnrichmentRun,
  ExportInfo,
} from './wire.js';

/**
 * The company endpoints (docs/service-api.md "Company endpoints and the lobby monitor"); their
 * parameters and payloads are not described, so params pass through and `data` is unvalidated.
 */
export interface CompaniesApi {
  /** `GET /companies/search/preview` (0 credits). */
  searchPreview(params?: CompanyParams, options?: RequestOptions): Promise<CompanyResponse>;
  /** `GET /companies/search` (1 credit per result; never retried blindly). */
  search(params?: CompanyParams, options?: RequestOptions): Promise<CompanyResponse>;
  /** `GET /companies/resolve` (3 credits per profile; never retried blindly). */
  resolve(params?: CompanyParams, options?: RequestOptions): Promise<CompanyResponse>;
}

/**
 * What pipelines depend on: the Domain Enrichment Service, one method per endpoint plus paging
 * and polling helpers. Pipelines depend on this interface, not on the class;
 * `DomainServiceClient` implements it over HTTP.
 *
 * Every method throws `ApiError` subclasses with stable codes (see `errors.ts`); safe requests
 * are already retried when they throw. Credit-costing ones (`startEnrichment`, `createExport`,
 * `companies.search`, `companies.resolve`) throw `OutcomeUnknownError` when the service may
 * have processed them.
 */
export interface DomainServiceApi {
  /** `GET /domains`: one page; canonical filter names; `per_page` ≤ 500. */
  searchDomains(filters?: DomainFilters, options?: RequestOptions): Promise<DomainSearchPage>;
  /** Every page of `GET /domains` for the filters, with drift information on each page. */
  iterateDomainPages(filters?: DomainFilters, options?: IterateDomainsOptions): AsyncIterable<DomainPage>;
  /** Every domain summary of `GET /domains` for the filters. */
  iterateDomains(filters?: DomainFilters, options?: IterateDomainsOptions): AsyncIterable<DomainSummary>;
  /** `GET /domains/:domain`: a profile; `NotFoundError` when unknown. */
  getDomain(domain: string, options?: GetDomainOptions): Promise<DomainProfile>;
  /**
   * {@link getDomain}'s body as text, not parsed or validated: read it with `readProfileText`,
   * and fetch again when that finds it is not JSON (a retryable `json` ProtocolError).
   */
  getDomainText(domain: string, options?: GetDomainOptions): Promise<string>;
  /** `POST /enrichments`: cached (200) or started (202). */
  startEnrichment(params: StartEnrichmentParams, options?: RequestOptions): Promise<StartEnrichmentResult>;
  /** `GET /enrichment_runs/:id`, by id or same-origin `poll_url`. */
  getEnrichmentRun(idOrPollUrl: number | string, options?: RequestOptions): Promise<EnrichmentRun>;
  /** Polls a run until `completed` or `failed` and returns it (failed too). */
  waitForEnrichmentRun(
    idOrPollUrl: number | string,
    options?: PollOptions<EnrichmentRun>,
  ): Promise<EnrichmentRun>;
  /** `GET /account`. */
  getAccount(options?: RequestOptions): Promise<Account>;
  /** `POST /exports`. */
  createExport(params?: CreateExportParams, options?: RequestOptions): Promise<ExportCreated>;
  /** `GET /exports/:id`, by id or same-origin `poll_url`. */
  getExport(idOrPollUrl: number | string, options?: RequestOptions): Promise<ExportInfo>;
  /** Polls an export until `completed` or failed-like and returns it (failed too). */
  waitForExport(idOrPollUrl: number | string, options?: PollOptions<ExportInfo>): Promise<ExportInfo>;
  /** `GET /exports/:id/download` as a stream with a sanitised file name. */
  downloadExport(
    exportOrUrl: ExportInfo | number | string,
    options?: RequestOptions,
  ): Promise<ExportDownload>;
  /** The company endpoints. */
  readonly companies: CompaniesApi;
}
