import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/*
 * The initial mirror schema. Frozen once merged: later changes go in a new numbered migration.
 * Migrations take Kysely<any> and import no application code (they must not change when the code
 * does), so this file spells every table, index, trigger and view out as plain SQL.
 *
 * Conventions (docs/schema.md):
 * - STRICT tables: a wrong type is an error at write time instead of silent affinity coercion.
 * - Timestamps are TEXT `YYYY-MM-DDTHH:MM:SS.sssZ` (normalised by the store before writing), so
 *   text comparison orders them.
 * - Booleans are INTEGER 0/1; JSON is TEXT.
 * - History is never deleted: `removed_at` / `unlisted_at` mark what disappeared.
 */

const TABLES: readonly string[] = [
  `CREATE TABLE domains (
    domain_normalized TEXT PRIMARY KEY NOT NULL,
    domain TEXT,
    company_name TEXT,
    status TEXT,
    last_enriched_at TEXT,
    listing_last_enriched_at TEXT,
    operator_name TEXT,
    operator_legal_entity_name TEXT,
    operator_country TEXT,
    brand_name TEXT,
    brand_slug TEXT,
    freshness_age_seconds INTEGER,
    served_from_cache INTEGER,
    billable INTEGER,
    observed_at TEXT,
    raw_profile TEXT,
    profile_hash TEXT,
    profile_synced_at TEXT,
    first_synced_at TEXT NOT NULL,
    last_synced_at TEXT NOT NULL,
    last_listed_at TEXT,
    unlisted_at TEXT
  ) STRICT`,
  `CREATE TABLE licenses (
    domain_normalized TEXT NOT NULL REFERENCES domains (domain_normalized),
    jurisdiction TEXT NOT NULL,
    license_number TEXT NOT NULL,
    status TEXT,
    source_url TEXT,
    first_seen_at TEXT,
    last_confirmed_at TEXT,
    removed_at TEXT,
    mirror_first_seen_at TEXT NOT NULL,
    mirror_updated_at TEXT NOT NULL,
    PRIMARY KEY (domain_normalized, jurisdiction, license_number)
  ) STRICT`,
  `CREATE TABLE payment_methods (
    domain_normalized TEXT NOT NULL REFERENCES domains (domain_normalized),
    normalized_name TEXT NOT NULL,
    category TEXT,
    confidence TEXT,
    first_seen_at TEXT,
    last_confirmed_at TEXT,
    removed_at TEXT,
    mirror_first_seen_at TEXT NOT NULL,
    mirror_updated_at TEXT NOT NULL,
    PRIMARY KEY (domain_normalized, normalized_name)
  ) STRICT`,
  `CREATE TABLE domain_sections (
    domain_normalized TEXT NOT NULL REFERENCES domains (domain_normalized),
    section TEXT NOT NULL,
    data TEXT,
    mirror_first_seen_at TEXT NOT NULL,
    mirror_updated_at TEXT NOT NULL,
    PRIMARY KEY (domain_normalized, section)
  ) STRICT`,
  `CREATE TABLE pipeline_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    pipeline TEXT NOT NULL,
    status TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    credits_spent INTEGER NOT NULL DEFAULT 0,
    stats TEXT,
    error TEXT,
    pid INTEGER
  ) STRICT`,
  `CREATE TABLE enrichment_runs (
    id INTEGER PRIMARY KEY NOT NULL,
    domain TEXT,
    status TEXT NOT NULL,
    strategy TEXT,
    started_at TEXT,
    completed_at TEXT,
    error TEXT,
    error_type TEXT,
    credits INTEGER,
    result_domain_normalized TEXT,
    result_status TEXT,
    result_last_enriched_at TEXT,
    requested_at TEXT,
    last_polled_at TEXT,
    pipeline_run_id INTEGER,
    intent_id INTEGER,
    raw TEXT,
    mirror_updated_at TEXT NOT NULL
  ) STRICT`,
  `CREATE TABLE enrichment_intents (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    domain TEXT NOT NULL,
    strategy TEXT,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    resolved_at TEXT,
    pipeline_run_id INTEGER,
    run_id INTEGER,
    estimated_credits INTEGER,
    note TEXT
  ) STRICT`,
  `CREATE TABLE exports (
    id INTEGER PRIMARY KEY NOT NULL,
    status TEXT NOT NULL,
    format TEXT,
    filters TEXT,
    fields TEXT,
    total_rows INTEGER,
    credits_used INTEGER,
    expires_at TEXT,
    download_url TEXT,
    file_path TEXT,
    loaded_at TEXT,
    rows_loaded INTEGER,
    requested_at TEXT,
    params_hash TEXT,
    checksum TEXT,
    byte_count INTEGER,
    download_status TEXT,
    downloaded_at TEXT,
    error TEXT,
    pipeline_run_id INTEGER,
    mirror_updated_at TEXT NOT NULL
  ) STRICT`,
  `CREATE TABLE sync_state (
    pipeline TEXT NOT NULL,
    scope_key TEXT NOT NULL,
    filters TEXT,
    watermark TEXT,
    cursor TEXT,
    pipeline_run_id INTEGER,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (pipeline, scope_key)
  ) STRICT`,
  `CREATE TABLE credit_ledger (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    pipeline_run_id INTEGER,
    operation TEXT NOT NULL,
    domain TEXT,
    export_id INTEGER,
    run_id INTEGER,
    credits INTEGER NOT NULL,
    estimated_credits INTEGER,
    entry_key TEXT UNIQUE,
    note TEXT
  ) STRICT`,
  `CREATE TABLE account_snapshots (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    plan TEXT,
    credits_granted INTEGER,
    credits_used INTEGER,
    credits_reserved INTEGER,
    available_credits INTEGER,
    pipeline_run_id INTEGER,
    raw TEXT
  ) STRICT`,
  // Filled only by the triggers below, so every real change of a licence or payment method is
  // kept even after a later change overwrites the row (the upserts never rewrite an unchanged
  // row, so the triggers never log a non-change).
  `CREATE TABLE change_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    table_name TEXT NOT NULL,
    domain_normalized TEXT NOT NULL,
    item_key TEXT NOT NULL,
    change TEXT NOT NULL,
    old_value TEXT,
    new_value TEXT
  ) STRICT`,
];

