import { setImmediate as nextTurn } from 'node:timers/promises';
import { DomainSyncError } from '../../util/domain-sync-error.js';
import { cachedStatement, inImmediateTransaction, messageOf, mirrorInternals } from '../database.js';
import type { Mirror } from '../database.js';
import { mirrorLoaded, readBaseline } from './baseline.js';
import { mirrorHasDomains } from './domains.js';

/*
 * Indexes set aside while a first load (a sync, or an export's load: pipelines/first-load.ts)
 * fills a mirror the catalogue was never loaded into (migration 0006).
 *
 * Each row a sync writes goes into its table and into every index of that table, and on a large
 * mirror most of those index inserts land on pages that are not in the cache. Into an empty
 * mirror it is cheaper to write the rows alone and build each index once at the end, from one
 * sorted pass over its table. Bulk loaders do the same (pg_restore builds indexes after the data).
 *
 * Only the indexes of the licence, payment-method and change_log tables are set aside: those
 * tables have several rows per domain and small rows, so an index is quick to build from them.
 * The `domains` indexes stay: a domain row carries the raw profile, so each of its indexes would
 * be built from a scan of the largest table, and the run's end would wait for it. Measured ad hoc
 * on 100,000 profiles (2026-11-25): the sync's store functions cost 211 µs per profile with every
 * index kept up to date, 139 µs with these set aside, and 134 µs with every index set aside;
 * building these took 1.6 s of CPU (16 µs per profile), building all of them 2.5 s, of which the
 * `domains` ones 0.9 s. docs/benchmarks.md "sync" has the current figures.
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
 * slowly.
 */

/** The tables whose secondary indexes a first load sets aside (see above for why these). */
export const BULK_LOADED_TABLES = ['licenses', 'payment_methods', 'change_log'] as const;

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

/**
 * Before a mirror's first load ({@link isFirstLoad}), drops the secondary indexes of
 * {@link BULK_LOADED_TABLES} and records their definitions, in one transaction; returns their
 * names (none for any other load, or when the indexes are already set aside). The caller must
 * hold the mirror lock and build them again with {@link buildDeferredIndexes} once the load is
 * written.
 */
export function deferIndexesForBulkLoad(mirror: Mirror, at: string): string[] {
  const { sqlite } = mirrorInternals(mirror);
  return inImmediateTransaction(mirror, () => {
    if (!isFirstLoad(mirror)) return [];
    const placeholders = BULK_LOADED_TABLES.map(() => '?').join(', ');
    const indexes = (
      sqlite
        .prepare(
          `SELECT name, tbl_name AS table_name, sql FROM sqlite_master
           WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN (${placeholders}) ORDER BY name`,
        )
        .all(...BULK_LOADED_TABLES) as IndexDefinition[]
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
