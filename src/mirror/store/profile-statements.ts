/*
 * The SQL with which profiles.ts writes a full profile's `domains` and `domain_sections` rows,
 * and the order of a profile's domain row parameters that the statements and profileRows share.
 */

/** The stored hash of the given domains' profiles (NULL: the domain has a listing row only). */
export const SELECT_PROFILE_STATE = `
  SELECT domain_normalized, profile_hash FROM domains
  WHERE domain_normalized IN (SELECT value FROM json_each(?))`;

/**
 * The columns of a profile's `domains` row, in the order of its parameters (profileRows in profiles.ts);
 * the statements below write them in this order, then `change_seq`.
 */
const PROFILE_ROW_COLUMNS = [
  'domain_normalized',
  'domain',
  'status',
  'last_enriched_at',
  'operator_name',
  'operator_legal_entity_name',
  'operator_country',
  'brand_name',
  'brand_slug',
  'freshness_age_seconds',
  'served_from_cache',
  'billable',
  'observed_at',
  'profile_extra',
  'profile_hash',
  'profile_synced_at',
  'first_synced_at',
  'last_synced_at',
] as const;

/** `?, ?, …`: `n` statement parameters. */
const params = (n: number): string => Array.from({ length: n }, () => '?').join(', ');

/**
 * The profile's content in its domain row: what a profile with the same values in another key
 * order leaves as it is (the row's meta and bookkeeping columns are not content).
 */
const CONTENT_COLUMNS = [
  'domain',
  'status',
  'last_enriched_at',
  'operator_name',
  'operator_legal_entity_name',
  'operator_country',
  'brand_name',
  'brand_slug',
  'profile_extra',
] as const;

/** Each content column with its place in a profile's domain row parameters. */
export const CONTENT_PARAMS = CONTENT_COLUMNS.map(
  (column) => [column, PROFILE_ROW_COLUMNS.indexOf(column)] as const,
);

/**
 * The stored content columns of the given domains whose row has a profile in the current layout
 * (a row from before migration 0010 keeps the whole raw profile, and is rewritten whole).
 */
export const SELECT_PROFILE_CONTENT = `
  SELECT domain_normalized, ${CONTENT_COLUMNS.join(', ')}
  FROM domains WHERE domain_normalized IN (SELECT value FROM json_each(?))
    AND profile_synced_at IS NOT NULL AND raw_profile IS NULL`;

/** A profile whose content is stored but whose hash differs: the new hash alone is written. */
export const SET_PROFILE_HASH = `
  UPDATE domains SET profile_hash = ?, change_seq = ? WHERE domain_normalized = ?`;

export const UPSERT_PROFILE = `
  INSERT INTO domains (${PROFILE_ROW_COLUMNS.join(', ')}, change_seq)
  VALUES (${params(PROFILE_ROW_COLUMNS.length + 1)})
  ON CONFLICT (domain_normalized) DO UPDATE SET
    domain = excluded.domain,
    status = excluded.status,
    last_enriched_at = excluded.last_enriched_at,
    operator_name = excluded.operator_name,
    operator_legal_entity_name = excluded.operator_legal_entity_name,
    operator_country = excluded.operator_country,
    brand_name = excluded.brand_name,
    brand_slug = excluded.brand_slug,
    freshness_age_seconds = excluded.freshness_age_seconds,
    served_from_cache = excluded.served_from_cache,
    billable = excluded.billable,
    observed_at = excluded.observed_at,
    raw_profile = NULL,
    profile_extra = excluded.profile_extra,
    profile_hash = excluded.profile_hash,
    profile_synced_at = excluded.profile_synced_at,
    last_synced_at = excluded.last_synced_at,
    change_seq = excluded.change_seq
  WHERE profile_hash IS NOT excluded.profile_hash`;

/**
 * {@link UPSERT_PROFILE} for a profile that brings its listing columns (an export row): one
 * statement writes both, so a new domain's row is written once and not rewritten by an UPDATE.
 */
export const UPSERT_PROFILE_WITH_LISTING = UPSERT_PROFILE.replace(
  'change_seq)',
  'change_seq, company_name, listing_last_enriched_at)',
)
  .replace(
    `VALUES (${params(PROFILE_ROW_COLUMNS.length + 1)})`,
    `VALUES (${params(PROFILE_ROW_COLUMNS.length + 3)})`,
  )
  .replace(
    '    change_seq = excluded.change_seq\n  WHERE profile_hash IS NOT excluded.profile_hash',
    `    change_seq = excluded.change_seq,
    company_name = excluded.company_name,
    listing_last_enriched_at = excluded.listing_last_enriched_at
  WHERE profile_hash IS NOT excluded.profile_hash
     OR company_name IS NOT excluded.company_name
     OR listing_last_enriched_at IS NOT excluded.listing_last_enriched_at`,
  );

/**
 * A new domain's first profile with its held listing row (held-listing.ts): the row as
 * UPSERT_SUMMARY and then UPSERT_PROFILE would leave it, written once. `first_synced_at` is the
 * listing's time, as the listing's insert would have set it.
 */
export const INSERT_PROFILE_WITH_HELD_LISTING = `
  INSERT INTO domains (${PROFILE_ROW_COLUMNS.join(', ')}, change_seq,
                       company_name, listing_last_enriched_at, last_listed_at)
  VALUES (${params(PROFILE_ROW_COLUMNS.length + 4)})`;

/** Where `first_synced_at` is in a profile's domain row parameters (profileRows in profiles.ts). */
export const FIRST_SYNCED_AT_PARAM = PROFILE_ROW_COLUMNS.indexOf('first_synced_at');

/**
 * The listing columns alone, for a profile whose content is unchanged (the row exists). It leaves
 * last_listed_at alone: an export is not the GET /domains listing that sync's unlisting relies on.
 */
export const SET_LISTING_COLUMNS = `
  UPDATE domains SET company_name = ?, listing_last_enriched_at = ?, last_synced_at = ?, change_seq = ?
  WHERE domain_normalized = ? AND (company_name IS NOT ? OR listing_last_enriched_at IS NOT ?)`;

export const UPSERT_SECTION = `
  INSERT INTO domain_sections (domain_normalized, section, data, mirror_first_seen_at, mirror_updated_at, change_seq)
  VALUES (?, ?, ?, ?, ?, ?)
  ON CONFLICT (domain_normalized, section) DO UPDATE SET
    data = excluded.data,
    mirror_updated_at = excluded.mirror_updated_at,
    change_seq = excluded.change_seq
  WHERE data IS NOT excluded.data`;
