import type { Generated } from 'kysely';

/*
 * Table interfaces of the mirror, column names exactly as in the database (snake_case, the
 * contract names of docs/contract.md "Mirror tables"). Timestamps are `YYYY-MM-DDTHH:MM:SS.sssZ`
 * text; booleans are 0/1; JSON columns are text. docs/schema.md documents every column.
 */

/** A timestamp stored as `YYYY-MM-DDTHH:MM:SS.sssZ` text. */
export type IsoTimestamp = string;
/** A JSON document stored as text. */
export type JsonText = string;
/** A boolean stored as INTEGER 0 or 1. */
export type BooleanInt = 0 | 1;

/** `domains`: one row per domain ever listed or profiled; never deleted. */
export interface DomainsTable {
  domain_normalized: string;
  domain: string | null;
  company_name: string | null;
  status: string | null;
  last_enriched_at: IsoTimestamp | null;
  listing_last_enriched_at: IsoTimestamp | null;
  operator_name: string | null;
  operator_legal_entity_name: string | null;
  operator_country: string | null;
  brand_name: string | null;
  brand_slug: string | null;
  freshness_age_seconds: number | null;
  served_from_cache: BooleanInt | null;
  billable: BooleanInt | null;
  observed_at: IsoTimestamp | null;
  /** The whole profile, as rows written before migration 0010 kept it; NULL once rewritten. */
  raw_profile: JsonText | null;
  /** What the stored profile had beyond the mirror's columns and rows, as JSON (migration 0010). */
  profile_extra: JsonText | null;
  profile_hash: string | null;
  profile_synced_at: IsoTimestamp | null;
  first_synced_at: IsoTimestamp;
  last_synced_at: IsoTimestamp;
  last_listed_at: IsoTimestamp | null;
  unlisted_at: IsoTimestamp | null;
  /** The change sequence value of the transaction that last changed the row (migration 0005). */
  change_seq: Generated<number>;
}

/** `licenses`: one row per (domain, jurisdiction, licence number) ever seen. */
export interface LicensesTable {
  domain_normalized: string;
  jurisdiction: string;
  license_number: string;
  status: string | null;
  source_url: string | null;
  first_seen_at: IsoTimestamp | null;
  last_confirmed_at: IsoTimestamp | null;
  removed_at: IsoTimestamp | null;
  mirror_first_seen_at: IsoTimestamp;
  mirror_updated_at: IsoTimestamp;
  /** The change sequence value of the transaction that last changed the row (migration 0005). */
  change_seq: Generated<number>;
}

/** `payment_methods`: one row per (domain, normalised payment method name) ever seen. */
export interface PaymentMethodsTable {
  domain_normalized: string;
  normalized_name: string;
  category: string | null;
  confidence: string | null;
  first_seen_at: IsoTimestamp | null;
  last_confirmed_at: IsoTimestamp | null;
  removed_at: IsoTimestamp | null;
  mirror_first_seen_at: IsoTimestamp;
  mirror_updated_at: IsoTimestamp;
  /** The change sequence value of the transaction that last changed the row (migration 0005). */
  change_seq: Generated<number>;
}

/** `domain_sections`: the JSON of a profile section whose fields the spec does not show. */
export interface DomainSectionsTable {
  domain_normalized: string;
  section: string;
  data: JsonText | null;
  mirror_first_seen_at: IsoTimestamp;
  mirror_updated_at: IsoTimestamp;
  /** The change sequence value of the transaction that last changed the row (migration 0005). */
  change_seq: Generated<number>;
}

/** `enrichment_runs`: one row per service enrichment run id. */
export interface EnrichmentRunsTable {
  id: number;
  domain: string | null;
  status: string;
  strategy: string | null;
  started_at: IsoTimestamp | null;
  completed_at: IsoTimestamp | null;
  error: string | null;
  error_type: string | null;
  credits: number | null;
  result_domain_normalized: string | null;
  result_status: string | null;
  result_last_enriched_at: IsoTimestamp | null;
  requested_at: IsoTimestamp | null;
  last_polled_at: IsoTimestamp | null;
  pipeline_run_id: number | null;
  intent_id: number | null;
  raw: JsonText | null;
  mirror_updated_at: IsoTimestamp;
  /** The change sequence value of the transaction that last changed the row (migration 0005). */
  change_seq: Generated<number>;
}

/** `enrichment_intents`: a paid POST /enrichments recorded before it is sent. */
export interface EnrichmentIntentsTable {
  id: Generated<number>;
  domain: string;
  strategy: string | null;
  status: string;
  created_at: IsoTimestamp;
  resolved_at: IsoTimestamp | null;
  pipeline_run_id: number | null;
  run_id: number | null;
  estimated_credits: number | null;
  note: string | null;
}

/** `exports`: one row per service export id, plus our download and load bookkeeping. */
export interface ExportsTable {
  id: number;
  status: string;
  format: string | null;
  filters: JsonText | null;
  fields: JsonText | null;
  total_rows: number | null;
  credits_used: number | null;
  expires_at: IsoTimestamp | null;
  download_url: string | null;
  file_path: string | null;
  loaded_at: IsoTimestamp | null;
  rows_loaded: number | null;
  requested_at: IsoTimestamp | null;
  params_hash: string | null;
  checksum: string | null;
  byte_count: number | null;
  download_status: string | null;
  downloaded_at: IsoTimestamp | null;
  error: string | null;
  pipeline_run_id: number | null;
  mirror_updated_at: IsoTimestamp;
  /** The change sequence value of the transaction that last changed the row (migration 0005). */
  change_seq: Generated<number>;
}

