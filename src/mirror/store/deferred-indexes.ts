import { setImmediate as nextTurn } from 'node:timers/promises';
import { DomainSyncError } from '../../util/domain-sync-error.js';
import { cachedStatement, countOf, inImmediateTransaction, messageOf, mirrorInternals } from '../database.js';
import type { Mirror } from '../database.js';
import { mirrorLoaded, readBaseline } from './baseline.js';
import { mirrorHasDomains } from './domains.js';

/*
 * Indexes set aside while a first load (a sync, or an export's load: pipelines/first-load.ts)
 * fills a mirror the catalogue was never loaded into (migration 0006), or while an export's load
 * brings at least as many new domains as the mirror holds ({@link isBulkLoad}).
 *
 * Each row a sync writes goes into its table and into every index of that table, and on a large
 * mirror most of those index inserts land on pages that are not in the cache. Into an empty
 * mirror it is cheaper to write the rows alone and build each index once at the end, from one
 * sorted pass over its table. Bulk loaders do the same (pg_restore builds indexes after the data).
 *
 * Every secondary index of the licence, payment-method and change_log tables is set aside: those
 * tables have several rows per domain and small rows, so an index is quick to build from them.
 * Of the `domains` indexes, five are set aside (DEFERRED_DOMAIN_INDEXES): those whose keys a load
 * writes in no order (company and operator names, the service's and the listing's enrichment
 * dates, the name search), each insert on a page of its own once the mirror is large, and each
 * commit writing the pages its batch touched again. Each is built from a scan of the widest table (a
 * domain row carries its raw profile): about 0.1 s per 100,000 domains. The other `domains`
 * indexes stay. `domains_profile_due` is read `INDEXED BY` by the sync itself
 * (store/profiles-due.ts), whose query would fail without it. The rest take their keys at the
 * right-hand edge (change_seq, the listing date, the null unlisted date) or hold no row of a
 * first load (the partial ones).
 *
 * Measured ad hoc on 2026-11-28 (Node 24, 2 cores): the sync's store functions alone (bench/
 * sync-writer-floor.ts `writer-alone`, the builds included) cost 140 and 141 µs per profile at
 * 100,000 profiles with only the other tables' indexes set aside, 128 and 127 with four of these
 * as well, 126 and 135 with every `domains` index but the due one. Full syncs of 1,000,000
 * domains on loopback (one pair): the writer thread 182 against 146 µs per profile, 3,904
 * against 4,647 profiles/s, with four of them. `domains_last_enriched_at` joined them later that
 * day: at 100,000 domains it made no difference beyond the spread, but at 1,000,000 (three
 * alternating pairs) the writer thread used 148, 143 and 141 µs per profile against 155, 175 and
 * 158, the sync made 4,617, 4,615 and 4,707 profiles/s against 4,318, 3,768 and 4,206, and it
 * wrote 27.4 and 27.7 GB to disk against 34.9 and 34.9 (the last two pairs). The cost is the
 * build at the end: at 100,000 domains, concurrency 32 and the service 10 ms away, 2,469 and
 * 2,450 profiles/s with the first four set aside against 2,497 and 2,483 with none of them; with the
 * fifth as well, 2,409–2,448 against 2,414–2,427 with four (three pairs). docs/benchmarks.md
 * "sync" has the current figures.
 *
 * Only explicit, non-unique indexes are set aside: the primary keys and unique constraints stay,
 * since the upserts look rows up by them and rely on them for their conflict targets. Nothing the
 * sync reads while it loads uses the indexes set aside; it builds them before it reads anything
 * after the load.
 *
 * A definition is recorded in `deferred_indexes` in the same transaction that drops its index,
 * and deleted in the same transaction that builds it again, so a process killed in between leaves
 * the definitions behind. The next command that takes the mirror lock builds them
 * (src/runtime/run.ts). A reader meanwhile (the dashboard, `status`) gets the same answers, more
 * slowly: its queries name an index only while it exists (database.ts indexedBy).
 */

/** The tables whose secondary indexes a first load sets aside, all of them (see above for why these). */
export const BULK_LOADED_TABLES = ['licenses', 'payment_methods', 'change_log'] as const;

/**
 * The `domains` indexes a first load sets aside as well (see above for why these and not the
 * others). Never `domains_profile_due`, which the sync reads `INDEXED BY` while it loads.
 */
export const DEFERRED_DOMAIN_INDEXES = [
  'domains_company_name',
  'domains_last_enriched_at',
  'domains_listing_last_enriched_at',
  'domains_operator_name',
  'domains_search',
] as const;

interface IndexDefinition {
  name: string;
  table_name: string;
  sql: string;
}

/**
 * Whether a load starting now is the mirror's first: the catalogue was never loaded into it
 * (baseline.ts mirrorLoaded: it is empty, or holds only domains `enrich` wrote), and it is not
 * the resumption of a first load that already wrote domains (whose baseline is still open).
 */
function isFirstLoad(mirror: Mirror): boolean {
  if (mirrorLoaded(mirror)) return false;
  return readBaseline(mirror) === undefined || !mirrorHasDomains(mirror);
}

/** Options of {@link deferIndexesForBulkLoad}. */
export interface BulkLoadOptions {
  /**
   * Domains the load brings that the mirror does not hold yet, when the caller knows (an export's
   * load into a mirror that has domains counts them while it checks the file). A load that brings
   * at least as many as the mirror holds has its indexes set aside as well: see {@link isBulkLoad}.
   */
  newDomains?: number;
}

