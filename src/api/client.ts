import { inspect } from 'node:util';
import { registerSecret } from '../log/redact.js';
import type { DomainServiceApi, CompaniesApi } from './domain-service-api.js';
import { ClientConfigError } from './errors.js';
import type { DomainFilters } from './filters.js';
import { HttpTransport } from './http-transport.js';
import { resolveOptions } from './options.js';
import type { ClientOptions, ResolvedClientOptions } from './options.js';
import { iterateDomainPages, iterateDomains } from './paginate.js';
import type { DomainPage, IterateDomainsOptions } from './paginate.js';
import type { PollOptions } from './poll.js';
import { getAccount } from './resources/account.js';
import { companyResolve, companySearch, companySearchPreview } from './resources/companies.js';
import type { CompanyParams } from './resources/companies.js';
import { getDomain, getDomainText, searchDomains } from './resources/domains.js';
import type { GetDomainOptions, RequestOptions } from './resources/domains.js';
import { getEnrichmentRun, startEnrichment, waitForEnrichmentRun } from './resources/enrichments.js';
import type { StartEnrichmentParams, StartEnrichmentResult } from './resources/enrichments.js';
import { createExport, downloadExport, getExport, waitForExport } from './resources/exports.js';
import type { CreateExportParams, ExportCreated, ExportDownload } from './resources/exports.js';
import type {
  Account,
  CompanyResponse,
  DomainProfile,
  DomainSearchPage,
  DomainSummary,
  EnrichmentRun,
  ExportInfo,
} from './wire.js';

/*
 * The client as callers see it: options in (`options.ts`), one method per endpoint, each handed to
 * its resource function over the HTTP transport (`http-transport.ts`).
 */

// The methods below are same-shape one-line delegations to the resource functions: a facade, by design.
/**
 * The typed client of the Domain Enrichment Service over HTTP (undici, pooled keep-alive).
 * Implements {@link DomainServiceApi}; pipelines should depend on that interface. Create it with
 * {@link createClient} and `close()` it when done.
 */
export class DomainServiceClient implements DomainServiceApi {
  readonly #transport: HttpTransport;
  readonly #options: ResolvedClientOptions;

  /** The company endpoints. */
  readonly companies: CompaniesApi;

  constructor(options: ClientOptions) {
    if (typeof options?.apiKey !== 'string' || options.apiKey.trim() === '') {
      throw new ClientConfigError('apiKey is required (set DOMAIN_SYNC_API_KEY)');
    }
    registerSecret(options.apiKey);
    this.#options = resolveOptions(options);
    this.#transport = new HttpTransport(options, this.#options);
    const transport = this.#transport;
    this.companies = Object.freeze({
      searchPreview: (params?: CompanyParams, opts?: RequestOptions): Promise<CompanyResponse> =>
        companySearchPreview(transport, params, opts),
      search: (params?: CompanyParams, opts?: RequestOptions): Promise<CompanyResponse> =>
        companySearch(transport, params, opts),
      resolve: (params?: CompanyParams, opts?: RequestOptions): Promise<CompanyResponse> =>
        companyResolve(transport, params, opts),
    });
  }

  /** The resolved options (no key). */
  get options(): ResolvedClientOptions {
    return this.#options;
  }

  searchDomains(filters?: DomainFilters, options?: RequestOptions): Promise<DomainSearchPage> {
    return searchDomains(this.#transport, filters, options);
  }

  iterateDomainPages(
    filters?: DomainFilters,
    options?: IterateDomainsOptions,
  ): AsyncGenerator<DomainPage, void, undefined> {
    return iterateDomainPages((f, signal) => searchDomains(this.#transport, f, { signal }), filters, options);
  }

  iterateDomains(
    filters?: DomainFilters,
    options?: IterateDomainsOptions,
  ): AsyncGenerator<DomainSummary, void, undefined> {
    return iterateDomains((f, signal) => searchDomains(this.#transport, f, { signal }), filters, options);
  }

  getDomain(domain: string, options?: GetDomainOptions): Promise<DomainProfile> {
    return getDomain(this.#transport, domain, options);
  }

  getDomainText(domain: string, options?: GetDomainOptions): Promise<string> {
    return getDomainText(this.#transport, domain, options);
  }

  startEnrichment(params: StartEnrichmentParams, options?: RequestOptions): Promise<StartEnrichmentResult> {
    return startEnrichment(this.#transport, params, options);
  }

  getEnrichmentRun(idOrPollUrl: number | string, options?: RequestOptions): Promise<EnrichmentRun> {
    return getEnrichmentRun(this.#transport, idOrPollUrl, options);
  }

  async waitForEnrichmentRun(
    idOrPollUrl: number | string,
    options: PollOptions<EnrichmentRun> = {},
  ): Promise<EnrichmentRun> {
    return waitForEnrichmentRun(this.#transport, idOrPollUrl, this.#pollOptions(options));
  }

  getAccount(options?: RequestOptions): Promise<Account> {
    return getAccount(this.#transport, options);
  }

  createExport(params?: CreateExportParams, options?: RequestOptions): Promise<ExportCreated> {
    return createExport(this.#transport, params, options);
  }

  getExport(idOrPollUrl: number | string, options?: RequestOptions): Promise<ExportInfo> {
    return getExport(this.#transport, idOrPollUrl, options);
  }

  // The same delegation as waitForEnrichmentRun above, for exports: the facade is one line per
  // resource function by design (see the note above the methods).
  async waitForExport(
    idOrPollUrl: number | string,
    options: PollOptions<ExportInfo> = {},
  ): Promise<ExportInfo> {
    return waitForExport(this.#transport, idOrPollUrl, this.#pollOptions(options));
  }

  downloadExport(
    exportOrUrl: ExportInfo | number | string,
    options?: RequestOptions,
  ): Promise<ExportDownload> {
    return downloadExport(this.#transport, exportOrUrl, options);
  }

  /** Closes the connection pool (when the client owns it) and drops requests waiting for a slot. */
  close(): Promise<void> {
    return this.#transport.close();
  }

  /** `JSON.stringify(client)`: the base URL and auth header kind, never the key. */
  toJSON(): Record<string, unknown> {
    return { baseUrl: this.#options.baseUrl, authHeader: this.#options.authHeader };
  }

  /** `util.inspect(client)`: no key. */
  [inspect.custom](): string {
    return `DomainServiceClient { baseUrl: '${this.#options.baseUrl}', authHeader: '${this.#options.authHeader}' }`;
  }

  #pollOptions<T>(
    options: PollOptions<T>,
  ): PollOptions<T> & { pollIntervalMs: number; maxPollIntervalMs: number; deadlineMs: number } {
    return {
      ...options,
      pollIntervalMs: options.pollIntervalMs ?? this.#options.pollIntervalMs,
      maxPollIntervalMs: options.maxPollIntervalMs ?? this.#options.maxPollIntervalMs,
      deadlineMs: options.deadlineMs ?? this.#options.pollDeadlineMs,
    };
  }
}

/**
 * Creates a client. Validates the options (the base URL must end in `/api/v1/igaming`; a bad
 * option throws `ClientConfigError`, `ERR_CLIENT_CONFIG`) and registers the key as a secret so
 * `redact()` removes it everywhere.
 *
 * @example
 * const client = createClient({ baseUrl: 'https://service.example/api/v1/igaming', apiKey });
 * for await (const page of client.iterateDomainPages({ jurisdiction: 'mga' })) { … }
 * await client.close();
 */
export function createClient(options: ClientOptions): DomainServiceClient {
  return new DomainServiceClient(options);
}
