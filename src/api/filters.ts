import { CANONICAL_FILTERS } from '../config/defaults.js';
import { InvalidArgumentError } from './errors.js';
import type { QueryValue } from './urls.js';

/**
 * Canonical filter names of `GET /domains` (docs/contract.md "Filter names"), the one list kept in
 * `config/` (which validates `api.queryParams` against it). The service does not name them on the
 * wire (only `jurisdiction` is seen; docs/service-api.md "GET /domains"), so each is sent under
 * `queryParams[name] ?? name`.
 */
export { CANONICAL_FILTERS };

/** A canonical filter name. */
export type CanonicalFilterName = (typeof CANONICAL_FILTERS)[number];

/** Largest `per_page` the service accepts (docs/service-api.md "Limits and credits"). */
export const MAX_PER_PAGE = 500;

/**
 * Filters of `GET /domains` and of an export, by canonical name. `page` and `per_page` are used
 * only by `searchDomains`.
 */
export interface DomainFilters {
  /** Licence jurisdiction: `mga`, `ukgc`, `curacao`, `anjouan`. */
  jurisdiction?: string;
  /** `card`, `crypto`, `ewallet`, `bank_transfer`, `open_banking`, `local_apm`. */
  payment_category?: string;
  /** Normalised game provider name. */
  game_provider?: string;
  /** Exclude domains with this provider. */
  exclude_provider?: string;
  /** Exclude domains with this payment category. */
  exclude_payment_category?: string;
  /** Only domains with affiliate programmes. */
  has_affiliate_programs?: boolean;
  /** Geographic targeting hint. */
  geo?: string;
  /** Only domains enriched after this ISO 8601 timestamp. */
  enriched_after?: string;
  /** Results per page, 1..500. */
  per_page?: number;
  /** Page number, from 1. */
  page?: number;
}

const KNOWN = new Set<string>(CANONICAL_FILTERS);

function checkPositiveInt(name: string, value: unknown, max?: number): void {
  if (
    typeof value !== 'number' ||
    !Number.isInteger(value) ||
    value < 1 ||
    (max !== undefined && value > max)
  ) {
    throw new InvalidArgumentError(
      `${name} must be an integer from 1${max !== undefined ? ` to ${max}` : ''}, got ${JSON.stringify(value)}`,
    );
  }
}

/**
 * Checks filters and maps canonical names to wire names, in canonical order. Unknown names are
 * refused (a typo would otherwise silently widen a sync); `per_page` above 500 is refused before
 * sending. Undefined and null values are dropped.
 */
export function toWireFilters(
  filters: DomainFilters | Readonly<Record<string, unknown>>,
  wireName: (canonical: string) => string,
): Array<[string, string | number | boolean]> {
  const out: Array<[string, string | number | boolean]> = [];
  const record = filters as Record<string, unknown>;
  for (const name of Object.keys(record)) {
    if (!KNOWN.has(name)) {
      throw new InvalidArgumentError(`unknown filter "${name}" (known: ${CANONICAL_FILTERS.join(', ')})`);
    }
  }
  for (const name of CANONICAL_FILTERS) {
    const value = record[name];
    if (value === undefined || value === null) continue;
    if (name === 'per_page') checkPositiveInt(name, value, MAX_PER_PAGE);
    else if (name === 'page') checkPositiveInt(name, value);
    else if (name === 'has_affiliate_programs') {
      if (typeof value !== 'boolean')
        throw new InvalidArgumentError(`has_affiliate_programs must be a boolean`);
    } else if (typeof value !== 'string' && typeof value !== 'number') {
      throw new InvalidArgumentError(`filter ${name} must be a string, got ${typeof value}`);
    }
    out.push([wireName(name), value as string | number | boolean]);
  }
  return out;
}

/** {@link toWireFilters} as query entries. */
export function toWireQueryEntries(
  filters: DomainFilters | Readonly<Record<string, unknown>>,
  wireName: (canonical: string) => string,
): Array<[string, QueryValue]> {
  return toWireFilters(filters, wireName);
}
