import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/*
 * Indexes for the read-only dashboard (`ui`, docs/ui.md), so that every page reads a bounded
 * number of index entries on a mirror of a million licences instead of scanning a table.
 * Frozen once merged.
 *
 * - The domain search pages through domains in name order: by name or company name over one
 *   covering index, by jurisdiction or payment category over partial indexes of the current
 *   (not removed) licences and payment methods, ordered by domain.
 * - `domains_without_profile` holds only the domains whose profile was never fetched, and
 *   `domains_unlisted_by_last_enriched_at` only the unlisted ones, so the overview counts them
 *   (and takes the unlisted out of the freshness histogram) without reading `domains` rows,
 *   which carry the raw profile.
 * - The Changes page lists `change_log` newest first, filtered by date, by licence jurisdiction
 *   or by payment category; each filter has an index ordered by time. The expressions are the
 *   ones the dashboard's queries use (src/mirror/store/ui-changes.ts): SQLite only uses an
 *   expression index for the same expression.
 */

/**
 * Replaced by the partial indexes below, which serve every query they served (equality on the
 * jurisdiction or category of current rows) and also give domain order: keeping both would make
 * every licence and payment-method write update one more index.
 */
const REPLACED: ReadonlyArray<{ name: string; create: string }> = [
  {
    name: 'licenses_jurisdiction',
    create: 'CREATE INDEX licenses_jurisdiction ON licenses (jurisdiction, removed_at)',
  },
  {
    name: 'payment_methods_category',
    create: 'CREATE INDEX payment_methods_category ON payment_methods (category, removed_at)',
  },
];

const INDEXES: readonly string[] = [
  'CREATE INDEX domains_search ON domains (domain_normalized, company_name)',
  'CREATE INDEX domains_without_profile ON domains (domain_normalized) WHERE profile_synced_at IS NULL',
  // unlisted_at is a column too, so the index alone answers the query (no row is read).
  `CREATE INDEX domains_unlisted_by_last_enriched_at ON domains (last_enriched_at, unlisted_at)
     WHERE unlisted_at IS NOT NULL`,
  `CREATE INDEX licenses_current_by_jurisdiction ON licenses (jurisdiction, domain_normalized)
     WHERE removed_at IS NULL`,
  `CREATE INDEX payment_methods_current_by_category ON payment_methods (category, domain_normalized)
     WHERE removed_at IS NULL`,
  'CREATE INDEX change_log_at ON change_log (at)',
  `CREATE INDEX change_log_licence_jurisdiction
     ON change_log (substr(item_key, 1, instr(item_key, ':') - 1), at)
     WHERE table_name = 'licenses'`,
  `CREATE INDEX change_log_payment_category
     ON change_log (substr(coalesce(new_value, old_value), 1, instr(coalesce(new_value, old_value), '/') - 1), at)
     WHERE table_name = 'payment_methods'`,
];

const NAMES = [
  'domains_search',
  'domains_without_profile',
  'domains_unlisted_by_last_enriched_at',
  'licenses_current_by_jurisdiction',
  'payment_methods_current_by_category',
  'change_log_at',
  'change_log_licence_jurisdiction',
  'change_log_payment_category',
] as const;

/** Creates the dashboard's indexes (dropping the two they replace). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are frozen in time
export async function up(db: Kysely<any>): Promise<void> {
  for (const { name } of REPLACED) await sql.raw(`DROP INDEX IF EXISTS ${name}`).execute(db);
  for (const statement of INDEXES) await sql.raw(statement).execute(db);
}

/** Drops them and puts back the two they replaced. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are frozen in time
export async function down(db: Kysely<any>): Promise<void> {
  for (const name of NAMES) await sql.raw(`DROP INDEX IF EXISTS ${name}`).execute(db);
  for (const { create } of REPLACED) await sql.raw(create).execute(db);
}
