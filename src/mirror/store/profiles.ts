import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3';
import { cachedStatement, inTransaction } from '../database.js';
import type { Mirror } from '../database.js';
import type { DomainProfileInput } from '../inputs.js';
import { peekNextChangeSeq, takeChangeSeq } from './change-seq.js';
import { baselineOpen } from './baseline.js';
import type { HeldListing } from './held-listing.js';
import { childRows, keyedChildWriter } from './child-history.js';
import type { KeyedChildWriter } from './child-history.js';
import { LICENCES, PAYMENT_METHODS, PROFILE_SECTIONS, profileExtra } from './profile-fields.js';
import type { LicenceRow, PaymentMethodRow } from './profile-fields.js';
import {
  SELECT_PROFILE_STATE,
  CONTENT_PARAMS,
  SELECT_PROFILE_CONTENT,
  SET_PROFILE_HASH,
  UPSERT_PROFILE,
  UPSERT_PROFILE_WITH_LISTING,
  INSERT_PROFILE_WITH_HELD_LISTING,
  FIRST_SYNCED_AT_PARAM,
  SET_LISTING_COLUMNS,
  UPSERT_SECTION,
} from './profile-statements.js';
import {
  booleanColumn,
  compareByKey,
  integerColumn,
  jsonColumn,
  keyColumn,
  objectOrEmpty,
  requiredTimestamp,
  textColumn,
  timestampColumn,
} from './values.js';

/*
 * Full profiles (`GET /domains/:domain`, or an export row): the `domains` profile columns, the
 * licences and payment methods with their history (`child-history.ts`), and the sections. The
 * sync hot path: every statement is hand SQL prepared once per Mirror and run inside one
 * better-sqlite3 transaction per batch, because a fresh kysely query per row is many times
 * slower (README.md "Dependencies, and why"). Every upsert has a `WHERE <something changed>`
 * guard so that a re-run with the same data rewrites no row.
 */

/** Options of {@link upsertProfiles}. */
export interface UpsertProfilesOptions {
  /** When the profiles were fetched (any ISO 8601 spelling); our bookkeeping time. */
  syncedAt: string;
  /**
   * Listing columns that came with the profiles (an export row's `company_name` and its
   * `last_enriched_at` as listed), by position in `profiles`; `undefined` at a position leaves
   * the stored listing columns alone. Values must already be checked (text, normalised
   * timestamp). They are written by the same statement as the profile, not by a second UPDATE.
   */
  listing?: ReadonlyArray<ListingColumns | undefined>;
  /**
   * Listing rows held back by the mirror writer thread (held-listing.ts): a domain not in the
   * mirror whose row is held there is inserted with it, in one statement, and no longer held.
   */
  heldListing?: HeldListing;
  /**
   * Check also the profiles whose content is already stored (by converting them, as a changed one
   * is, and writing nothing): for a writer that has not checked its input itself, an export's
   * one-pass load (pipelines/export/load.ts), where the hash leaves `meta` out and so does not
   * prove a repeated row's `meta` good.
   */
  checkUnchanged?: boolean;
}

