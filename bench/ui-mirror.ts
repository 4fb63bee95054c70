/**
 * A synthetic mirror for the dashboard benchmark, written with plain SQL (`INSERT … SELECT` over
 * a recursive counter), since a million licences through the sync would take most of an hour.
 *
 * Shapes follow the simulator's catalogue: 1.6 licences and 4.5 payment methods per domain, four
 * sections, a raw profile of about 2 KB per domain (a `domains` row then fills most of a page,
 * as real ones do), 1 % unlisted and 0.5 % never profiled domains. `change_log` holds an `added`
 * row for every licence and payment method (what a first sync writes) plus about 68,000 later
 * changes over 90 days; 90 days of nightly, snapshot and enrich runs with a ledger of 27,000
 * paid enrichments and an account answer a day. One jurisdiction (`alderney`) is rare, to time
 * the search's worst case.
 *
 * The schema is the real one: migrations up to `upTo` (the benchmark applies the dashboard's
 * migration afterwards, to time it on a full mirror).
 */
import Database from 'better-sqlite3';
import { Migrator } from 'kysely/migration';
import { openMirror } from '../src/mirror/database.js';
import { mirrorMigrationProvider } from '../src/mirror/migrations/index.js';

const JURISDICTIONS = [
  'mga',
  'ukgc',
  'curacao',
  'gibraltar',
  'isle_of_man',
  'kahnawake',
  'sweden',
  'denmark',
  'ontario',
  'anjouan',
];
const METHODS: ReadonlyArray<[string, string]> = [
  ['visa', 'card'],
  ['mastercard', 'card'],
  ['maestro', 'card'],
  ['skrill', 'e_wallet'],
  ['neteller', 'e_wallet'],
  ['paypal', 'e_wallet'],
  ['bitcoin', 'crypto'],
  ['ethereum', 'crypto'],
  ['trustly', 'bank_transfer'],
  ['sofort', 'bank_transfer'],
  ['paysafecard', 'prepaid'],
  ['apple_pay', 'mobile'],
];
const DAY_S = 86_400;

/** What {@link buildBenchMirror} made. */
export interface BenchMirrorStats {
  domains: number;
  licences: number;
  paymentMethods: number;
  changes: number;
  seconds: number;
}

/**
 * Creates the mirror at `path` with `domains` domains (1.6 licences each: 625,000 domains give
 * 1,000,000 licences) as of `nowMs`, schema migrated up to `upTo`.
 */
