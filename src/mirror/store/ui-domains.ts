import { cachedStatement, indexedBy } from '../database.js';
import type { Mirror } from '../database.js';
import type { LicenceRow, PaymentMethodRow } from './profile-fields.js';

/*
 * Reads of the dashboard's Domains pages (docs/ui.md). The search pages through domains in name
 * order and reads only indexes until it has a page (migration 0004_dashboard_read_indexes): the
 * name over `domains_search` (domain name and company name), a jurisdiction or payment category
 * over the partial indexes of current licences and payment methods. `domains` rows, which carry
 * the raw profile, are read only for the page's own rows.
 */

/** Filters of {@link searchDomains}; combined with AND. */
export interface SearchDomainsOptions {
  /**
   * Text the domain name or the company name contains (case-insensitive for ASCII letters; `%`
   * and `_` match themselves).
   */
  text?: string | null;
  /** A current (not removed) licence in this jurisdiction, whatever its status. */
  jurisdiction?: string | null;
  /** A current payment method of this category. */
  category?: string | null;
  /** Only domains whose name sorts after this one (the next page). */
  after?: string | null;
  limit: number;
}

/** A domain as the search lists it. */
export interface DomainListRow {
  domain_normalized: string;
  domain: string | null;
  company_name: string | null;
  status: string | null;
  last_enriched_at: string | null;
  unlisted_at: string | null;
  /** Jurisdictions of the current licences, comma-separated, sorted. */
  jurisdictions: string | null;
  /** Categories of the current payment methods, comma-separated, sorted. */
  categories: string | null;
}

/** `text` as a LIKE pattern that matches it anywhere, with `\` escaping `%`, `_` and `\`. */
function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

const NAME_MATCH = `(s.domain_normalized LIKE @pattern ESCAPE '\\' OR s.company_name LIKE @pattern ESCAPE '\\')`;

/**
 * Domains matching every given filter, in name order, `limit` + 1 names when there is a next page.
 * Unlisted domains are included (the page marks them).
 */
export function searchDomains(mirror: Mirror, options: SearchDomainsOptions): DomainListRow[] {
  const text = options.text ?? null;
  const params = {
    pattern: text === null ? null : containsPattern(text),
    jurisdiction: options.jurisdiction ?? null,
    category: options.category ?? null,
    after: options.after ?? '',
    limit: options.limit + 1,
  };
  const byName = indexedBy(mirror, 'domains_search');
  const byCategory = indexedBy(mirror, 'payment_methods_current_by_category');
  const nameCheck = `(@pattern IS NULL OR EXISTS (SELECT 1 FROM domains s ${byName}
       WHERE s.domain_normalized = x.domain_normalized AND ${NAME_MATCH}))`;
  const categoryCheck = `(@category IS NULL OR EXISTS (SELECT 1 FROM payment_methods p ${byCategory}
       WHERE p.category = @category AND p.domain_normalized = x.domain_normalized AND p.removed_at IS NULL))`;
  let names: Array<{ domain_normalized: string }>;
  if (params.jurisdiction !== null) {
    names = cachedStatement(
      mirror,
      `SELECT DISTINCT x.domain_normalized FROM licenses x ${indexedBy(mirror, 'licenses_current_by_jurisdiction')}
       WHERE x.jurisdiction = @jurisdiction AND x.removed_at IS NULL AND x.domain_normalized > @after
         AND ${categoryCheck} AND ${nameCheck}
       ORDER BY x.domain_normalized LIMIT @limit`,
    ).all(params) as typeof names;
  } else if (params.category !== null) {
    names = cachedStatement(
      mirror,
      `SELECT DISTINCT x.domain_normalized FROM payment_methods x ${byCategory}
       WHERE x.category = @category AND x.removed_at IS NULL AND x.domain_normalized > @after AND ${nameCheck}
       ORDER BY x.domain_normalized LIMIT @limit`,
    ).all(params) as typeof names;
  } else {
    names = cachedStatement(
      mirror,
      `SELECT s.domain_normalized FROM domains s ${byName}
       WHERE s.domain_normalized > @after AND (@pattern IS NULL OR ${NAME_MATCH})
       ORDER BY s.domain_normalized LIMIT @limit`,
    ).all({ pattern: params.pattern, after: params.after, limit: params.limit }) as typeof names;
  }
  const row = cachedStatement(
    mirror,
    `SELECT d.domain_normalized, d.domain, d.company_name, d.status, d.last_enriched_at, d.unlisted_at,
       (SELECT group_concat(jurisdiction, ',') FROM (SELECT DISTINCT jurisdiction FROM licenses
          WHERE domain_normalized = d.domain_normalized AND removed_at IS NULL ORDER BY 1)) AS jurisdictions,
       (SELECT group_concat(category, ',') FROM (SELECT DISTINCT category FROM payment_methods
          WHERE domain_normalized = d.domain_normalized AND removed_at IS NULL AND category IS NOT NULL
          ORDER BY 1)) AS categories
     FROM domains d WHERE d.domain_normalized = ?`,
  );
  return names.flatMap(({ domain_normalized }) => {
    const found = row.get(domain_normalized) as DomainListRow | undefined;
    return found === undefined ? [] : [found];
  });
}

