import { normalizeTimestamp } from '../util/time.js';
import type { CanonicalFilter, TruthGameProvider, TruthProfile } from './types.js';

// JURISDICTIONS, PAYMENT_CATEGORIES and DomainFilters near-copy src/api (wire.ts, filters.ts) on purpose:
// the simulator's own reading of docs/service-api.md; it must not import src/api.
/** Jurisdictions a licence filter accepts (docs/service-api.md "GET /domains"). */
export const JURISDICTIONS = ['mga', 'ukgc', 'curacao', 'anjouan'] as const;
/** Payment categories (docs/service-api.md "Payment method"). */
export const PAYMENT_CATEGORIES = [
  'card',
  'crypto',
  'ewallet',
  'bank_transfer',
  'open_banking',
  'local_apm',
] as const;

// The client has the same interface (src/api/filters.ts). Repeated on purpose: the simulator
// reads the service's interface on its own and imports nothing from src/api.
/** Validated domain filters (paging excluded). */
export interface DomainFilters {
  jurisdiction?: string;
  payment_category?: string;
  game_provider?: string;
  exclude_provider?: string;
  exclude_payment_category?: string;
  has_affiliate_programs?: boolean;
  geo?: string;
  /** Epoch ms; only domains enriched strictly after it. */
  enriched_after?: number;
}

/** Validation errors keyed by parameter name, as in the documented 400 body. */
export type FieldErrors = Record<string, string[]>;

/** Default and maximum page sizes of GET /domains ("not shown"; see docs/simulator.md). */
export const DEFAULT_PER_PAGE = 50;
/** Maximum `per_page` (docs/service-api.md "Limits and credits"). */
export const MAX_PER_PAGE = 500;

/**
 * Validates canonical filter values (strings as they come from a query string or an export's
 * `filters` object) and returns the parsed filters and paging, or field errors keyed by `wireName(name)`.
 */
export function parseFilters(
  input: Partial<Record<CanonicalFilter, unknown>>,
  wireName: (name: CanonicalFilter) => string = (n) => n,
  options: { paging: boolean } = { paging: true },
): { filters: DomainFilters; page: number; perPage: number; errors: FieldErrors } {
  const filters: DomainFilters = {};
  const errors: FieldErrors = {};
  const fail = (name: CanonicalFilter, message: string): void => {
    (errors[wireName(name)] ??= []).push(message);
  };
  const text = (name: CanonicalFilter): string | undefined => {
    const value = input[name];
    if (value === undefined) return undefined;
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    if (typeof value !== 'string') {
      fail(name, 'must be a string');
      return undefined;
    }
    if (value.trim() === '') {
      fail(name, 'must not be empty');
      return undefined;
    }
    return value.trim();
  };

  const jurisdiction = text('jurisdiction');
  if (jurisdiction !== undefined) {
    const lower = jurisdiction.toLowerCase();
    if ((JURISDICTIONS as readonly string[]).includes(lower)) filters.jurisdiction = lower;
    else fail('jurisdiction', `must be one of ${JURISDICTIONS.join(', ')}`);
  }
  for (const name of ['payment_category', 'exclude_payment_category'] as const) {
    const value = text(name);
    if (value === undefined) continue;
    const lower = value.toLowerCase();
    if ((PAYMENT_CATEGORIES as readonly string[]).includes(lower)) filters[name] = lower;
    else fail(name, `must be one of ${PAYMENT_CATEGORIES.join(', ')}`);
  }
  for (const name of ['game_provider', 'exclude_provider', 'geo'] as const) {
    const value = text(name);
    if (value !== undefined) filters[name] = value.toLowerCase();
  }
  const affiliates = text('has_affiliate_programs');
  if (affiliates !== undefined) {
    const lower = affiliates.toLowerCase();
    if (lower === 'true' || lower === '1') filters.has_affiliate_programs = true;
    else if (lower === 'false' || lower === '0') filters.has_affiliate_programs = false;
    else fail('has_affiliate_programs', 'must be true or false');
  }
  const after = text('enriched_after');
  if (after !== undefined) {
    const normalized = normalizeTimestamp(after);
    if (normalized === null) fail('enriched_after', 'must be an ISO 8601 timestamp');
    else filters.enriched_after = Date.parse(normalized);
  }

  let page = 1;
  let perPage = DEFAULT_PER_PAGE;
  if (options.paging) {
    const pageText = text('page');
    if (pageText !== undefined) {
      if (/^\d+$/.test(pageText) && Number(pageText) >= 1) page = Number(pageText);
      else fail('page', 'must be an integer of at least 1');
    }
    const perPageText = text('per_page');
    if (perPageText !== undefined) {
      if (!/^\d+$/.test(perPageText) || Number(perPageText) < 1)
        fail('per_page', 'must be an integer of at least 1');
      else if (Number(perPageText) > MAX_PER_PAGE) fail('per_page', `must be at most ${MAX_PER_PAGE}`);
      else perPage = Number(perPageText);
    }
  } else {
    for (const name of ['page', 'per_page'] as const) {
      if (input[name] !== undefined) fail(name, 'is not an export filter');
    }
  }
  return { filters, page, perPage, errors };
}

/** A stable cache key of a filter set. */
export function filtersKey(filters: DomainFilters): string {
  return JSON.stringify(Object.entries(filters).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** Whether a materialised profile matches the filters (same rules as `Catalogue.matches`). */
export function profileMatches(p: TruthProfile, f: DomainFilters): boolean {
  if (f.enriched_after !== undefined && !(Date.parse(p.last_enriched_at) > f.enriched_after)) return false;
  if (f.jurisdiction !== undefined && !p.licenses.some((l) => l.jurisdiction === f.jurisdiction))
    return false;
  if (f.payment_category !== undefined && !p.payment_methods.some((m) => m.category === f.payment_category))
    return false;
  if (
    f.exclude_payment_category !== undefined &&
    p.payment_methods.some((m) => m.category === f.exclude_payment_category)
  )
    return false;
  if (
    f.game_provider !== undefined &&
    !p.game_providers.some((g) => providerIs(g, f.game_provider as string))
  )
    return false;
  if (
    f.exclude_provider !== undefined &&
    p.game_providers.some((g) => providerIs(g, f.exclude_provider as string))
  )
    return false;
  if (f.has_affiliate_programs !== undefined && p.affiliate_programs.length > 0 !== f.has_affiliate_programs)
    return false;
  if (f.geo !== undefined && !p.geo.target_countries.some((c) => c.toLowerCase() === f.geo)) return false;
  return true;
}

// A provider filter matches the normalised name, or the display name case-insensitively
// (the service documents "normalised provider name"; the display name is a convenience).
export function providerIs(p: TruthGameProvider, wanted: string): boolean {
  return p.normalized_name === wanted || p.name.toLowerCase() === wanted;
}
