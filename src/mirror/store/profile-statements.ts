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
 * The columns of a profile's domain row that are not the profile's content: its key, the meta of
 * the fetch and our bookkeeping. A profile with the same values in another key order leaves them
 * as they are; every other column of {@link PROFILE_ROW_COLUMNS} is content, compared before the
 * row is rewritten (a new column is content unless it is listed here).
 */
const NOT_CONTENT: ReadonlySet<string> = new Set([
  'domain_normalized',
  'freshness_age_seconds',
  'served_from_cache',
  'billable',
  'observed_at',
  'profile_hash',
  'profile_synced_at',
  'first_synced_at',
  'last_synced_at',
]);

/** The profile's content in its domain row (see {@link NOT_CONTENT}). */
const CONTENT_COLUMNS = PROFILE_ROW_COLUMNS.filter((column) => !NOT_CONTENT.has(column));

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

/** What an upsert of a profile rewrites in an existing row: every column but the key and first_synced_at. */
const UPDATED_COLUMNS = PROFILE_ROW_COLUMNS.filter(
  (column) => column !== 'domain_normalized' && column !== 'first_synced_at',
);

/**
 * The upsert of a profile's domain row, with `extra` columns after `change_seq` (written, and
 * compared, too). The row is rewritten only when its hash or an extra column differs; a row from
 * before migration 0010 loses its whole raw profile.
 */
function upsertProfileSql(extra: readonly string[]): string {
  const columns = [...PROFILE_ROW_COLUMNS, 'change_seq', ...extra];
  const set = [
    'raw_profile = NULL',
    ...[...UPDATED_COLUMNS, 'change_seq', ...extra].map((c) => `${c} = excluded.${c}`),
  ];
  const differs = ['profile_hash', ...extra].map((c) => `${c} IS NOT excluded.${c}`);
  return `
  INSERT INTO domains (${columns.join(', ')})
  VALUES (${params(columns.length)})
  ON CONFLICT (domain_normalized) DO UPDATE SET
    ${set.join(',\n    ')}
  WHERE ${differs.join('\n     OR ')}`;
}

export const UPSERT_PROFILE = upsertProfileSql([]);

/**
 * {@link UPSERT_PROFILE} for a profile that brings its listing columns (an export row): one
 * statement writes both, so a new domain's row is written once and not rewritten by an UPDATE.
 */
export const UPSERT_PROFILE_WITH_LISTING = upsertProfileSql(['company_name', 'listing_last_enriched_at']);

/** The columns of {@link INSERT_PROFILE_WITH_HELD_LISTING}, in the order of its parameters. */
const HELD_LISTING_COLUMNS = [
  ...PROFILE_ROW_COLUMNS,
  'change_seq',
  'company_name',
  'listing_last_enriched_at',
  'last_listed_at',
];
/**
 * A new domain's first profile with its held listing row (held-listing.ts): the row as
 * UPSERT_SUMMARY and then UPSERT_PROFILE would leave it, written once. `first_synced_at` is the
 * listing's time, as the listing's insert would have set it.
 */
export const INSERT_PROFILE_WITH_HELD_LISTING = `
  INSERT INTO domains (${HELD_LISTING_COLUMNS.join(', ')})
  VALUES (${params(HELD_LISTING_COLUMNS.length)})`;

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
