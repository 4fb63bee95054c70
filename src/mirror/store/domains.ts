import { cachedStatement, inTransaction } from '../database.js';
import type { Mirror } from '../database.js';
import type { DomainProfileInput, DomainSummaryInput, LicenceInput, PaymentMethodInput } from '../inputs.js';
import { createHash } from 'node:crypto';
import {
  booleanColumn,
  integerColumn,
  jsonColumn,
  keyColumn,
  requiredTimestamp,
  textColumn,
  timestampColumn,
} from './values.js';

/*
 * Domains, licences, payment methods and sections: the sync hot path. Every statement here is hand
 * SQL prepared once per Mirror and run inside one better-sqlite3 transaction per batch, because a
 * fresh kysely query per row is many times slower (README.md "Dependencies, and why"). Every
 * upsert has a `WHERE <something changed>` guard so that a re-run with the same data rewrites no
 * row. The change_log rows are written here too, in the same transaction as the change they
 * record (migration 0003 replaced the triggers that wrote them before).
 */

/** The profile sections stored as JSON in `domain_sections` (fields not described, docs/service-api.md). */
export const PROFILE_SECTIONS = ['game_providers', 'affiliate_programs', 'geo', 'related_domains'] as const;

/** Options of {@link upsertDomainSummaries}. */
export interface UpsertSummariesOptions {
  /** When this listing was read (any ISO 8601 spelling); becomes `last_listed_at`. */
  listedAt: string;
}

/** Counts returned by {@link upsertDomainSummaries}. */
export interface UpsertSummariesResult {
  /** Domains seen for the first time. */
  inserted: number;
  /** Domains whose company name or listing `last_enriched_at` changed, or that were unlisted. */
  updated: number;
  /** Domains whose listing data did not change (only `last_listed_at` moved). */
  unchanged: number;
}

const SELECT_SUMMARY_STATE = `
  SELECT domain_normalized, company_name, listing_last_enriched_at, unlisted_at,
         last_enriched_at, profile_synced_at
  FROM domains WHERE domain_normalized IN (SELECT value FROM json_each(?))`;

interface SummaryStateRow {
  domain_normalized: string;
  company_name: string | null;
  listing_last_enriched_at: string | null;
  unlisted_at: string | null;
  last_enriched_at: string | null;
  profile_synced_at: string | null;
}

const UPSERT_SUMMARY = `
  INSERT INTO domains (domain_normalized, company_name, listing_last_enriched_at, last_listed_at,
                       first_synced_at, last_synced_at)
  VALUES (?, ?, ?, ?, ?, ?)
  ON CONFLICT (domain_normalized) DO UPDATE SET
    company_name = excluded.company_name,
    listing_last_enriched_at = excluded.listing_last_enriched_at,
    last_synced_at = CASE
      WHEN company_name IS NOT excluded.company_name
        OR listing_last_enriched_at IS NOT excluded.listing_last_enriched_at
        OR unlisted_at IS NOT NULL
      THEN excluded.last_synced_at ELSE last_synced_at END,
    last_listed_at = excluded.last_listed_at,
    unlisted_at = NULL
  WHERE company_name IS NOT excluded.company_name
     OR listing_last_enriched_at IS NOT excluded.listing_last_enriched_at
     OR unlisted_at IS NOT NULL
     OR last_listed_at IS NOT excluded.last_listed_at`;

interface SummaryRow {
  domain_normalized: string;
  company_name: string | null;
  listing_last_enriched_at: string | null;
}

function summaryRows(summaries: readonly DomainSummaryInput[]): SummaryRow[] {
  // Last one wins when a listing repeats a domain (offset drift can do that).
  const byKey = new Map<string, SummaryRow>();
  summaries.forEach((s, i) => {
    const where = `summaries[${i}]`;
    const key = keyColumn(s.domain_normalized, `${where}.domain_normalized`);
    byKey.set(key, {
      domain_normalized: key,
      company_name: textColumn(s.company_name, `${where} (${key}).company_name`),
      listing_last_enriched_at: timestampColumn(s.last_enriched_at, `${where} (${key}).last_enriched_at`),
    });
  });
  return [...byKey.values()];
}

