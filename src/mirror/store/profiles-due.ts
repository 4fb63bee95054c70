import { cachedStatement } from '../database.js';
import type { Mirror } from '../database.js';

/**
 * Listed domains whose profile is due: never fetched, or the listing's `last_enriched_at` is
 * not the one of the stored profile (an earlier run listed the change but crashed, failed on
 * that profile, or ran with `--no-profiles`). Domains no longer listed are left out.
 * Ordered by key so a resumed run is deterministic; `after` and `limit` read them a page at a
 * time (the keys after `after`, at most `limit` of them), since after `--no-profiles` every
 * domain of the catalogue is due.
 */
export function listProfilesDue(
  mirror: Mirror,
  options: { limit?: number; after?: string | undefined } = {},
): string[] {
  const limit = options.limit ?? -1;
  const rows = (
    options.after === undefined
      ? cachedStatement(mirror, `${PROFILES_DUE} ORDER BY domain_normalized LIMIT ?`).all(limit)
      : cachedStatement(
          mirror,
          `${PROFILES_DUE} AND domain_normalized > ? ORDER BY domain_normalized LIMIT ?`,
        ).all(options.after, limit)
  ) as Array<{ domain_normalized: string }>;
  return rows.map((r) => r.domain_normalized);
}

/**
 * The due domains' query. It reads the partial index `domains_profile_due` (migration 0008),
 * which holds exactly the domains due, in key order, and no `domains` row: each carries the raw
 * profile, and at 1,000,000 domains reading them all to test the condition took 1.7 s with the
 * file in the page cache, on every sync. The condition must stay the index's, term for term, or
 * SQLite cannot use the index; `INDEXED BY` makes that an error at prepare time rather than a
 * silent scan. The sync runs this while a first load has indexes set aside, so a first load must
 * never set this one aside (store/deferred-indexes.ts).
 */
const PROFILES_DUE = `SELECT domain_normalized FROM domains INDEXED BY domains_profile_due
     WHERE unlisted_at IS NULL
       AND (profile_synced_at IS NULL
            OR (listing_last_enriched_at IS NOT NULL
                AND (last_enriched_at IS NULL OR listing_last_enriched_at > last_enriched_at)))`;

/** Domains the service currently lists, as far as the mirror knows (rows without `unlisted_at`). */
export function listedDomainCount(mirror: Mirror): number {
  return (
    cachedStatement(mirror, 'SELECT count(*) AS n FROM domains WHERE unlisted_at IS NULL').get() as {
      n: number;
    }
  ).n;
}
