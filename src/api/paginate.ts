import { AbortedError } from '../util/domain-sync-error.js';
import { ProtocolError } from './errors.js';
import type { DomainFilters } from './filters.js';
import { MAX_PER_PAGE } from './filters.js';
import type { DomainSearchPage, DomainSummary } from './wire.js';

/** Options of {@link iterateDomainPages}. */
export interface IterateDomainsOptions {
  /**
   * Page size requested. The service's default page size is "not shown", so it is always sent.
   * @default 500
   */
  perPage?: number | undefined;
  /**
   * First page to fetch (to resume a listing).
   * @default 1
   */
  startPage?: number | undefined;
  /** Stops the iteration (rejects with `AbortedError`). */
  signal?: AbortSignal | undefined;
}

/**
 * One page of a listing plus what a caller needs to notice drift (the catalogue changing while
 * it is paged): the `total` of the first page and whether this page's `total` differs.
 */
export type DomainPage = DomainSearchPage & {
  /** Page number requested (1-based). */
  requestedPage: number;
  /** `per_page` requested. */
  requestedPerPage: number;
  /** `total` reported by the first page of this iteration. */
  firstTotal: number;
  /** True when this page's `total` differs from `firstTotal`: items may be missed or repeated. */
  totalChanged: boolean;
};

/** Fetches one page; `searchDomains` bound to a client. */
export type FetchDomainPage = (
  filters: DomainFilters,
  signal: AbortSignal | undefined,
) => Promise<DomainSearchPage>;

/**
 * Pages through `GET /domains` (dlt `RESTClient.paginate()`, openai-node `AbstractPage`).
 *
 * It depends on neither the default page size nor the sort order (the service describes neither;
 * docs/service-api.md "Pagination"): it always sends `per_page`, and stops when a page is empty or
 * shorter than its `per_page`, or when `page · per_page ≥ total`. If the service answers with a
 * different `per_page` than asked, its own is used for the arithmetic. A response whose `page`
 * is not the requested one (a wrong `api.queryParams.page`) is a `ProtocolError` rather than an
 * endless repeat of page 1. The service gives no snapshot guarantee; compare `total` across
 * pages (`totalChanged`) to detect drift.
 */
export async function* iterateDomainPages(
  fetchPage: FetchDomainPage,
  filters: DomainFilters = {},
  options: IterateDomainsOptions = {},
): AsyncGenerator<DomainPage, void, undefined> {
  const perPage = options.perPage ?? MAX_PER_PAGE;
  const { signal } = options;
  let firstTotal: number | undefined;
  for (let page = options.startPage ?? 1; ; page++) {
    if (signal?.aborted) throw new AbortedError(undefined, { cause: signal.reason });
    const result = await fetchPage({ ...filters, page, per_page: perPage }, signal);
    if (result.page !== page) {
      throw new ProtocolError(
        { method: 'GET', path: '/domains', status: 200 },
        'schema',
        `data.page: asked for page ${page}, got page ${result.page}; is the wire name of "page" (api.queryParams) right?`,
        'data.page',
      );
    }
    firstTotal ??= result.total;
    yield {
      ...result,
      requestedPage: page,
      requestedPerPage: perPage,
      firstTotal,
      totalChanged: result.total !== firstTotal,
    };
    const effectivePerPage = result.per_page > 0 ? result.per_page : perPage;
    if (result.domains.length === 0) return;
    if (result.domains.length < effectivePerPage) return;
    if (page * effectivePerPage >= result.total) return;
  }
}

/** Every domain summary of a listing, page after page (see {@link iterateDomainPages}). */
export async function* iterateDomains(
  fetchPage: FetchDomainPage,
  filters: DomainFilters = {},
  options: IterateDomainsOptions = {},
): AsyncGenerator<DomainSummary, void, undefined> {
  for await (const page of iterateDomainPages(fetchPage, filters, options)) yield* page.domains;
}
