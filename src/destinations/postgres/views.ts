import { qualified, quoteIdent } from './schema-plan.js';

/*
 * The mirror's analyst views (migration 0001_initial), written again in PostgreSQL's SQL over the
 * published tables, with the same names and columns. Where SQLite needed a workaround, the
 * PostgreSQL form is the plain one: string_agg(DISTINCT … ORDER BY …) for the comma lists,
 * split_part for the licence key, and timestamptz arithmetic for ages.
 */

/** One analyst view: the tables it reads and its body. */
export interface AnalystView {
  name: string;
  sources: readonly string[];
  /** The SELECT, with every table qualified by `schema`. */
  select(schema: string): string;
}

export const ANALYST_VIEWS: readonly AnalystView[] = [
  {
    name: 'v_domain_overview',
    sources: ['domains', 'licenses', 'payment_methods'],
    select: (s) => `SELECT
  d.domain_normalized,
  coalesce(d.domain, d.domain_normalized) AS domain,
  d.company_name,
  d.status,
  d.last_enriched_at,
  d.operator_name,
  d.operator_legal_entity_name,
  d.operator_country,
  d.brand_name,
  d.brand_slug,
  (SELECT string_agg(DISTINCT l.jurisdiction, ',' ORDER BY l.jurisdiction) FROM ${qualified(s, 'licenses')} l
     WHERE l.domain_normalized = d.domain_normalized AND l.removed_at IS NULL AND l.status = 'active') AS active_jurisdictions,
  (SELECT count(*) FROM ${qualified(s, 'licenses')} l
     WHERE l.domain_normalized = d.domain_normalized AND l.removed_at IS NULL) AS license_count,
  (SELECT string_agg(DISTINCT p.category, ',' ORDER BY p.category) FROM ${qualified(s, 'payment_methods')} p
     WHERE p.domain_normalized = d.domain_normalized AND p.removed_at IS NULL AND p.category IS NOT NULL) AS payment_categories,
  (SELECT count(*) FROM ${qualified(s, 'payment_methods')} p
     WHERE p.domain_normalized = d.domain_normalized AND p.removed_at IS NULL) AS payment_method_count,
  d.profile_synced_at,
  d.last_listed_at,
  d.unlisted_at
FROM ${qualified(s, 'domains')} d`,
  },
  {
    name: 'v_licence_changes',
    sources: ['change_log'],
    select: (s) => `SELECT
  c.at AS changed_at,
  c.domain_normalized,
  split_part(c.item_key, ':', 1) AS jurisdiction,
  substr(c.item_key, strpos(c.item_key, ':') + 1) AS license_number,
  c.change,
  c.old_value AS old_status,
  c.new_value AS new_status
FROM ${qualified(s, 'change_log')} c
WHERE c.table_name = 'licenses'`,
  },
  {
    name: 'v_payment_method_changes',
    sources: ['change_log'],
    select: (s) => `SELECT
  c.at AS changed_at,
  c.domain_normalized,
  c.item_key AS normalized_name,
  c.change,
  c.old_value,
  c.new_value
FROM ${qualified(s, 'change_log')} c
WHERE c.table_name = 'payment_methods'`,
  },
  {
    name: 'v_stale_domains',
    sources: ['domains'],
    select: (s) => `SELECT
  d.domain_normalized,
  d.company_name,
  d.last_enriched_at,
  round((extract(epoch FROM now() - d.last_enriched_at) / 86400)::numeric, 2) AS age_days,
  d.profile_synced_at
FROM ${qualified(s, 'domains')} d
WHERE d.unlisted_at IS NULL
ORDER BY d.last_enriched_at IS NOT NULL, d.last_enriched_at`,
  },
  {
    name: 'v_credits_per_day',
    sources: ['credit_ledger', 'pipeline_runs'],
    select: (s) => `SELECT
  to_char(c.at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day,
  coalesce(r.pipeline, '(none)') AS pipeline,
  c.operation,
  sum(c.credits) AS credits,
  sum(coalesce(c.estimated_credits, 0)) AS estimated_credits,
  count(*) AS entries
FROM ${qualified(s, 'credit_ledger')} c
LEFT JOIN ${qualified(s, 'pipeline_runs')} r ON r.id = c.pipeline_run_id
GROUP BY 1, 2, 3`,
  },
  {
    name: 'v_last_pipeline_runs',
    sources: ['pipeline_runs'],
    select: (s) => `SELECT r.*
FROM ${qualified(s, 'pipeline_runs')} r
WHERE r.id = (SELECT max(r2.id) FROM ${qualified(s, 'pipeline_runs')} r2 WHERE r2.pipeline = r.pipeline)`,
  },
];

/** `CREATE OR REPLACE VIEW` of `view` in `schema`. */
export function createViewSql(schema: string, view: AnalystView): string {
  return `CREATE OR REPLACE VIEW ${qualified(schema, view.name)} AS ${view.select(schema)}`;
}

/** The comment `publish` leaves on a view it made, so it recreates the view only when it changed. */
export function viewComment(fingerprint: string): string {
  return `domain-sync analyst view ${fingerprint}`;
}

export { quoteIdent };