/**
 * Upserts items of `GET /domains` into `domains`: `company_name`, `listing_last_enriched_at`,
 * `last_listed_at` (and `first_synced_at` on insert); clears `unlisted_at`. Never touches the
 * profile columns. Idempotent; one transaction for the whole array (pass a page or several).
 * Validates every item first: a bad timestamp throws `ERR_MIRROR_INPUT` naming the field and
 * nothing is written.
 */
export function upsertDomainSummaries(
  mirror: Mirror,
  summaries: readonly DomainSummaryInput[],
  options: UpsertSummariesOptions,
): UpsertSummariesResult {
  const listedAt = requiredTimestamp(options.listedAt, 'listedAt');
  const rows = summaryRows(summaries);
  const result: UpsertSummariesResult = { inserted: 0, updated: 0, unchanged: 0 };
  if (rows.length === 0) return result;
  const read = cachedStatement(mirror, SELECT_SUMMARY_STATE);
  const upsert = cachedStatement(mirror, UPSERT_SUMMARY);
  inTransaction(mirror, () => {
    const existing = new Map<string, SummaryStateRow>();
    for (const row of read.all(JSON.stringify(rows.map((r) => r.domain_normalized))) as SummaryStateRow[]) {
      existing.set(row.domain_normalized, row);
    }
    for (const row of rows) {
      const old = existing.get(row.domain_normalized);
      if (old === undefined) result.inserted++;
      else if (
        old.company_name !== row.company_name ||
        old.listing_last_enriched_at !== row.listing_last_enriched_at ||
        old.unlisted_at !== null
      )
        result.updated++;
      else result.unchanged++;
      upsert.run(
        row.domain_normalized,
        row.company_name,
        row.listing_last_enriched_at,
        listedAt,
        listedAt,
        listedAt,
      );
    }
  });
  return result;
}

/** Result of {@link classifySummaries}: the same input objects, split three ways. */
export interface SummaryClassification<T extends DomainSummaryInput = DomainSummaryInput> {
  /** Not in the mirror at all. */
  new: T[];
  /** In the mirror, but no profile fetched yet or the listing's `last_enriched_at` differs from the profile's. */
  changed: T[];
  /** Profile in the mirror with the same `last_enriched_at`. */
  unchanged: T[];
}

/**
 * Decides which listed domains need their profile fetched: read-only, one query per call.
 * Compares the listing's `last_enriched_at` with the stored *profile's* `last_enriched_at`
 * (normalised both sides), so a summary upsert done before does not hide a change.
 * Throws `ERR_MIRROR_INPUT` for a bad timestamp.
 */
export function classifySummaries<T extends DomainSummaryInput>(
  mirror: Mirror,
  summaries: readonly T[],
): SummaryClassification<T> {
  const result: SummaryClassification<T> = { new: [], changed: [], unchanged: [] };
  if (summaries.length === 0) return result;
  const wanted = summaries.map((s, i) => ({
    input: s,
    key: keyColumn(s.domain_normalized, `summaries[${i}].domain_normalized`),
    lastEnrichedAt: timestampColumn(
      s.last_enriched_at,
      `summaries[${i}] (${s.domain_normalized}).last_enriched_at`,
    ),
  }));
  const existing = new Map<string, SummaryStateRow>();
  const read = cachedStatement(mirror, SELECT_SUMMARY_STATE);
  for (const row of read.all(JSON.stringify(wanted.map((w) => w.key))) as SummaryStateRow[]) {
    existing.set(row.domain_normalized, row);
  }
  for (const w of wanted) {
    const old = existing.get(w.key);
    if (old === undefined) result.new.push(w.input);
    else if (old.profile_synced_at === null || old.last_enriched_at !== w.lastEnrichedAt)
      result.changed.push(w.input);
    else result.unchanged.push(w.input);
  }
  return result;
}

/** Options of {@link upsertProfiles}. */
export interface UpsertProfilesOptions {
  /** When the profiles were fetched (any ISO 8601 spelling); our bookkeeping time. */
  syncedAt: string;
}

/** Counts returned by {@link upsertProfiles}. */
export interface UpsertProfilesResult {
  /** Profiles given (after de-duplication by `domain_normalized`). */
  profiles: number;
  /** Domain rows: new, rewritten because the profile changed, untouched. */
  domains: { inserted: number; updated: number; unchanged: number };
  licencesAdded: number;
  licencesChanged: number;
  licencesRemoved: number;
  licencesRestored: number;
  paymentMethodsAdded: number;
  paymentMethodsChanged: number;
  paymentMethodsRemoved: number;
  paymentMethodsRestored: number;
  /** Section rows inserted or rewritten. */
  sectionsWritten: number;
}

