/**
 * The mirror tables the product's contract names, as a tool that kept only those would create
 * them: each with the columns the contract requires of it and its key, nothing of ours (no raw
 * profile, no listing or bookkeeping columns, no other index; docs/schema.md has what the mirror
 * adds). The baselines that stand for such a tool write into these: the sync's contract floor
 * (sync-writer-floor.ts `bare-sqlite-contract`) and the export load's ceiling (export.ts).
 */
export const CONTRACT_TABLE_SQL = {
  domains: `CREATE TABLE domains (domain_normalized TEXT PRIMARY KEY NOT NULL, domain TEXT,
    company_name TEXT, status TEXT, last_enriched_at TEXT, operator_name TEXT,
    operator_legal_entity_name TEXT, operator_country TEXT, brand_name TEXT, brand_slug TEXT,
    first_synced_at TEXT NOT NULL, last_synced_at TEXT NOT NULL) STRICT`,
  licenses: `CREATE TABLE licenses (domain_normalized TEXT NOT NULL, jurisdiction TEXT NOT NULL,
    license_number TEXT NOT NULL, status TEXT, source_url TEXT, first_seen_at TEXT,
    last_confirmed_at TEXT, removed_at TEXT,
    PRIMARY KEY (domain_normalized, jurisdiction, license_number)) STRICT`,
  payment_methods: `CREATE TABLE payment_methods (domain_normalized TEXT NOT NULL,
    normalized_name TEXT NOT NULL, category TEXT, confidence TEXT, first_seen_at TEXT,
    last_confirmed_at TEXT, removed_at TEXT, PRIMARY KEY (domain_normalized, normalized_name)) STRICT`,
  domain_sections: `CREATE TABLE domain_sections (domain_normalized TEXT NOT NULL, section TEXT NOT NULL,
    data TEXT, PRIMARY KEY (domain_normalized, section)) STRICT`,
} as const;

/** A table of {@link CONTRACT_TABLE_SQL}. */
export type ContractTable = keyof typeof CONTRACT_TABLE_SQL;