export async function buildBenchMirror(
  path: string,
  domains: number,
  nowMs: number,
  upTo: string,
): Promise<BenchMirrorStats> {
  const started = performance.now();
  const mirror = await openMirror(path, { migrate: false });
  try {
    const { error } = await new Migrator({ db: mirror.db, provider: mirrorMigrationProvider }).migrateTo(
      upTo,
    );
    if (error) throw error;
  } finally {
    await mirror.close();
  }
  const db = new Database(path);
  try {
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -262144');
    const nowS = Math.floor(nowMs / 1000);
    const firstSyncS = nowS - 90 * DAY_S;
    const ts = (seconds: string) => `strftime('%Y-%m-%dT%H:%M:%fZ', ${seconds}, 'unixepoch')`;
    const counter = (n: number) =>
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${n - 1})`;
    const jur = `json_extract('[${JURISDICTIONS.map((j) => `"${j}"`).join(',')}]', '$[' || (%s) || ']')`;
    const profile = `'{"licenses":[],"payment_methods":[],"notes":"' || substr(replace(hex(zeroblob(1000)), '0', 'x'), 1, 1900) || '"}'`;
    db.exec('BEGIN');
    db.exec(`${counter(domains)}
      INSERT INTO domains (domain_normalized, domain, company_name, status, last_enriched_at, listing_last_enriched_at,
        operator_name, operator_legal_entity_name, operator_country, brand_name, brand_slug, raw_profile, profile_hash,
        profile_synced_at, first_synced_at, last_synced_at, last_listed_at, unlisted_at)
      SELECT 'brand' || (i % 997) || '-casino' || i || '.com', 'brand' || (i % 997) || '-casino' || i || '.com',
        'Company ' || (i / 20) || ' Ltd', 'enriched',
        ${ts(`${nowS} - ((i * 7919) % ${400 * DAY_S})`)}, ${ts(`${nowS} - ((i * 7919) % ${400 * DAY_S})`)},
        'Company ' || (i / 20) || ' Ltd', 'Company ' || (i / 20) || ' Holdings Ltd', 'MT', 'Brand ' || (i % 997), 'brand-' || (i % 997),
        CASE WHEN i % 200 = 7 THEN NULL ELSE ${profile} END, CASE WHEN i % 200 = 7 THEN NULL ELSE hex(i) END,
        CASE WHEN i % 200 = 7 THEN NULL ELSE ${ts(String(firstSyncS))} END,
        ${ts(String(firstSyncS))}, ${ts(String(nowS - DAY_S))}, ${ts(String(nowS - DAY_S))},
        CASE WHEN i % 100 = 3 THEN ${ts(String(nowS - 5 * DAY_S))} END
      FROM n`);
    // 1.6 licences per domain: k = 0 for every domain, k = 1 for three in five.
    db.exec(`${counter(domains)}, k(k) AS (VALUES (0), (1))
      INSERT INTO licenses (domain_normalized, jurisdiction, license_number, status, source_url, first_seen_at,
        last_confirmed_at, removed_at, mirror_first_seen_at, mirror_updated_at)
      SELECT 'brand' || (i % 997) || '-casino' || i || '.com',
        CASE WHEN k = 0 AND i % 5000 = 11 THEN 'alderney'
             ELSE ${jur.replace('%s', '(i * 7 + k * 3) % 10')} END,
        upper(substr(${jur.replace('%s', '(i * 7 + k * 3) % 10')}, 1, 3)) || '/' || i || '/' || k,
        CASE WHEN (i + k) % 33 = 0 THEN 'suspended' WHEN (i + k) % 97 = 0 THEN 'revoked' ELSE 'active' END,
        'https://registry.example/licence/' || i || '-' || k,
        ${ts(String(firstSyncS - 400 * DAY_S))}, ${ts(String(nowS - DAY_S))},
        CASE WHEN (i + k) % 50 = 0 THEN ${ts(String(nowS - 20 * DAY_S))} END,
        ${ts(String(firstSyncS))}, ${ts(String(firstSyncS))}
      FROM n, k WHERE k = 0 OR i % 5 < 3`);
    // 4.5 payment methods per domain: distinct names (i + 5k) mod 12 for k < 5.
    db.exec(`CREATE TEMP TABLE methods (idx INTEGER PRIMARY KEY, name TEXT, category TEXT)`);
    const insertMethod = db.prepare('INSERT INTO methods VALUES (?, ?, ?)');
    METHODS.forEach(([name, category], idx) => insertMethod.run(idx, name, category));
    db.exec(`${counter(domains)}, k(k) AS (VALUES (0), (1), (2), (3), (4))
      INSERT INTO payment_methods (domain_normalized, normalized_name, category, confidence, first_seen_at,
        last_confirmed_at, removed_at, mirror_first_seen_at, mirror_updated_at)
      SELECT 'brand' || (i % 997) || '-casino' || i || '.com', m.name, m.category, 'high',
        ${ts(String(firstSyncS - 200 * DAY_S))}, ${ts(String(nowS - DAY_S))},
        CASE WHEN (i + k) % 40 = 0 THEN ${ts(String(nowS - 10 * DAY_S))} END,
        ${ts(String(firstSyncS))}, ${ts(String(firstSyncS))}
      FROM n, k JOIN methods m ON m.idx = (i + 5 * k) % 12 WHERE k < 4 OR i % 2 = 0`);
    db.exec(`${counter(domains)}, s(s) AS (VALUES ('game_providers'), ('affiliate_programs'), ('geo'), ('related_domains'))
      INSERT INTO domain_sections (domain_normalized, section, data, mirror_first_seen_at, mirror_updated_at)
      SELECT 'brand' || (i % 997) || '-casino' || i || '.com', s,
        '[{"name":"' || s || '","id":' || i || ',"pad":"' || substr(replace(hex(zeroblob(80)), '0', 'y'), 1, 150) || '"}]',
        ${ts(String(firstSyncS))}, ${ts(String(firstSyncS))}
      FROM n, s`);
    // change_log in time order, so ids grow with time as they do in a real mirror.
    db.exec(`INSERT INTO change_log (at, table_name, domain_normalized, item_key, change, old_value, new_value)
      SELECT ${ts(String(firstSyncS))}, 'licenses', domain_normalized, jurisdiction || ':' || license_number, 'added', NULL, 'active'
      FROM licenses ORDER BY rowid`);
    db.exec(`INSERT INTO change_log (at, table_name, domain_normalized, item_key, change, old_value, new_value)
      SELECT ${ts(String(firstSyncS))}, 'payment_methods', domain_normalized, normalized_name, 'added', NULL,
        category || '/' || confidence
      FROM payment_methods ORDER BY rowid`);
    db.exec(`INSERT INTO change_log (at, table_name, domain_normalized, item_key, change, old_value, new_value)
      SELECT at, t, d, key, change, old_value, new_value FROM (
        SELECT ${ts(`${firstSyncS} + (rowid * 3571) % ${90 * DAY_S}`)} AS at, 'licenses' AS t, domain_normalized AS d,
          jurisdiction || ':' || license_number AS key,
          CASE WHEN removed_at IS NOT NULL THEN 'removed' ELSE 'changed' END AS change, 'active' AS old_value, status AS new_value
        FROM licenses WHERE rowid % 25 = 0
        UNION ALL
        SELECT ${ts(`${firstSyncS} + (rowid * 3571) % ${90 * DAY_S}`)}, 'payment_methods', domain_normalized, normalized_name,
          CASE WHEN rowid % 2 = 0 THEN 'removed' ELSE 'changed' END, category || '/high', category || '/medium'
        FROM payment_methods WHERE rowid % 100 = 0)
      ORDER BY at`);
    // Runs, ledger and account answers: one nightly, one snapshot and one enrich run a day, so
    // day d's runs get ids 3d + 1, 3d + 2 and 3d + 3 (the ledger points at the enrich run).
    db.exec(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 89),
      p(p, o) AS (VALUES ('nightly', 0), ('snapshot', 1800), ('enrich', 3600))
      INSERT INTO pipeline_runs (pipeline, status, started_at, finished_at, credits_spent, stats, error, pid)
      SELECT p, CASE WHEN i % 17 = 5 THEN 'failed' WHEN p = 'enrich' AND i % 5 = 0 THEN 'budget_reached' ELSE 'done' END,
        ${ts(`${firstSyncS} + i * ${DAY_S} + o`)}, ${ts(`${firstSyncS} + i * ${DAY_S} + o + 600 + i`)},
        CASE WHEN p = 'enrich' THEN 3000 ELSE 0 END,
        '{"pages":' || (i + 10) || ',"profiles":' || (i * 30) || ',"failures":' || (i % 3) || '}',
        CASE WHEN i % 17 = 5 THEN 'GET /domains failed: 503 after 5 retries' END, 1000 + i
      FROM n, p ORDER BY 3`);
    db.exec(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${90 * 300 - 1})
      INSERT INTO credit_ledger (at, pipeline_run_id, operation, domain, run_id, credits, estimated_credits, entry_key)
      SELECT ${ts(`${firstSyncS} + (i / 300) * ${DAY_S} + 3600 + (i % 300)`)},
        (i / 300) * 3 + 3,
        'enrichment', 'brand' || (i % 997) || '-casino' || i || '.com', i + 1, 10, 10, 'enrichment_run:' || (i + 1)
      FROM n`);
    db.exec(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 89)
      INSERT INTO account_snapshots (at, plan, credits_granted, credits_used, credits_reserved, available_credits)
      SELECT ${ts(`${firstSyncS} + i * ${DAY_S} + 7200`)}, 'business', 1000000, (i + 1) * 3000, 0, 1000000 - (i + 1) * 3000 FROM n`);
    db.exec('COMMIT');
    const count = (sqlText: string) => (db.prepare(sqlText).get() as { n: number }).n;
    const stats = {
      domains: count('SELECT count(*) AS n FROM domains'),
      licences: count('SELECT count(*) AS n FROM licenses'),
      paymentMethods: count('SELECT count(*) AS n FROM payment_methods'),
      changes: count('SELECT count(*) AS n FROM change_log'),
      seconds: Math.round((performance.now() - started) / 100) / 10,
    };
    db.pragma('journal_mode = WAL');
    return stats;
  } finally {
    db.close();
  }
}

/** A name of the generated catalogue, for the benchmark's page addresses. */
export function benchDomainName(i: number): string {
  return `brand${i % 997}-casino${i}.com`;
}

/** The generated jurisdictions (plus the rare `alderney`). */
export const BENCH_JURISDICTIONS: readonly string[] = JURISDICTIONS;