const SELECT_PROFILE_STATE = `
  SELECT domain_normalized, profile_hash FROM domains
  WHERE domain_normalized IN (SELECT value FROM json_each(?))`;

const UPSERT_PROFILE = `
  INSERT INTO domains (domain_normalized, domain, status, last_enriched_at, operator_name,
                       operator_legal_entity_name, operator_country, brand_name, brand_slug,
                       freshness_age_seconds, served_from_cache, billable, observed_at, raw_profile,
                       profile_hash, profile_synced_at, first_synced_at, last_synced_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
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
    raw_profile = excluded.raw_profile,
    profile_hash = excluded.profile_hash,
    profile_synced_at = excluded.profile_synced_at,
    last_synced_at = excluded.last_synced_at
  WHERE profile_hash IS NOT excluded.profile_hash`;

const SELECT_LICENCES = `
  SELECT domain_normalized, jurisdiction, license_number, status, source_url, first_seen_at,
         last_confirmed_at, removed_at
  FROM licenses WHERE domain_normalized IN (SELECT value FROM json_each(?))`;

const UPSERT_LICENCE = `
  INSERT INTO licenses (domain_normalized, jurisdiction, license_number, status, source_url,
                        first_seen_at, last_confirmed_at, removed_at, mirror_first_seen_at, mirror_updated_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)
  ON CONFLICT (domain_normalized, jurisdiction, license_number) DO UPDATE SET
    status = excluded.status,
    source_url = excluded.source_url,
    first_seen_at = excluded.first_seen_at,
    last_confirmed_at = excluded.last_confirmed_at,
    removed_at = NULL,
    mirror_updated_at = excluded.mirror_updated_at
  WHERE status IS NOT excluded.status
     OR source_url IS NOT excluded.source_url
     OR first_seen_at IS NOT excluded.first_seen_at
     OR last_confirmed_at IS NOT excluded.last_confirmed_at
     OR removed_at IS NOT NULL`;

const REMOVE_LICENCE = `
  UPDATE licenses SET removed_at = ?, mirror_updated_at = ?
  WHERE domain_normalized = ? AND jurisdiction = ? AND license_number = ? AND removed_at IS NULL`;

const SELECT_PAYMENT_METHODS = `
  SELECT domain_normalized, normalized_name, category, confidence, first_seen_at, last_confirmed_at, removed_at
  FROM payment_methods WHERE domain_normalized IN (SELECT value FROM json_each(?))`;

const UPSERT_PAYMENT_METHOD = `
  INSERT INTO payment_methods (domain_normalized, normalized_name, category, confidence, first_seen_at,
                               last_confirmed_at, removed_at, mirror_first_seen_at, mirror_updated_at)
  VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?)
  ON CONFLICT (domain_normalized, normalized_name) DO UPDATE SET
    category = excluded.category,
    confidence = excluded.confidence,
    first_seen_at = excluded.first_seen_at,
    last_confirmed_at = excluded.last_confirmed_at,
    removed_at = NULL,
    mirror_updated_at = excluded.mirror_updated_at
  WHERE category IS NOT excluded.category
     OR confidence IS NOT excluded.confidence
     OR first_seen_at IS NOT excluded.first_seen_at
     OR last_confirmed_at IS NOT excluded.last_confirmed_at
     OR removed_at IS NOT NULL`;

const REMOVE_PAYMENT_METHOD = `
  UPDATE payment_methods SET removed_at = ?, mirror_updated_at = ?
  WHERE domain_normalized = ? AND normalized_name = ? AND removed_at IS NULL`;

const INSERT_CHANGE = `
  INSERT INTO change_log (at, table_name, domain_normalized, item_key, change, old_value, new_value)
  VALUES (?, ?, ?, ?, ?, ?, ?)`;

/** The value change_log keeps for a payment method (as the 0001 triggers wrote it). */
const paymentValue = (m: { category: string | null; confidence: string | null }): string =>
  `${m.category ?? ''}/${m.confidence ?? ''}`;

const UPSERT_SECTION = `
  INSERT INTO domain_sections (domain_normalized, section, data, mirror_first_seen_at, mirror_updated_at)
  VALUES (?, ?, ?, ?, ?)
  ON CONFLICT (domain_normalized, section) DO UPDATE SET
    data = excluded.data,
    mirror_updated_at = excluded.mirror_updated_at
  WHERE data IS NOT excluded.data`;

