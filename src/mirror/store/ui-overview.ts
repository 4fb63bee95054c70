import { cachedStatement, countOf, indexedBy, inTransaction } from '../database.js';
import type { Mirror } from '../database.js';

/*
 * Reads of the dashboard's Overview page (docs/ui.md). Every count here is answered from an index
 * (a whole-index count, or a range of an index over the few removed/unlisted rows): a `domains`
 * row carries the raw profile, so reading rows of that table for a count would read the whole
 * mirror (migration 0004_dashboard_read_indexes).
 */

/**
 * Runs `read` in one read transaction, so every query of one page sees the same state of the
 * mirror even while a pipeline is writing it. Works on a read-only connection.
 */
export function readConsistently<T>(mirror: Mirror, read: () => T): T {
  return inTransaction(mirror, read);
}

/** Result of {@link overviewCounts}. */
export interface OverviewCounts {
  domains: { total: number; unlisted: number; withoutProfile: number };
  licences: { total: number; removed: number };
  paymentMethods: { total: number; removed: number };
}

/** Counts of `domains`, each from an index (see the file comment); `status` reads them too. */
export function domainCounts(mirror: Mirror): OverviewCounts['domains'] {
  return {
    total: countOf(mirror, 'SELECT count(*) AS n FROM domains'),
    unlisted: countOf(mirror, 'SELECT count(*) AS n FROM domains WHERE unlisted_at IS NOT NULL'),
    withoutProfile: countOf(
      mirror,
      `SELECT count(*) AS n FROM domains ${indexedBy(mirror, 'domains_without_profile')} WHERE profile_synced_at IS NULL`,
    ),
  };
}

/** Row counts of the mirror, each from an index (see the file comment). */
export function overviewCounts(mirror: Mirror): OverviewCounts {
  return {
    domains: domainCounts(mirror),
    licences: {
      total: countOf(mirror, 'SELECT count(*) AS n FROM licenses'),
      removed: countOf(mirror, 'SELECT count(*) AS n FROM licenses WHERE removed_at IS NOT NULL'),
    },
    paymentMethods: {
      total: countOf(mirror, 'SELECT count(*) AS n FROM payment_methods'),
      removed: countOf(mirror, 'SELECT count(*) AS n FROM payment_methods WHERE removed_at IS NOT NULL'),
    },
  };
}

/** One bar of the freshness histogram: listed domains whose `last_enriched_at` age is in range. */
export interface FreshnessBucket {
  /** Label for people, e.g. `1–7 d`. */
  label: string;
  /** Inclusive lower bound of the age, in days (null: no profile date at all). */
  fromDays: number | null;
  /** Exclusive upper bound in days; null for the open-ended last bucket. */
  toDays: number | null;
  domains: number;
}

/** Age bounds of the histogram in days: [0,1), [1,7), … [365, ∞). */
export const FRESHNESS_BOUNDS_DAYS: readonly number[] = [0, 1, 7, 30, 90, 180, 365];

const DAY_MS = 86_400_000;

/**
 * The freshness histogram of listed domains at `nowMs`: how many have a `last_enriched_at` in each
 * age range, plus those with none. Each bucket counts a range of the `last_enriched_at` index,
 * minus the same range of the partial index of unlisted domains. A timestamp in the future
 * counts in the first bucket.
 */
export function freshnessHistogram(mirror: Mirror, nowMs: number): FreshnessBucket[] {
  const inRange = cachedStatement(
    mirror,
    `SELECT
       (SELECT count(*) FROM domains ${indexedBy(mirror, 'domains_last_enriched_at')}
         WHERE last_enriched_at >= @from AND last_enriched_at < @to) -
       (SELECT count(*) FROM domains ${indexedBy(mirror, 'domains_unlisted_by_last_enriched_at')}
         WHERE unlisted_at IS NOT NULL AND last_enriched_at >= @from AND last_enriched_at < @to) AS n`,
  );
  const iso = (ms: number): string => new Date(ms).toISOString();
  const buckets: FreshnessBucket[] = [];
  const bounds = FRESHNESS_BOUNDS_DAYS;
  for (let i = 0; i < bounds.length; i++) {
    const fromDays = bounds[i] as number;
    const toDays = i + 1 < bounds.length ? (bounds[i + 1] as number) : null;
    // Age in [fromDays, toDays) ⇔ last_enriched_at in (now − toDays, now − fromDays].
    // '~' sorts after every timestamp, so the first bucket also holds dates in the future.
    const newest = i === 0 ? '~' : iso(nowMs - fromDays * DAY_MS + 1);
    const oldest = toDays === null ? '' : iso(nowMs - toDays * DAY_MS + 1);
    const { n } = inRange.get({ from: oldest, to: newest }) as { n: number };
    buckets.push({
      label: toDays === null ? `≥ ${fromDays} d` : `${fromDays}–${toDays} d`,
      fromDays,
      toDays,
      domains: n,
    });
  }
  buckets.push({ label: 'never', fromDays: null, toDays: null, domains: listedWithoutEnrichedAt(mirror) });
  return buckets;
}

/**
 * Listed domains with no `last_enriched_at`: the start of the `last_enriched_at` index, less the
 * same range of the partial index of unlisted domains. `status` reads it too.
 */
export function listedWithoutEnrichedAt(mirror: Mirror): number {
  return countOf(
    mirror,
    `SELECT
       (SELECT count(*) FROM domains ${indexedBy(mirror, 'domains_last_enriched_at')}
         WHERE last_enriched_at IS NULL) -
       (SELECT count(*) FROM domains ${indexedBy(mirror, 'domains_unlisted_by_last_enriched_at')}
         WHERE unlisted_at IS NOT NULL AND last_enriched_at IS NULL) AS n`,
  );
}