/**
 * Whether a load into a mirror that holds domains is large enough to set the indexes aside: it
 * brings at least as many new domains as the mirror holds, so at least half of each index's
 * entries after it are the load's. Building an index from a sorted pass over its table costs a
 * fraction of inserting the same entries one by one in no order (the first-load figures above),
 * so rebuilding the mirror's own entries along with the load's is the cheaper way. An export of
 * the catalogue loaded into a mirror that a filtered sync filled is such a load. An export of
 * domains the mirror already holds is not, and keeps its indexes.
 */
function isBulkLoad(mirror: Mirror, options: BulkLoadOptions): boolean {
  if (options.newDomains === undefined || options.newDomains <= 0) return false;
  return options.newDomains >= countOf(mirror, 'SELECT count(*) AS n FROM domains');
}

/**
 * Before a mirror's first load ({@link isFirstLoad}), or a load that brings at least as many new
 * domains as the mirror holds ({@link isBulkLoad}), drops the secondary indexes of
 * {@link BULK_LOADED_TABLES} and the indexes {@link DEFERRED_DOMAIN_INDEXES} and records their
 * definitions, in one transaction; returns their names (none for any other load, or when the
 * indexes are already set aside). The caller must hold the mirror lock and build them again with
 * {@link buildDeferredIndexes} once the load is written.
 */
export function deferIndexesForBulkLoad(mirror: Mirror, at: string, options: BulkLoadOptions = {}): string[] {
  const { sqlite } = mirrorInternals(mirror);
  return inImmediateTransaction(mirror, () => {
    if (!isFirstLoad(mirror) && !isBulkLoad(mirror, options)) return [];
    const tables = BULK_LOADED_TABLES.map(() => '?').join(', ');
    const domainIndexes = DEFERRED_DOMAIN_INDEXES.map(() => '?').join(', ');
    const indexes = (
      sqlite
        .prepare(
          `SELECT name, tbl_name AS table_name, sql FROM sqlite_master
           WHERE type = 'index' AND sql IS NOT NULL
             AND (tbl_name IN (${tables}) OR (tbl_name = 'domains' AND name IN (${domainIndexes})))
           ORDER BY name`,
        )
        .all(...BULK_LOADED_TABLES, ...DEFERRED_DOMAIN_INDEXES) as IndexDefinition[]
    ).filter((index) => /^CREATE\s+INDEX\s/i.test(index.sql)); // not UNIQUE: those are constraints
    const record = sqlite.prepare(
      'INSERT INTO deferred_indexes (name, table_name, sql, deferred_at) VALUES (?, ?, ?, ?)',
    );
    for (const index of indexes) {
      record.run(index.name, index.table_name, index.sql, at);
      sqlite.exec(`DROP INDEX "${index.name.replaceAll('"', '""')}"`);
    }
    return indexes.map((index) => index.name);
  });
}

/** Names of the indexes set aside and not built yet. */
export function deferredIndexNames(mirror: Mirror): string[] {
  return (
    cachedStatement(mirror, 'SELECT name FROM deferred_indexes ORDER BY name').all() as Array<{
      name: string;
    }>
  ).map((row) => row.name);
}

/** What {@link buildDeferredIndexes} did. */
export interface BuiltIndexes {
  names: string[];
  ms: number;
}

/**
 * Builds every index set aside, each in its own transaction together with the removal of its
 * definition, and yields to the event loop between them (the lock heartbeat runs on this
 * thread). The sorts spill to temporary files, not memory, so a large index does not raise the
 * process's peak memory. `onBuilt` is told after each one.
 *
 * The sorts run on this thread with the connection's small page cache, as measured best
 * (2026-11-29, better-sqlite3's SQLite, two indexes over 1,500,000 rows, three alternating rounds):
 * 2.6–2.8 s; with `PRAGMA threads = 2`, 2.2–2.6 s of wall time but 3.2–3.7 s of CPU, which the
 * sync's CPU per profile counts; with a 64 MiB cache, which the sorter takes as its run size,
 * 4.6–4.9 s.
 */
export async function buildDeferredIndexes(
  mirror: Mirror,
  onBuilt: (name: string) => void = () => {},
): Promise<BuiltIndexes> {
  const { sqlite } = mirrorInternals(mirror);
  const started = performance.now();
  const pending = sqlite
    .prepare('SELECT name, table_name, sql FROM deferred_indexes ORDER BY name')
    .all() as IndexDefinition[];
  const names: string[] = [];
  if (pending.length === 0) return { names, ms: 0 };
  const tempStore = sqlite.pragma('temp_store', { simple: true }) as number;
  sqlite.pragma('temp_store = FILE');
  try {
    for (const index of pending) {
      try {
        inImmediateTransaction(mirror, () => {
          const exists = sqlite
            .prepare("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?")
            .get(index.name);
          if (exists === undefined) sqlite.exec(index.sql);
          sqlite.prepare('DELETE FROM deferred_indexes WHERE name = ?').run(index.name);
        });
      } catch (error) {
        throw new DomainSyncError(
          'ERR_MIRROR_WRITE',
          `could not build index ${index.name} of ${index.table_name}, set aside while a first load ` +
            `filled the mirror (the next command that takes the mirror lock tries again): ${messageOf(error)}`,
          { cause: error },
        );
      }
      names.push(index.name);
      onBuilt(index.name);
      await nextTurn();
    }
  } finally {
    sqlite.pragma(`temp_store = ${tempStore}`);
  }
  return { names, ms: performance.now() - started };
}