interface LicenceRow {
  jurisdiction: string;
  license_number: string;
  status: string | null;
  source_url: string | null;
  first_seen_at: string | null;
  last_confirmed_at: string | null;
}

interface PaymentMethodRow {
  normalized_name: string;
  category: string | null;
  confidence: string | null;
  first_seen_at: string | null;
  last_confirmed_at: string | null;
}

interface ProfileRows {
  key: string;
  domain: unknown[];
  profileHash: string;
  /** null = section absent from the profile (not requested): leave stored rows alone. */
  licences: Map<string, LicenceRow> | null;
  paymentMethods: Map<string, PaymentMethodRow> | null;
  sections: Array<{ section: string; data: string | null }>;
}

// Unit separator: cannot occur in a jurisdiction code, so "a"+"bc" and "ab"+"c" stay distinct.
const licenceKey = (jurisdiction: string, licenseNumber: string): string =>
  `${jurisdiction}\u001f${licenseNumber}`;
/** A licence's `change_log.item_key` (as the 0001 triggers wrote it). */
const licenceItemKey = (l: { jurisdiction: string; license_number: string }): string =>
  `${l.jurisdiction}:${l.license_number}`;

function licenceRow(l: LicenceInput, where: string): LicenceRow {
  return {
    jurisdiction: keyColumn(l.jurisdiction, `${where}.jurisdiction`),
    license_number: keyColumn(l.license_number, `${where}.license_number`),
    status: textColumn(l.status, `${where}.status`),
    source_url: textColumn(l.source_url, `${where}.source_url`),
    first_seen_at: timestampColumn(l.first_seen_at, `${where}.first_seen_at`),
    last_confirmed_at: timestampColumn(l.last_confirmed_at, `${where}.last_confirmed_at`),
  };
}

function paymentMethodRow(p: PaymentMethodInput, where: string): PaymentMethodRow {
  return {
    normalized_name: keyColumn(p.normalized_name, `${where}.normalized_name`),
    category: textColumn(p.category, `${where}.category`),
    confidence: textColumn(p.confidence, `${where}.confidence`),
    first_seen_at: timestampColumn(p.first_seen_at, `${where}.first_seen_at`),
    last_confirmed_at: timestampColumn(p.last_confirmed_at, `${where}.last_confirmed_at`),
  };
}

/**
 * Change-detection hash of a profile, and its JSON for `raw_profile`. The hash leaves `meta` out: freshness_age_seconds and observed_at
 * move on every fetch, and a re-fetch of unchanged data must not rewrite the row; the meta columns
 * therefore describe the fetch that last changed the row (keeping freshness_age_seconds
 * consistent with observed_at). Plain, not key-sorted, JSON: the same service sends the same key
 * order, a different order costs one needless rewrite, and sorting measured several times slower.
 */
function profileJsonOf(p: DomainProfileInput): { hash: string; json: string } {
  // One serialisation serves both: the hash covers the profile without `meta`, and the stored
  // JSON is that text with `meta` appended (where the service sends it, last).
  const { meta, ...rest } = p;
  const restJson = jsonColumn(rest) ?? '{}';
  const hash = createHash('sha1').update(restJson).digest('base64');
  if (meta === undefined) return { hash, json: restJson };
  const metaJson = jsonColumn(meta) ?? 'null';
  const json = restJson === '{}' ? `{"meta":${metaJson}}` : `${restJson.slice(0, -1)},"meta":${metaJson}}`;
  return { hash, json };
}