const INDEXES: readonly string[] = [
  'CREATE INDEX domains_last_enriched_at ON domains (last_enriched_at)',
  'CREATE INDEX domains_listing_last_enriched_at ON domains (listing_last_enriched_at)',
  'CREATE INDEX domains_company_name ON domains (company_name)',
  'CREATE INDEX domains_operator_name ON domains (operator_name)',
  'CREATE INDEX domains_last_listed_at ON domains (last_listed_at)',
  'CREATE INDEX domains_unlisted_at ON domains (unlisted_at)',
  'CREATE INDEX licenses_jurisdiction ON licenses (jurisdiction, removed_at)',
  'CREATE INDEX licenses_removed_at ON licenses (removed_at)',
  'CREATE INDEX payment_methods_category ON payment_methods (category, removed_at)',
  'CREATE INDEX payment_methods_removed_at ON payment_methods (removed_at)',
  'CREATE INDEX enrichment_runs_status ON enrichment_runs (status)',
  'CREATE INDEX enrichment_runs_domain ON enrichment_runs (domain)',
  'CREATE INDEX enrichment_intents_status ON enrichment_intents (status)',
  'CREATE INDEX exports_params_hash ON exports (params_hash)',
  'CREATE INDEX credit_ledger_at ON credit_ledger (at)',
  'CREATE INDEX credit_ledger_pipeline_run_id ON credit_ledger (pipeline_run_id)',
  'CREATE INDEX pipeline_runs_pipeline ON pipeline_runs (pipeline, started_at)',
  'CREATE INDEX account_snapshots_at ON account_snapshots (at)',
  'CREATE INDEX change_log_item ON change_log (table_name, domain_normalized, at)',
];

/** One trigger set per history table: added / removed / restored / changed. */
function historyTriggers(
  table: 'licenses' | 'payment_methods',
  keyExpr: (row: 'NEW' | 'OLD') => string,
  valueExpr: (row: 'NEW' | 'OLD') => string,
): string[] {
  return [
    `CREATE TRIGGER ${table}_log_insert AFTER INSERT ON ${table}
     BEGIN
       INSERT INTO change_log (at, table_name, domain_normalized, item_key, change, old_value, new_value)
       VALUES (NEW.mirror_updated_at, '${table}', NEW.domain_normalized, ${keyExpr('NEW')},
               CASE WHEN NEW.removed_at IS NULL THEN 'added' ELSE 'removed' END, NULL, ${valueExpr('NEW')});
     END`,
    `CREATE TRIGGER ${table}_log_update AFTER UPDATE ON ${table}
     BEGIN
       INSERT INTO change_log (at, table_name, domain_normalized, item_key, change, old_value, new_value)
       SELECT NEW.mirror_updated_at, '${table}', NEW.domain_normalized, ${keyExpr('NEW')},
              CASE
                WHEN OLD.removed_at IS NULL AND NEW.removed_at IS NOT NULL THEN 'removed'
                WHEN OLD.removed_at IS NOT NULL AND NEW.removed_at IS NULL THEN 'restored'
                ELSE 'changed'
              END,
              ${valueExpr('OLD')}, ${valueExpr('NEW')}
       WHERE (OLD.removed_at IS NULL) <> (NEW.removed_at IS NULL)
          OR ${valueExpr('OLD')} IS NOT ${valueExpr('NEW')};
     END`,
  ];
}

