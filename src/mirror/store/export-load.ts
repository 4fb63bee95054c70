import type { Mirror } from '../database.js';
import type { DomainProfileInput } from '../inputs.js';
import { upsertProfiles } from './profiles.js';
import type { ListingColumns, UpsertProfilesResult } from './profiles.js';
import {
  booleanColumn,
  integerColumn,
  keyColumn,
  MirrorInputError,
  objectOrEmpty,
  textColumn,
  timestampColumn,
} from './values.js';

/*
 * Loading the rows of an export file into the mirror (one transaction per batch), and checking a
 * row without writing it, so a whole file is validated before the first batch is written. What is
 * recorded about the export itself (its status, file, price and retention) is in `exports.ts`.
 */

/** One row of an export file, mapped to the shapes the stores accept. */
export interface ExportRowInput {
  /** The profile part (operator, brand, sections, unknown columns kept as extra keys). */
  profile: DomainProfileInput;
  /**
   * `company_name` when the file has it (it is listing data, so it goes through the summary
   * upsert); `undefined` when the file has no such column, so the stored one is kept.
   */
  companyName?: string | null | undefined;
}

/** Counts returned by {@link loadExportRows}. */
export interface LoadExportRowsResult {
  rows: number;
  profiles: UpsertProfilesResult;
}

/**
 * Upserts one batch of export rows in ONE transaction: the profiles (see `upsertProfiles` for
 * history and idempotence), then the listing columns (`company_name`, listing
 * `last_enriched_at`) of rows that carry `company_name`. A bad value throws `ERR_MIRROR_INPUT` and the
 * whole batch rolls back. Idempotent: loading the same file twice rewrites nothing.
 */
export function loadExportRows(
  mirror: Mirror,
  rows: readonly ExportRowInput[],
  options: { syncedAt: string; checkUnchanged?: boolean },
): LoadExportRowsResult {
  const profiles = rows.map((row) => row.profile);
  const listing = rows.map((row, i): ListingColumns | undefined => {
    if (row.companyName === undefined) return undefined;
    const key = keyColumn(row.profile.domain_normalized, `rows[${i}].domain_normalized`);
    return {
      companyName: textColumn(row.companyName, `rows[${i}] (${key}).company_name`),
      listingLastEnrichedAt: timestampColumn(
        row.profile.last_enriched_at,
        `rows[${i}] (${key}).last_enriched_at`,
      ),
    };
  });
  // The listing columns go into the profile's own upsert (one write of a new domain's row, not an
  // insert then an UPDATE; load rates: docs/benchmarks.md "export"). An export is not the
  // GET /domains listing that sync's unlisting relies on, so last_listed_at is left alone.
  const profilesResult = upsertProfiles(mirror, profiles, {
    syncedAt: options.syncedAt,
    listing,
    ...(options.checkUnchanged ? { checkUnchanged: true } : {}),
  });
  return { rows: rows.length, profiles: profilesResult };
}

/**
 * Checks that a row would be accepted by {@link loadExportRows}, without writing anything:
 * the same conversions `upsertProfiles` applies. Throws `ERR_MIRROR_INPUT` naming `where` and
 * the field. Used to validate a whole file before its first batch is written, and in a one-pass
 * load to find the row of a batch that the write refused (pipelines/export/load.ts).
 */
export function checkExportRow(row: ExportRowInput, where: string): void {
  const p = row.profile;
  keyColumn(p.domain_normalized, `${where}.domain_normalized`);
  textColumn(row.companyName, `${where}.company_name`);
  textColumn(p.domain, `${where}.domain`);
  textColumn(p.status, `${where}.status`);
  timestampColumn(p.last_enriched_at, `${where}.last_enriched_at`);
  const operator = objectOrEmpty(p.operator, `${where}.operator`);
  textColumn(operator.name, `${where}.operator.name`);
  textColumn(operator.legal_entity_name, `${where}.operator.legal_entity_name`);
  textColumn(operator.country_of_incorporation, `${where}.operator.country_of_incorporation`);
  // One checking call per field: a list of the profile's fields, alike by design.
  const brand = objectOrEmpty(p.brand, `${where}.brand`);
  textColumn(brand.name, `${where}.brand.name`);
  textColumn(brand.slug, `${where}.brand.slug`);
  const meta = objectOrEmpty(p.meta, `${where}.meta`);
  integerColumn(meta.freshness_age_seconds, `${where}.meta.freshness_age_seconds`);
  booleanColumn(meta.served_from_cache, `${where}.meta.served_from_cache`);
  booleanColumn(meta.billable, `${where}.meta.billable`);
  timestampColumn(meta.observed_at, `${where}.meta.observed_at`);
  if (p.licenses !== undefined && p.licenses !== null) {
    if (!Array.isArray(p.licenses)) throw new MirrorInputError(`${where}.licenses`, 'expected an array');
    p.licenses.forEach((l: unknown, i) => {
      const at = `${where}.licenses[${i}]`;
      const licence = objectOrEmpty(l, at);
      keyColumn(licence.jurisdiction, `${at}.jurisdiction`);
      keyColumn(licence.license_number, `${at}.license_number`);
      textColumn(licence.status, `${at}.status`);
      textColumn(licence.source_url, `${at}.source_url`);
      timestampColumn(licence.first_seen_at, `${at}.first_seen_at`);
      timestampColumn(licence.last_confirmed_at, `${at}.last_confirmed_at`);
    });
  }
  if (p.payment_methods !== undefined && p.payment_methods !== null) {
    if (!Array.isArray(p.payment_methods))
      throw new MirrorInputError(`${where}.payment_methods`, 'expected an array');
    p.payment_methods.forEach((m: unknown, i) => {
      const at = `${where}.payment_methods[${i}]`;
      const method = objectOrEmpty(m, at);
      keyColumn(method.normalized_name, `${at}.normalized_name`);
      textColumn(method.category, `${at}.category`);
      textColumn(method.confidence, `${at}.confidence`);
      timestampColumn(method.first_seen_at, `${at}.first_seen_at`);
      timestampColumn(method.last_confirmed_at, `${at}.last_confirmed_at`);
    });
  }
}
