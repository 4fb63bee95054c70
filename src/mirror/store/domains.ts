import { cachedStatement, countOf, inTransaction } from '../database.js';
import type { Mirror } from '../database.js';
import type { DomainSummaryInput } from '../inputs.js';
import { nextChangeSeq } from './change-seq.js';
import type { HeldListing } from './held-listing.js';
import { compareByDomain, keyColumn, requiredTimestamp, textColumn, timestampColumn } from './values.js';

/*
 * The listing side of `domains` (`GET /domains`): summary upserts, which listed domains need
 * their profile fetched, and domains the service stopped listing. Profiles, with their licences,
 * payment methods and sections, are in `profiles.ts`. Hand SQL prepared once per Mirror, one
 * transaction per batch, and a `WHERE <something changed>` guard on every upsert, as there.
 */

/** Whether the mirror holds any domain. */
export function mirrorHasDomains(mirror: Mirror): boolean {
  const row = cachedStatement(mirror, 'SELECT EXISTS (SELECT 1 FROM domains) AS found').get() as {
    found: number;
  };
  return row.found === 1;
}

/**
 * How many of `keys` (domain_normalized values; a key given twice counts twice) the mirror holds
 * no row for. Pass them a few hundred to a few thousand at a time.
 */
export function countDomainsNotInMirror(mirror: Mirror, keys: readonly string[]): number {
  if (keys.length === 0) return 0;
  return countOf(
    mirror,
    `SELECT count(*) AS n FROM json_each(?) AS k
     WHERE NOT EXISTS (SELECT 1 FROM domains WHERE domain_normalized = k.value)`,
    JSON.stringify(keys),
  );
}