function profileRows(
  p: DomainProfileInput,
  index: number,
  syncedAt: string,
  profileHash: string,
  profileJson: string,
): ProfileRows {
  const key = keyColumn(p.domain_normalized, `profiles[${index}].domain_normalized`);
  const where = `profiles[${index}] (${key})`;
  const operator = p.operator ?? {};
  const brand = p.brand ?? {};
  const meta = p.meta ?? {};
  const domain = [
    key,
    textColumn(p.domain, `${where}.domain`),
    textColumn(p.status, `${where}.status`),
    timestampColumn(p.last_enriched_at, `${where}.last_enriched_at`),
    textColumn(operator.name, `${where}.operator.name`),
    textColumn(operator.legal_entity_name, `${where}.operator.legal_entity_name`),
    textColumn(operator.country_of_incorporation, `${where}.operator.country_of_incorporation`),
    textColumn(brand.name, `${where}.brand.name`),
    textColumn(brand.slug, `${where}.brand.slug`),
    integerColumn(meta.freshness_age_seconds, `${where}.meta.freshness_age_seconds`),
    booleanColumn(meta.served_from_cache, `${where}.meta.served_from_cache`),
    booleanColumn(meta.billable, `${where}.meta.billable`),
    timestampColumn(meta.observed_at, `${where}.meta.observed_at`),
    profileJson,
    profileHash,
    syncedAt,
    syncedAt,
    syncedAt,
  ];
  let licences: Map<string, LicenceRow> | null = null;
  if (p.licenses !== undefined && p.licenses !== null) {
    licences = new Map();
    p.licenses.forEach((l, i) => {
      const row = licenceRow(l, `${where}.licenses[${i}]`);
      licences!.set(licenceKey(row.jurisdiction, row.license_number), row);
    });
  }
  let paymentMethods: Map<string, PaymentMethodRow> | null = null;
  if (p.payment_methods !== undefined && p.payment_methods !== null) {
    paymentMethods = new Map();
    p.payment_methods.forEach((m, i) => {
      const row = paymentMethodRow(m, `${where}.payment_methods[${i}]`);
      paymentMethods!.set(row.normalized_name, row);
    });
  }
  const sections: ProfileRows['sections'] = [];
  for (const section of PROFILE_SECTIONS) {
    if (p[section] !== undefined) sections.push({ section, data: jsonColumn(p[section]) });
  }
  return { key, domain, profileHash, licences, paymentMethods, sections };
}

interface StoredLicence extends LicenceRow {
  domain_normalized: string;
  removed_at: string | null;
}
interface StoredPaymentMethod extends PaymentMethodRow {
  domain_normalized: string;
  removed_at: string | null;
}

function groupBy<T extends { domain_normalized: string }>(
  rows: T[],
  keyOf: (row: T) => string,
): Map<string, Map<string, T>> {
  const out = new Map<string, Map<string, T>>();
  for (const row of rows) {
    let inner = out.get(row.domain_normalized);
    if (inner === undefined) out.set(row.domain_normalized, (inner = new Map()));
    inner.set(keyOf(row), row);
  }
  return out;
}

/**
 * Upserts full profiles (`GET /domains/:domain` data): for each profile its `domains` row,
 * licences, payment methods and sections, all profiles of the call in ONE transaction (pass
 * hundreds to thousands per call).
 *
 * Behaviour callers rely on:
 * - Everything is validated first; a bad value throws `ERR_MIRROR_INPUT` naming the profile and
 *   field, before anything is written.
 * - `company_name` and the listing columns are never touched (they come from the listing).
 * - History: a licence or payment method missing from a profile that *has* that section gets
 *   `removed_at = syncedAt`; if it comes back `removed_at` is cleared. An absent (or null)
 *   section means "not requested" and changes nothing.
 * - The service's `first_seen_at`/`last_confirmed_at` are stored as given (normalised);
 *   `mirror_first_seen_at`/`mirror_updated_at` are our own bookkeeping.
 * - Idempotent: the same data again rewrites no row. The domain row is compared without `meta`.
 * - A domain given twice in one call: the last profile wins.
 */
