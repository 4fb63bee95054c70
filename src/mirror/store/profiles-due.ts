import { cachedStatement } from '../database.js';
import type { Mirror } from '../database.js';

/**
 * Listed domains whose profile is due: never fetched, or the listing's `last_enriched_at` is
 * not the one of the stored profile (an earlier run listed the change but crashed, failed on
 * that profile, or ran with `--no-profiles`). Domains no longer listed are left out.
 * Ordered by key so a resumed run is deterministic.
 */
export function listProfilesDue(mirror: Mirror, options: { limit?: number } = {}): string[] {
  const rows = cachedStatement(
    mirror,
    `SELECT domain_normalized FROM domains
     WHERE unlisted_at IS NULL
       AND (profile_synced_at IS NULL
            OR (listing_last_enriched_at IS NOT NULL
                AND (last_enriched_at IS NULL OR listing_last_enriched_at > last_enriched_at)))
     ORDER BY domain_normalized LIMIT ?`,
  ).all(options.limit ?? -1) as Array<{ domain_normalized: string }>;
  return rows.map((r) => r.domain_normalized);
}

/** Domains the service currently lists, as far as the mirror knows (rows without `unlisted_at`). */
export function listedDomainCount(mirror: Mirror): number {
  return (
    cachedStatement(mirror, 'SELECT count(*) AS n FROM domains WHERE unlisted_at IS NULL').get() as {
      n: number;
    }
  ).n;
}