const TRIGGERS: readonly string[] = [
  ...historyTriggers(
    'licenses',
    (r) => `${r}.jurisdiction || ':' || ${r}.license_number`,
    (r) => `${r}.status`,
  ),
  ...historyTriggers(
    'payment_methods',
    (r) => `${r}.normalized_name`,
    (r) => `coalesce(${r}.category, '') || '/' || coalesce(${r}.confidence, '')`,
  ),
];

const VIEWS: readonly string[] = [
  // Correlated scalar subqueries rather than group_concat(... ORDER BY ...), which needs SQLite
  // 3.44+: an older sqlite3 shell must still be able to read the whole schema.
  `CREATE VIEW v_domain_overview AS
   SELECT
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
     (SELECT group_concat(jurisdiction, ',') FROM (
        SELECT DISTINCT l.jurisdiction FROM licenses l
        WHERE l.domain_normalized = d.domain_normalized AND l.removed_at IS NULL AND l.status = 'active'
        ORDER BY l.jurisdiction)) AS active_jurisdictions,
     (SELECT count(*) FROM licenses l
        WHERE l.domain_normalized = d.domain_normalized AND l.removed_at IS NULL) AS license_count,
     (SELECT group_concat(category, ',') FROM (
        SELECT DISTINCT p.category FROM payment_methods p
        WHERE p.domain_normalized = d.domain_normalized AND p.removed_at IS NULL AND p.category IS NOT NULL
        ORDER BY p.category)) AS payment_categories,
     (SELECT count(*) FROM payment_methods p
        WHERE p.domain_normalized = d.domain_normalized AND p.removed_at IS NULL) AS payment_method_count,
     d.profile_synced_at,
     d.last_listed_at,
     d.unlisted_at
   FROM domains d`,
  `CREATE VIEW v_licence_changes AS
   SELECT
     c.at AS changed_at,
     c.domain_normalized,
     substr(c.item_key, 1, instr(c.item_key, ':') - 1) AS jurisdiction,
     substr(c.item_key, instr(c.item_key, ':') + 1) AS license_number,
     c.change,
     c.old_value AS old_status,
     c.new_value AS new_status
   FROM change_log c
   WHERE c.table_name = 'licenses'`,
  `CREATE VIEW v_payment_method_changes AS
   SELECT
     c.at AS changed_at,
     c.domain_normalized,
     c.item_key AS normalized_name,
     c.change,
     c.old_value,
     c.new_value
   FROM change_log c
   WHERE c.table_name = 'payment_methods'`,
  // Parameter-free: age is computed against the current time; analysts filter on age_days.
  `CREATE VIEW v_stale_domains AS
   SELECT
     d.domain_normalized,
     d.company_name,
     d.last_enriched_at,
     CASE WHEN d.last_enriched_at IS NULL THEN NULL
          ELSE round(julianday('now') - julianday(d.last_enriched_at), 2) END AS age_days,
     d.profile_synced_at
   FROM domains d
   WHERE d.unlisted_at IS NULL
   ORDER BY d.last_enriched_at IS NOT NULL, d.last_enriched_at`,
  `CREATE VIEW v_credits_per_day AS
   SELECT
     substr(c.at, 1, 10) AS day,
     coalesce(r.pipeline, '(none)') AS pipeline,
     c.operation,
     sum(c.credits) AS credits,
     sum(coalesce(c.estimated_credits, 0)) AS estimated_credits,
     count(*) AS entries
   FROM credit_ledger c
   LEFT JOIN pipeline_runs r ON r.id = c.pipeline_run_id
   GROUP BY 1, 2, 3`,
  `CREATE VIEW v_last_pipeline_runs AS
   SELECT r.*
   FROM pipeline_runs r
   WHERE r.id = (SELECT max(r2.id) FROM pipeline_runs r2 WHERE r2.pipeline = r.pipeline)`,
];

/** Creates every table, index, history trigger and analyst view of the first schema. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // better-sqlite3 prepares one statement at a time, hence one execute per statement.
  for (const statement of [...TABLES, ...INDEXES, ...TRIGGERS, ...VIEWS]) {
    await sql.raw(statement).execute(db);
  }
}

/** Drops everything {@link up} created (views, triggers and indexes go with their tables). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  for (const view of [
    'v_last_pipeline_runs',
    'v_credits_per_day',
    'v_stale_domains',
    'v_payment_method_changes',
    'v_licence_changes',
    'v_domain_overview',
  ]) {
    await sql.raw(`DROP VIEW IF EXISTS ${view}`).execute(db);
  }
  for (const table of [
    'change_log',
    'account_snapshots',
    'credit_ledger',
    'sync_state',
    'exports',
    'enrichment_intents',
    'enrichment_runs',
    'pipeline_runs',
    'domain_sections',
    'payment_methods',
    'licenses',
    'domains',
  ]) {
    await sql.raw(`DROP TABLE IF EXISTS ${table}`).execute(db);
  }
}