export function upsertProfiles(
  mirror: Mirror,
  profiles: readonly DomainProfileInput[],
  options: UpsertProfilesOptions,
): UpsertProfilesResult {
  const syncedAt = requiredTimestamp(options.syncedAt, 'syncedAt');
  const byKey = new Map<
    string,
    { input: DomainProfileInput; index: number; key: string; hash: string; json: string }
  >();
  profiles.forEach((p, i) => {
    const key = keyColumn(p.domain_normalized, `profiles[${i}].domain_normalized`);
    byKey.set(key, { input: p, index: i, key, ...profileJsonOf(p) });
  });
  const all = [...byKey.values()];
  const result: UpsertProfilesResult = {
    profiles: all.length,
    domains: { inserted: 0, updated: 0, unchanged: 0 },
    licencesAdded: 0,
    licencesChanged: 0,
    licencesRemoved: 0,
    licencesRestored: 0,
    paymentMethodsAdded: 0,
    paymentMethodsChanged: 0,
    paymentMethodsRemoved: 0,
    paymentMethodsRestored: 0,
    sectionsWritten: 0,
  };
  if (all.length === 0) return result;

  const st = {
    readDomains: cachedStatement(mirror, SELECT_PROFILE_STATE),
    upsertDomain: cachedStatement(mirror, UPSERT_PROFILE),
    readLicences: cachedStatement(mirror, SELECT_LICENCES),
    upsertLicence: cachedStatement(mirror, UPSERT_LICENCE),
    removeLicence: cachedStatement(mirror, REMOVE_LICENCE),
    readPayments: cachedStatement(mirror, SELECT_PAYMENT_METHODS),
    upsertPayment: cachedStatement(mirror, UPSERT_PAYMENT_METHOD),
    removePayment: cachedStatement(mirror, REMOVE_PAYMENT_METHOD),
    upsertSection: cachedStatement(mirror, UPSERT_SECTION),
    logChange: cachedStatement(mirror, INSERT_CHANGE),
  };

  inTransaction(mirror, () => {
    const storedHash = new Map<string, string | null>();
    for (const row of st.readDomains.all(JSON.stringify(all.map((p) => p.key))) as Array<{
      domain_normalized: string;
      profile_hash: string | null;
    }>) {
      storedHash.set(row.domain_normalized, row.profile_hash);
    }
    // Same hash = the very content this function last wrote for the domain, in one transaction
    // with its licences, payment methods and sections (the only writer of those tables), so
    // there is nothing to compare or write.
    // An unchanged profile is not even validated: the identical content passed validation when it
    // was written. The changed ones are all converted (and validated) before the first write, so
    // a bad value throws with nothing written (and the transaction rolls back regardless).
    const changed = all
      .filter((p) => storedHash.get(p.key) !== p.hash)
      .map((p) => profileRows(p.input, p.index, syncedAt, p.hash, p.json));
    result.domains.unchanged = all.length - changed.length;
    const withLicences = changed.filter((p) => p.licences !== null).map((p) => p.key);
    const storedLicences = groupBy(
      withLicences.length ? (st.readLicences.all(JSON.stringify(withLicences)) as StoredLicence[]) : [],
      (r) => licenceKey(r.jurisdiction, r.license_number),
    );
    const withPayments = changed.filter((p) => p.paymentMethods !== null).map((p) => p.key);
    const storedPayments = groupBy(
      withPayments.length ? (st.readPayments.all(JSON.stringify(withPayments)) as StoredPaymentMethod[]) : [],
      (r) => r.normalized_name,
    );

    for (const p of changed) {
      // Domain first: the child tables reference it.
      if (storedHash.has(p.key)) result.domains.updated++;
      else result.domains.inserted++;
      st.upsertDomain.run(...p.domain);

      if (p.licences !== null) {
        const stored = storedLicences.get(p.key) ?? new Map<string, StoredLicence>();
        for (const [k, l] of p.licences) {
          const old = stored.get(k);
          if (old === undefined) {
            result.licencesAdded++;
            st.logChange.run(syncedAt, 'licenses', p.key, licenceItemKey(l), 'added', null, l.status);
          } else if (old.removed_at !== null) {
            result.licencesRestored++;
            st.logChange.run(
              syncedAt,
              'licenses',
              p.key,
              licenceItemKey(l),
              'restored',
              old.status,
              l.status,
            );
          } else if (
            old.status === l.status &&
            old.source_url === l.source_url &&
            old.first_seen_at === l.first_seen_at &&
            old.last_confirmed_at === l.last_confirmed_at
          )
            continue;
          else {
            result.licencesChanged++;
            // Logged when the kept value (the status) changed, not for a date or URL alone.
            if (old.status !== l.status)
              st.logChange.run(
                syncedAt,
                'licenses',
                p.key,
                licenceItemKey(l),
                'changed',
                old.status,
                l.status,
              );
          }
          st.upsertLicence.run(
            p.key,
            l.jurisdiction,
            l.license_number,
            l.status,
            l.source_url,
            l.first_seen_at,
            l.last_confirmed_at,
            syncedAt,
            syncedAt,
          );
        }
        for (const [k, old] of stored) {
          if (old.removed_at === null && !p.licences.has(k)) {
            result.licencesRemoved++;
            st.removeLicence.run(syncedAt, syncedAt, p.key, old.jurisdiction, old.license_number);
            st.logChange.run(
              syncedAt,
              'licenses',
              p.key,
              licenceItemKey(old),
              'removed',
              old.status,
              old.status,
            );
          }
        }
      }

      if (p.paymentMethods !== null) {
        const stored = storedPayments.get(p.key) ?? new Map<string, StoredPaymentMethod>();
        for (const [k, m] of p.paymentMethods) {
          const old = stored.get(k);
          if (old === undefined) {
            result.paymentMethodsAdded++;
            st.logChange.run(syncedAt, 'payment_methods', p.key, k, 'added', null, paymentValue(m));
          } else if (old.removed_at !== null) {
            result.paymentMethodsRestored++;
            st.logChange.run(
              syncedAt,
              'payment_methods',
              p.key,
              k,
              'restored',
              paymentValue(old),
              paymentValue(m),
            );
          } else if (
            old.category === m.category &&
            old.confidence === m.confidence &&
            old.first_seen_at === m.first_seen_at &&
            old.last_confirmed_at === m.last_confirmed_at
          )
            continue;
          else {
            result.paymentMethodsChanged++;
            // Logged when the kept value (category/confidence) changed, not for a date alone.
            const before = paymentValue(old);
            const after = paymentValue(m);
            if (before !== after)
              st.logChange.run(syncedAt, 'payment_methods', p.key, k, 'changed', before, after);
          }
          st.upsertPayment.run(
            p.key,
            m.normalized_name,
            m.category,
            m.confidence,
            m.first_seen_at,
            m.last_confirmed_at,
            syncedAt,
            syncedAt,
          );
        }
        for (const [k, old] of stored) {
          if (old.removed_at === null && !p.paymentMethods.has(k)) {
            result.paymentMethodsRemoved++;
            st.removePayment.run(syncedAt, syncedAt, p.key, old.normalized_name);
            const value = paymentValue(old);
            st.logChange.run(
              syncedAt,
              'payment_methods',
              p.key,
              old.normalized_name,
              'removed',
              value,
              value,
            );
          }
        }
      }

      for (const s of p.sections) {
        result.sectionsWritten += st.upsertSection.run(p.key, s.section, s.data, syncedAt, syncedAt).changes;
      }
    }
  });
  return result;
}