/** The listing columns {@link upsertProfiles} can write along with a profile. */
export interface ListingColumns {
  companyName: string | null;
  listingLastEnrichedAt: string | null;
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

interface ProfileRows {
  key: string;
  domain: unknown[];
  profileHash: string;
  /** null = section absent from the profile (not requested): leave stored rows alone. */
  licences: Map<string, LicenceRow> | null;
  paymentMethods: Map<string, PaymentMethodRow> | null;
  sections: Array<{ section: string; data: string | null }>;
  /** Listing columns written with the profile (see {@link UpsertProfilesOptions.listing}). */
  listing?: ListingColumns;
  /** The stored domain row holds this content already; only its hash differs. */
  sameContent?: boolean;
}

/**
 * Change-detection hash of a profile, and the JSON of its {@link profileExtra}. The hash covers
 * the whole profile but `meta`: freshness_age_seconds and observed_at move on every fetch, and a
 * re-fetch of unchanged data must not rewrite the row; the meta columns therefore describe the
 * fetch that last changed the row (keeping freshness_age_seconds consistent with observed_at).
 * Plain, not key-sorted, JSON: the same service sends the same key order, a different order costs
 * one needless rewrite, and sorting measured several times slower.
 */
function profileJsonOf(p: DomainProfileInput): { hash: string; extraJson: string } {
  const { meta, ...rest } = p;
  void meta;
  const restJson = jsonColumn(rest) ?? '{}';
  const hash = createHash('sha1').update(restJson).digest('base64');
  return { hash, extraJson: jsonColumn(profileExtra(p)) ?? '{}' };
}

function profileRows(
  p: DomainProfileInput,
  index: number,
  syncedAt: string,
  profileHash: string,
  extraJson: string,
): ProfileRows {
  const key = keyColumn(p.domain_normalized, `profiles[${index}].domain_normalized`);
  const where = `profiles[${index}] (${key})`;
  const operator = objectOrEmpty(p.operator, `${where}.operator`);
  const brand = objectOrEmpty(p.brand, `${where}.brand`);
  const meta = objectOrEmpty(p.meta, `${where}.meta`);
  // In the order of PROFILE_ROW_COLUMNS (profile-statements.ts), which the statements write.
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
    extraJson,
    profileHash,
    syncedAt,
    syncedAt,
    syncedAt,
  ];
  const licences = childRows(LICENCES, p.licenses, `${where}.licenses`);
  const paymentMethods = childRows(PAYMENT_METHODS, p.payment_methods, `${where}.payment_methods`);
  const sections: ProfileRows['sections'] = [];
  for (const section of PROFILE_SECTIONS) {
    if (p[section] !== undefined) sections.push({ section, data: jsonColumn(p[section]) });
  }
  return { key, domain, profileHash, licences, paymentMethods, sections };
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
 *   section means "not requested" and changes nothing. Each addition, removal, restoration and
 *   change gets a `change_log` row, except the additions of a domain's first profile while the
 *   mirror's baseline (its first load, store/baseline.ts) is open.
 * - The service's `first_seen_at`/`last_confirmed_at` are stored as given (normalised);
 *   `mirror_first_seen_at`/`mirror_updated_at` are our own bookkeeping.
 * - Idempotent: the same data again rewrites no row. The domain row is compared without `meta`.
 * - The same profile with its keys in another order (an export row after the API's response for
 *   the domain), nothing else changed: the domain row keeps its columns, `meta` and times, and
 *   only its `profile_hash` (with `change_seq`) is rewritten.
 * - A domain given twice in one call: the last profile wins.
 */
export function upsertProfiles(
  mirror: Mirror,
  profiles: readonly DomainProfileInput[],
  options: UpsertProfilesOptions,
): UpsertProfilesResult {
  const syncedAt = requiredTimestamp(options.syncedAt, 'syncedAt');
  // Loops and module functions here and below, not callbacks made per call: a writer calls this
  // every 64 profiles, and V8 compiled such callbacks anew between batches (child-history.ts).
  const byKey = new Map<string, ProfileInput>();
  for (let i = 0; i < profiles.length; i++) {
    const p = profiles[i]!;
    const key = keyColumn(p.domain_normalized, `profiles[${i}].domain_normalized`);
    byKey.set(key, { input: p, index: i, key, ...profileJsonOf(p), listing: options.listing?.[i] });
  }
  // Written in key order: the tables and most of their indexes are keyed by domain, so a sorted
  // batch walks each B-tree once instead of jumping between its pages, and SQLite's small page
  // cache keeps hitting (about a fifth less CPU per profile on a 100,000-domain mirror, more the
  // larger the mirror; docs/benchmarks.md "export").
  const all = [...byKey.values()].sort(compareByKey);
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
  const { licences, paymentMethods } = inTransaction(mirror, () =>
    writeProfiles(mirror, all, options, syncedAt, result),
  );
  result.licencesAdded = licences.counts.added;
  result.licencesChanged = licences.counts.changed;
  result.licencesRemoved = licences.counts.removed;
  result.licencesRestored = licences.counts.restored;
  result.paymentMethodsAdded = paymentMethods.counts.added;
  result.paymentMethodsChanged = paymentMethods.counts.changed;
  result.paymentMethodsRemoved = paymentMethods.counts.removed;
  result.paymentMethodsRestored = paymentMethods.counts.restored;
  return result;
}

/** A profile given to {@link upsertProfiles}, with its key, hash and listing columns. */
interface ProfileInput {
  input: DomainProfileInput;
  index: number;
  key: string;
  hash: string;
  extraJson: string;
  listing: ListingColumns | undefined;
}

/** What {@link writeDomainRow} needs of the transaction {@link writeProfiles} runs. */
interface DomainRowWrite {
  options: UpsertProfilesOptions;
  result: UpsertProfilesResult;
  storedHash: ReadonlyMap<string, string | null>;
  changeSeq: number;
  upsertDomain: Database.Statement;
  withListing: Database.Statement | undefined;
  withHeldListing: Database.Statement | undefined;
}

/** The body of {@link upsertProfiles}' transaction: `all` in key order, not empty. */
function writeProfiles(
  mirror: Mirror,
  all: readonly ProfileInput[],
  options: UpsertProfilesOptions,
  syncedAt: string,
  result: UpsertProfilesResult,
): { licences: KeyedChildWriter<LicenceRow>; paymentMethods: KeyedChildWriter<PaymentMethodRow> } {
  const readDomains = cachedStatement(mirror, SELECT_PROFILE_STATE);
  const upsertSection = cachedStatement(mirror, UPSERT_SECTION);
  const setHash = cachedStatement(mirror, SET_PROFILE_HASH);
  const keys: string[] = [];
  for (const p of all) keys.push(p.key);
  const storedHash = new Map<string, string | null>();
  for (const row of readDomains.all(JSON.stringify(keys)) as Array<{
    domain_normalized: string;
    profile_hash: string | null;
  }>) {
    storedHash.set(row.domain_normalized, row.profile_hash);
  }
  // Same hash = the very content this function last wrote for the domain, in one transaction
  // with its licences, payment methods and sections (the only writer of those tables), so
  // there is nothing to compare or write.
  // An unchanged profile is not even validated (unless `checkUnchanged`): the identical content
  // passed validation when it was written. The changed ones are all converted (and validated)
  // before the first write, so a bad value throws with nothing written (and the transaction rolls
  // back regardless).
  const changed: ProfileRows[] = [];
  const unchangedListing: Array<{ key: string; listing: ListingColumns }> = [];
  for (const p of all) {
    if (storedHash.get(p.key) !== p.hash) {
      const rows = profileRows(p.input, p.index, syncedAt, p.hash, p.extraJson);
      if (p.listing !== undefined) rows.listing = p.listing;
      changed.push(rows);
    } else {
      if (options.checkUnchanged) profileRows(p.input, p.index, syncedAt, p.hash, p.extraJson);
      if (p.listing !== undefined) unchangedListing.push({ key: p.key, listing: p.listing });
    }
  }
  // The changed profiles of domains the mirror holds a profile of (not only their listing row),
  // and of domains it holds at all (a domain not in the mirror has no stored children to compare
  // with: they reference it).
  const withStoredProfile: ProfileRows[] = [];
  const knownLicences: string[] = [];
  const knownPayments: string[] = [];
  for (const p of changed) {
    if (!storedHash.has(p.key)) continue;
    if (holdsProfile(storedHash, p.key)) withStoredProfile.push(p);
    if (p.licences !== null) knownLicences.push(p.key);
    if (p.paymentMethods !== null) knownPayments.push(p.key);
  }
  markSameContent(mirror, withStoredProfile);
  result.domains.unchanged = all.length - changed.length;
  // One change sequence value for every row this transaction writes (migration 0005); none is
  // taken when nothing will be written, so an unchanged batch changes no row at all.
  const changeSeq = changed.length > 0 || unchangedListing.length > 0 ? peekNextChangeSeq(mirror) : 0;
  let wrote = false;
  const licences = keyedChildWriter(mirror, LICENCES, syncedAt, changeSeq);
  const paymentMethods = keyedChildWriter(mirror, PAYMENT_METHODS, syncedAt, changeSeq);
  // While the mirror's first load fills it, a domain's first profile is where its history
  // starts: its licences and payment methods are not additions.
  const baseline = changed.length > 0 && baselineOpen(mirror);
  const storedLicences = licences.readStored(knownLicences);
  const storedPayments = paymentMethods.readStored(knownPayments);
  const domainRow: DomainRowWrite = {
    options,
    result,
    storedHash,
    changeSeq,
    upsertDomain: cachedStatement(mirror, UPSERT_PROFILE),
    withListing:
      options.listing === undefined ? undefined : cachedStatement(mirror, UPSERT_PROFILE_WITH_LISTING),
    withHeldListing:
      options.heldListing === undefined
        ? undefined
        : cachedStatement(mirror, INSERT_PROFILE_WITH_HELD_LISTING),
  };

  for (const p of changed) {
    wrote = true;
    // Domain first, since the child tables reference it; a domain row that may hold this content
    // already (sameContent) is written after its children, once it is known whether they changed.
    if (p.sameContent !== true) writeDomainRow(domainRow, p);
    const logAdditions = !baseline || holdsProfile(storedHash, p.key);
    let childRowsWritten = 0;
    if (p.licences !== null)
      childRowsWritten += licences.apply(p.key, p.licences, storedLicences.get(p.key), logAdditions);
    if (p.paymentMethods !== null)
      childRowsWritten += paymentMethods.apply(
        p.key,
        p.paymentMethods,
        storedPayments.get(p.key),
        logAdditions,
      );
    for (const s of p.sections) {
      const { changes } = upsertSection.run(p.key, s.section, s.data, syncedAt, syncedAt, changeSeq);
      result.sectionsWritten += changes;
      childRowsWritten += changes;
    }
    if (p.sameContent !== true) continue;
    if (childRowsWritten > 0) {
      // Something of the profile changed after all: the row is rewritten, as for any change.
      writeDomainRow(domainRow, p);
    } else {
      // The whole profile is stored already: the row keeps its columns, meta and times, and
      // takes the new hash alone (and the listing columns, below).
      result.domains.unchanged++;
      setHash.run(p.profileHash, changeSeq, p.key);
      if (p.listing !== undefined) unchangedListing.push({ key: p.key, listing: p.listing });
    }
  }
  if (unchangedListing.length > 0) {
    const setListing = cachedStatement(mirror, SET_LISTING_COLUMNS);
    for (const { key, listing } of unchangedListing) {
      const { companyName, listingLastEnrichedAt } = listing;
      const changes = setListing.run(
        companyName,
        listingLastEnrichedAt,
        syncedAt,
        changeSeq,
        key,
        companyName,
        listingLastEnrichedAt,
      ).changes;
      if (changes > 0) wrote = true;
    }
  }
  if (wrote) takeChangeSeq(mirror, changeSeq);
  return { licences, paymentMethods };
}

/** Whether the mirror holds a profile of the domain, not only its listing row (or nothing). */
function holdsProfile(storedHash: ReadonlyMap<string, string | null>, key: string): boolean {
  return (storedHash.get(key) ?? null) !== null;
}

/** Writes the domain row of a changed profile, with its listing columns when it has them. */
function writeDomainRow(w: DomainRowWrite, p: ProfileRows): void {
  const stored = w.storedHash.has(p.key);
  if (stored) w.result.domains.updated++;
  else w.result.domains.inserted++;
  const held = p.listing === undefined && !stored ? w.options.heldListing?.take(p.key) : undefined;
  if (held !== undefined && w.withHeldListing !== undefined) {
    const params = [...p.domain];
    params[FIRST_SYNCED_AT_PARAM] = held.listedAt;
    w.withHeldListing.run(
      ...params,
      w.changeSeq,
      held.companyName,
      held.listingLastEnrichedAt,
      held.listedAt,
    );
  } else if (p.listing === undefined || w.withListing === undefined)
    w.upsertDomain.run(...p.domain, w.changeSeq);
  else w.withListing.run(...p.domain, w.changeSeq, p.listing.companyName, p.listing.listingLastEnrichedAt);
}

/**
 * Marks the `candidates` (profiles whose hash differs from their domain's stored one) whose stored
 * domain row holds their profile columns and profile_extra already, in the current layout. Their
 * hash may differ only because the same profile came with its keys in another order (an export
 * row against the API's response, or a service that orders keys freely); whether it did is known
 * once their licences, payment methods and sections are compared, row by row as ever. When none
 * of those changed either, rewriting the whole row, with every index it is in, would change
 * nothing but the hash.
 */
function markSameContent(mirror: Mirror, candidates: ProfileRows[]): void {
  if (candidates.length === 0) return;
  const read = cachedStatement(mirror, SELECT_PROFILE_CONTENT);
  const stored = new Map<string, Record<string, unknown>>();
  for (const row of read.all(JSON.stringify(candidates.map((p) => p.key))) as Array<Record<string, unknown>>)
    stored.set(row.domain_normalized as string, row);
  for (const p of candidates) {
    const row = stored.get(p.key);
    if (row !== undefined && CONTENT_PARAMS.every(([column, param]) => row[column] === p.domain[param]))
      p.sameContent = true;
  }
}