/** Options of {@link upsertDomainSummaries}. */
export interface UpsertSummariesOptions {
  /** When this listing was read (any ISO 8601 spelling); becomes `last_listed_at`. */
  listedAt: string;
  /**
   * Holds the rows of domains not in the mirror instead of writing them (the mirror writer thread,
   * held-listing.ts): their first profile writes each, or the holder's flush before the commit.
   */
  heldListing?: HeldListing;
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
         last_enriched_at, profile_synced_at, last_listed_at
  FROM domains WHERE domain_normalized IN (SELECT value FROM json_each(?))`;

/** A domain's stored listing state, as {@link readSummaryState} reads it. */
export interface SummaryStateRow {
  domain_normalized: string;
  company_name: string | null;
  listing_last_enriched_at: string | null;
  unlisted_at: string | null;
  last_enriched_at: string | null;
  profile_synced_at: string | null;
  last_listed_at: string | null;
}

const UPSERT_SUMMARY = `
  INSERT INTO domains (domain_normalized, company_name, listing_last_enriched_at, last_listed_at,
                       first_synced_at, last_synced_at, change_seq)
  VALUES (?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (domain_normalized) DO UPDATE SET
    change_seq = excluded.change_seq,
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

/** A checked listing row ({@link summaryRows}). */
export interface SummaryRow {
  domain_normalized: string;
  company_name: string | null;
  listing_last_enriched_at: string | null;
}

/**
 * The checked rows of `summaries`, one per domain (the last one wins), in key order; throws
 * `ERR_MIRROR_INPUT` naming the field of a bad value.
 */
function summaryRows(summaries: readonly DomainSummaryInput[]): SummaryRow[] {
  // Last one wins when a listing repeats a domain (offset drift can do that).
  const byKey = new Map<string, SummaryRow>();
  // Loops and module functions, not callbacks made per call, which V8 compiled anew between
  // batches (store/child-history.ts).
  for (let i = 0; i < summaries.length; i++) {
    const s = summaries[i]!;
    const where = `summaries[${i}]`;
    const key = keyColumn(s.domain_normalized, `${where}.domain_normalized`);
    byKey.set(key, {
      domain_normalized: key,
      company_name: textColumn(s.company_name, `${where} (${key}).company_name`),
      listing_last_enriched_at: timestampColumn(s.last_enriched_at, `${where} (${key}).last_enriched_at`),
    });
  }
  // In key order, as upsertProfiles writes: one sweep over the B-trees keyed by domain.
  return [...byKey.values()].sort(compareByDomain);
}

/**
 * Upserts items of `GET /domains` into `domains`: `company_name`, `listing_last_enriched_at`,
 * `last_listed_at` (and `first_synced_at` on insert); clears `unlisted_at`. Never touches the
 * profile columns. Idempotent; one transaction for the whole array (pass a page or several).
 * Validates every item first: a bad timestamp throws `ERR_MIRROR_INPUT` naming the field and
 * nothing is written (or held, with `heldListing`).
 */
export function upsertDomainSummaries(
  mirror: Mirror,
  summaries: readonly DomainSummaryInput[],
  options: UpsertSummariesOptions,
): UpsertSummariesResult {
  const listedAt = requiredTimestamp(options.listedAt, 'listedAt');
  const rows = summaryRows(summaries);
  if (rows.length === 0) return { inserted: 0, updated: 0, unchanged: 0 };
  const held = options.heldListing;
  return inTransaction(mirror, () => {
    if (held !== undefined) return held.hold(mirror, rows, listedAt);
    const existing = readSummaryState(mirror, rows);
    return writeSummaryRows(
      mirror,
      rows,
      listedAt,
      existing,
      summaryChangeSeq(mirror, rows, listedAt, existing),
    );
  });
}

/** The stored listing state of the rows' domains that are in the mirror, by domain. */
export function readSummaryState(mirror: Mirror, rows: readonly SummaryRow[]): Map<string, SummaryStateRow> {
  const existing = new Map<string, SummaryStateRow>();
  const read = cachedStatement(mirror, SELECT_SUMMARY_STATE);
  for (const row of read.all(JSON.stringify(rows.map((r) => r.domain_normalized))) as SummaryStateRow[]) {
    existing.set(row.domain_normalized, row);
  }
  return existing;
}

/**
 * The change sequence value (migration 0005) for writing `rows` listed at `listedAt`, given their
 * stored state: one taken now when the upsert's guard will let a row through, else 0 (none taken).
 */
export function summaryChangeSeq(
  mirror: Mirror,
  rows: readonly SummaryRow[],
  listedAt: string,
  existing: ReadonlyMap<string, SummaryStateRow>,
): number {
  const changes = rows.some((row) => {
    const old = existing.get(row.domain_normalized);
    return (
      old === undefined ||
      old.company_name !== row.company_name ||
      old.listing_last_enriched_at !== row.listing_last_enriched_at ||
      old.unlisted_at !== null ||
      old.last_listed_at !== listedAt
    );
  });
  return changes ? nextChangeSeq(mirror) : 0;
}

/**
 * Writes checked summary rows listed at `listedAt`, given the stored state of those in the
 * mirror (`existing`), stamped with `changeSeq` (from {@link summaryChangeSeq}); the caller holds
 * the transaction.
 */
export function writeSummaryRows(
  mirror: Mirror,
  rows: readonly SummaryRow[],
  listedAt: string,
  existing: ReadonlyMap<string, SummaryStateRow>,
  changeSeq: number,
): UpsertSummariesResult {
  const result: UpsertSummariesResult = { inserted: 0, updated: 0, unchanged: 0 };
  const upsert = cachedStatement(mirror, UPSERT_SUMMARY);
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
      changeSeq,
    );
  }
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
    const listed = countOf(
      mirror,
      'SELECT count(*) AS n FROM domains WHERE last_listed_at >= ?',
      runStartedAt,
    );
    if (listed === 0) return { marked: 0, skipped: 'empty_listing' as const };
    const unlisted = countOf(
      mirror,
      'SELECT count(*) AS n FROM domains WHERE unlisted_at IS NULL AND (last_listed_at IS NULL OR last_listed_at < ?)',
      runStartedAt,
    );
    if (unlisted === 0) return { marked: 0 };
    const { changes } = cachedStatement(
      mirror,
      'UPDATE domains SET unlisted_at = ?, change_seq = ? WHERE unlisted_at IS NULL AND (last_listed_at IS NULL OR last_listed_at < ?)',
    ).run(listedAt, nextChangeSeq(mirror), runStartedAt);
    return { marked: changes };
  });
}