/** Options of {@link markUnlisted}. */
export interface MarkUnlistedOptions {
  /** Time to store in `unlisted_at`. */
  listedAt: string;
  /** Start of the listing run: domains with `last_listed_at` before it were not listed by it. */
  runStartedAt: string;
}

/** Result of {@link markUnlisted}. */
export interface MarkUnlistedResult {
  /** Domains newly marked unlisted. */
  marked: number;
  /** Why nothing was marked, when the call was skipped. */
  skipped?: 'filtered_listing' | 'empty_listing';
}

/**
 * Marks domains the service no longer lists: every domain not listed since `runStartedAt` gets
 * `unlisted_at` (rows are never deleted; a later listing clears it).
 *
 * Only a complete, unfiltered listing proves absence, so this does nothing when `scopeFilters`
 * has any key (`skipped: 'filtered_listing'`). It also does nothing when no domain at all was
 * listed since `runStartedAt` (`skipped: 'empty_listing'`): an empty listing more likely means a
 * failed run than an empty catalogue.
 */
export function markUnlisted(
  mirror: Mirror,
  scopeFilters: Readonly<Record<string, unknown>> | undefined,
  options: MarkUnlistedOptions,
): MarkUnlistedResult {
  const listedAt = requiredTimestamp(options.listedAt, 'listedAt');
  const runStartedAt = requiredTimestamp(options.runStartedAt, 'runStartedAt');
  if (scopeFilters !== undefined && Object.keys(scopeFilters).length > 0)
    return { marked: 0, skipped: 'filtered_listing' };
  return inTransaction(mirror, () => {
    const listed = cachedStatement(mirror, 'SELECT count(*) AS n FROM domains WHERE last_listed_at >= ?').get(
      runStartedAt,
    ) as { n: number };
    if (listed.n === 0) return { marked: 0, skipped: 'empty_listing' as const };
    const { changes } = cachedStatement(
      mirror,
      'UPDATE domains SET unlisted_at = ? WHERE unlisted_at IS NULL AND (last_listed_at IS NULL OR last_listed_at < ?)',
    ).run(listedAt, runStartedAt);
    return { marked: changes };
  });
}