/** `pipeline_runs`: one row per pipeline invocation. */
export interface PipelineRunsTable {
  id: Generated<number>;
  pipeline: string;
  status: string;
  started_at: IsoTimestamp;
  finished_at: IsoTimestamp | null;
  credits_spent: Generated<number>;
  stats: JsonText | null;
  error: string | null;
  pid: number | null;
  /** The change sequence value of the transaction that last changed the row (migration 0005). */
  change_seq: Generated<number>;
}

/** `sync_state`: watermark and cursor per pipeline and filter set. */
export interface SyncStateTable {
  pipeline: string;
  scope_key: string;
  filters: JsonText | null;
  watermark: string | null;
  cursor: JsonText | null;
  pipeline_run_id: number | null;
  updated_at: IsoTimestamp;
}

/** `credit_ledger`: every credit-costing (or cached, 0-credit) call. */
export interface CreditLedgerTable {
  id: Generated<number>;
  at: IsoTimestamp;
  pipeline_run_id: number | null;
  operation: string;
  domain: string | null;
  export_id: number | null;
  run_id: number | null;
  credits: number;
  estimated_credits: number | null;
  entry_key: string | null;
  note: string | null;
  /** The change sequence value of the transaction that last changed the row (migration 0005). */
  change_seq: Generated<number>;
}

/** `account_snapshots`: GET /account answers over time. */
export interface AccountSnapshotsTable {
  id: Generated<number>;
  at: IsoTimestamp;
  plan: string | null;
  credits_granted: number | null;
  credits_used: number | null;
  credits_reserved: number | null;
  available_credits: number | null;
  pipeline_run_id: number | null;
  raw: JsonText | null;
}

/** `change_log`: one row per real change of a licence or payment method, written by the store. */
export interface ChangeLogTable {
  id: Generated<number>;
  at: IsoTimestamp;
  table_name: string;
  domain_normalized: string;
  item_key: string;
  change: string;
  old_value: string | null;
  new_value: string | null;
  /** The change sequence value of the transaction that last changed the row (migration 0005). */
  change_seq: Generated<number>;
}

/** `mirror_change_seq`: one row, the change counter and this mirror file's random id (migration 0005). */
export interface MirrorChangeSeqTable {
  id: number;
  value: number;
  mirror_id: string;
}

/** `v_domain_overview`: one row per domain with active jurisdictions and payment categories. */
export interface DomainOverviewView {
  domain_normalized: string;
  domain: string;
  company_name: string | null;
  status: string | null;
  last_enriched_at: IsoTimestamp | null;
  operator_name: string | null;
  operator_legal_entity_name: string | null;
  operator_country: string | null;
  brand_name: string | null;
  brand_slug: string | null;
  active_jurisdictions: string | null;
  license_count: number;
  payment_categories: string | null;
  payment_method_count: number;
  profile_synced_at: IsoTimestamp | null;
  last_listed_at: IsoTimestamp | null;
  unlisted_at: IsoTimestamp | null;
}

/** `v_licence_changes`: licence history events from `change_log`. */
export interface LicenceChangesView {
  changed_at: IsoTimestamp;
  domain_normalized: string;
  jurisdiction: string;
  license_number: string;
  change: string;
  old_status: string | null;
  new_status: string | null;
}

/** `v_payment_method_changes`: payment method history events from `change_log`. */
export interface PaymentMethodChangesView {
  changed_at: IsoTimestamp;
  domain_normalized: string;
  normalized_name: string;
  change: string;
  old_value: string | null;
  new_value: string | null;
}

/** `v_stale_domains`: listed domains with their enrichment age in days, oldest first. */
export interface StaleDomainsView {
  domain_normalized: string;
  company_name: string | null;
  last_enriched_at: IsoTimestamp | null;
  age_days: number | null;
  profile_synced_at: IsoTimestamp | null;
}

/** `v_credits_per_day`: ledger totals per UTC day, pipeline and operation. */
export interface CreditsPerDayView {
  day: string;
  pipeline: string;
  operation: string;
  credits: number;
  estimated_credits: number;
  entries: number;
}

/** The whole mirror database, for `Kysely<MirrorSchema>`. */
export interface MirrorSchema {
  domains: DomainsTable;
  licenses: LicensesTable;
  payment_methods: PaymentMethodsTable;
  domain_sections: DomainSectionsTable;
  enrichment_runs: EnrichmentRunsTable;
  enrichment_intents: EnrichmentIntentsTable;
  exports: ExportsTable;
  pipeline_runs: PipelineRunsTable;
  sync_state: SyncStateTable;
  credit_ledger: CreditLedgerTable;
  account_snapshots: AccountSnapshotsTable;
  change_log: ChangeLogTable;
  mirror_change_seq: MirrorChangeSeqTable;
  v_domain_overview: DomainOverviewView;
  v_licence_changes: LicenceChangesView;
  v_payment_method_changes: PaymentMethodChangesView;
  v_stale_domains: StaleDomainsView;
  v_credits_per_day: CreditsPerDayView;
  v_last_pipeline_runs: PipelineRunsTable;
}