/** A `domains` row as the domain page shows it (without the raw profile). */
export interface DomainDetailRow {
  domain_normalized: string;
  domain: string | null;
  company_name: string | null;
  status: string | null;
  last_enriched_at: string | null;
  operator_name: string | null;
  operator_legal_entity_name: string | null;
  operator_country: string | null;
  brand_name: string | null;
  brand_slug: string | null;
  served_from_cache: number | null;
  observed_at: string | null;
  profile_synced_at: string | null;
  first_synced_at: string;
  last_synced_at: string;
  last_listed_at: string | null;
  unlisted_at: string | null;
}

/** A licence of a domain, current or removed. */
export type DomainLicenceRow = LicenceRow & { removed_at: string | null };

/** A payment method of a domain, current or removed. */
export type DomainPaymentMethodRow = PaymentMethodRow & { removed_at: string | null };

/** An enrichment run of a domain. */
export interface DomainEnrichmentRunRow {
  id: number;
  status: string;
  strategy: string | null;
  started_at: string | null;
  completed_at: string | null;
  credits: number | null;
  error: string | null;
}

/** Everything the domain page shows of one domain, or undefined when the mirror has no such domain. */
export interface DomainDetail {
  domain: DomainDetailRow;
  licences: DomainLicenceRow[];
  paymentMethods: DomainPaymentMethodRow[];
  sections: Array<{ section: string; data: string | null; mirror_updated_at: string }>;
  enrichmentRuns: DomainEnrichmentRunRow[];
}

/** One domain by `domain_normalized`, with its licences, payment methods, sections and runs. */
export function domainDetail(mirror: Mirror, name: string, runLimit: number): DomainDetail | undefined {
  const domain = cachedStatement(
    mirror,
    `SELECT domain_normalized, domain, company_name, status, last_enriched_at, operator_name,
            operator_legal_entity_name, operator_country, brand_name, brand_slug, served_from_cache,
            observed_at, profile_synced_at, first_synced_at, last_synced_at, last_listed_at, unlisted_at
     FROM domains WHERE domain_normalized = ?`,
  ).get(name) as DomainDetailRow | undefined;
  if (domain === undefined) return undefined;
  return {
    domain,
    licences: cachedStatement(
      mirror,
      `SELECT jurisdiction, license_number, status, source_url, first_seen_at, last_confirmed_at, removed_at
       FROM licenses WHERE domain_normalized = ? ORDER BY removed_at IS NOT NULL, jurisdiction, license_number`,
    ).all(name) as DomainLicenceRow[],
    paymentMethods: cachedStatement(
      mirror,
      `SELECT normalized_name, category, confidence, first_seen_at, last_confirmed_at, removed_at
       FROM payment_methods WHERE domain_normalized = ? ORDER BY removed_at IS NOT NULL, category, normalized_name`,
    ).all(name) as DomainPaymentMethodRow[],
    sections: cachedStatement(
      mirror,
      'SELECT section, data, mirror_updated_at FROM domain_sections WHERE domain_normalized = ? ORDER BY section',
    ).all(name) as DomainDetail['sections'],
    enrichmentRuns: cachedStatement(
      mirror,
      `SELECT id, status, strategy, started_at, completed_at, credits, error FROM enrichment_runs
       WHERE domain = ? ORDER BY id DESC LIMIT ?`,
    ).all(name, runLimit) as DomainEnrichmentRunRow[],
  };
}
