/*
 * What the store accepts, written from docs/service-api.md ("Resources and their fields") with the wire
 * names unchanged. The mirror never imports src/api: these types match the wire shapes
 * structurally, so the client's own types (with more fields) are accepted as they are. Fields the
 * spec marks as always present are still optional or nullable here where a missing value can be
 * stored as NULL without ambiguity.
 */

/** A number from the wire, or a bigint for values above 2^53. */
export type IntegerInput = number | bigint;

/** An item of `GET /domains` (docs/service-api.md "Domain summary"). */
export interface DomainSummaryInput {
  domain_normalized: string;
  company_name?: string | null;
  last_enriched_at?: string | null;
}

/** A licence of a profile (docs/service-api.md "Licence"). */
export interface LicenceInput {
  jurisdiction: string;
  license_number: string;
  status?: string | null;
  source_url?: string | null;
  first_seen_at?: string | null;
  last_confirmed_at?: string | null;
}

/** A payment method of a profile (docs/service-api.md "Payment method"). */
export interface PaymentMethodInput {
  normalized_name: string;
  category?: string | null;
  confidence?: string | null;
  first_seen_at?: string | null;
  last_confirmed_at?: string | null;
}

/** The `data` object of `GET /domains/:domain` (docs/service-api.md "Domain profile"). */
export interface DomainProfileInput {
  domain?: string | null;
  domain_normalized: string;
  status?: string | null;
  last_enriched_at?: string | null;
  operator?: {
    name?: string | null;
    legal_entity_name?: string | null;
    country_of_incorporation?: string | null;
  } | null;
  brand?: { name?: string | null; slug?: string | null } | null;
  /** Absent = section not requested (existing licences are left alone); `[]` = none. */
  licenses?: readonly LicenceInput[] | null;
  /** Absent = section not requested (existing payment methods are left alone); `[]` = none. */
  payment_methods?: readonly PaymentMethodInput[] | null;
  game_providers?: unknown;
  affiliate_programs?: unknown;
  geo?: unknown;
  related_domains?: unknown;
  meta?: {
    freshness_age_seconds?: IntegerInput | null;
    served_from_cache?: boolean | null;
    billable?: boolean | null;
    observed_at?: string | null;
  } | null;
}

/**
 * Profiles as the JSON texts they arrived in, for the mirror writer thread to parse. A writer
 * opened with a text check (ProfileWriterOptions.textCheck) hands each text to it, which parses
 * and checks it and gives the profile (the sync's texts are `GET /domains/:domain` bodies, not
 * parsed before); a writer without one parses each text itself and takes its `member`, or the
 * whole text when no member is named, as a {@link DomainProfileInput}. Flat strings cross to the
 * thread as a copy of their bytes, and the thread parses a few at a time as it writes them;
 * parsed objects would be structured-cloned instead and, on the fetching thread, kept alive until
 * sent.
 */
export interface ProfileTextsInput {
  texts: readonly string[];
  /** The member of each text's JSON object that holds the profile (without a text check). */
  member?: string | undefined;
  /**
   * The domain each text is expected to hold (`domain_normalized`): the writes go in key order
   * (a batch walks each B-tree once), and a refused text is reported by its key (the text check
   * also names it). @default the order of `texts`, refused texts reported as `texts[i]`
   */
  keys?: readonly string[] | undefined;
}

/**
 * Checks a profile text before the writer writes it (ProfileWriterOptions.textCheck): gives the
 * profile, or why the text was refused and whether fetching it again may cure that. `key` is the
 * text's key, when the batch has keys.
 */
export type ProfileTextCheck = (
  text: string,
  key: string | undefined,
) => { profile: object } | { failure: { code: string; message: string; retryable: boolean } };

/** An enrichment run (docs/service-api.md "Enrichment run"), as polled from `GET /enrichment_runs/:id`. */
export interface EnrichmentRunInput {
  id: IntegerInput;
  status: string;
  domain?: string | null;
  strategy?: string | null;
  started_at?: string | null;
  completed_at?: string | null;
  enrichment?: {
    domain_normalized?: string | null;
    status?: string | null;
    last_enriched_at?: string | null;
  } | null;
  error_details?: { error?: string | null; error_type?: string | null } | null;
}

/** An export (docs/service-api.md "Export"), as polled from `GET /exports/:id`. */
export interface ExportInput {
  id: IntegerInput;
  status: string;
  format?: string | null;
  download_url?: string | null;
  total_rows?: IntegerInput | null;
  credits_used?: IntegerInput | null;
  expires_at?: string | null;
}

/** The account (docs/service-api.md "Account"). */
export interface AccountInput {
  plan?: string | null;
  credits_granted?: IntegerInput | null;
  credits_used?: IntegerInput | null;
  credits_reserved?: IntegerInput | null;
  available_credits?: IntegerInput | null;
}
