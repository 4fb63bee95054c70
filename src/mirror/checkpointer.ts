import type Database from 'better-sqlite3';
import type { Mirror } from './database.js';
import { mirrorInternals } from './database.js';

/*
 * WAL checkpoints during bulk writes (an export load). With SQLite's default auto-checkpoint,
 * every ~4 MB of WAL the committing statement copies the WAL into the database file and fsyncs
 * both; during a bulk write that is raised to ~40 MB, so there are a tenth as many checkpoints.
 * They stay on the writing connection, between its own transactions, so each one copies the
 * whole WAL and the next transaction starts it again from the beginning. (This replaced a
 * checkpointer thread with its own connection, which never caught up with a writer that commits
 * one batch after another: its WAL grew without bound.) The sync's writer thread does the same
 * (src/mirror/profile-writer-worker.ts), every ~120 MB ({@link WRITER_AUTOCHECKPOINT_BYTES}).
 */

/** SQLite's default `wal_autocheckpoint` (pages), restored after a bulk write. */
const DEFAULT_AUTOCHECKPOINT_PAGES = 1000;

/** WAL bytes between two checkpoints during {@link withBulkAutocheckpoint} (10,000 pages of 4 KiB). */
export const BULK_AUTOCHECKPOINT_BYTES = 40_960_000;

/**
 * WAL bytes between two checkpoints of the sync's writer thread
 * (src/mirror/profile-writer-worker.ts), where SQLite's auto-checkpoint runs off the fetching
 * thread and keeps the WAL bounded. Each checkpoint copies the WAL into the database file and
 * waits for two fsyncs while fetching runs ahead only as far as maxPending lets it. A page that
 * several commits rewrite between two checkpoints is copied once, so a longer interval writes less
 * to disk, but a longer checkpoint holds the writer longer. In alternating first syncs, ~120 MB
 * wrote 12–15 % less than ~40 MB at about the same rate; ~400 MB wrote a fifth less but was
 * slower at concurrency 32 with the service 10 ms away (figures: docs/benchmarks.md "sync").
 */
export const WRITER_AUTOCHECKPOINT_BYTES = 3 * BULK_AUTOCHECKPOINT_BYTES;

/**
 * `wal_autocheckpoint` (pages) for ~`bytes` of WAL (by default {@link BULK_AUTOCHECKPOINT_BYTES})
 * at the page size of `sqlite`'s database: by default 10,000 pages in a mirror of 4 KiB pages,
 * 5,000 in one of 8 KiB. Never fewer than SQLite's default 1,000.
 */
export function bulkAutocheckpointPages(
  sqlite: Database.Database,
  bytes: number = BULK_AUTOCHECKPOINT_BYTES,
): number {
  const pageSize = sqlite.pragma('page_size', { simple: true }) as number;
  return Math.max(DEFAULT_AUTOCHECKPOINT_PAGES, Math.round(bytes / pageSize));
}

/**
 * Runs `fn` (a long bulk write on `mirror`, one transaction after another) with SQLite's own
 * auto-checkpoint every ~40 MB of WAL ({@link bulkAutocheckpointPages}) instead of every 1,000 pages: the
 * writing connection checkpoints between its own transactions, so the WAL is reused and stays
 * around 40 MB (measured: 57–78 MB during a 200,000-row export load, where the checkpointer
 * thread this replaced let it reach 5.6 GB beside a 1.6 GB mirror).
 */
export async function withBulkAutocheckpoint<T>(mirror: Mirror, fn: () => Promise<T>): Promise<T> {
  if (mirror.readonly || mirror.path === ':memory:') return fn();
  const { sqlite } = mirrorInternals(mirror);
  sqlite.pragma(`wal_autocheckpoint = ${bulkAutocheckpointPages(sqlite)}`);
  try {
    return await fn();
  } finally {
    if (sqlite.open) sqlite.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT_PAGES}`);
  }
}

/** Commits of a bulk write whose transactions span several batches; see {@link bulkCommits}. */
export interface BulkCommits {
  /**
   * Runs one batch's writes (`fn`; a transaction it opens nests as a savepoint) in the open
   * transaction, opening one if needed, and commits once `rowsPerCommit` rows were written since
   * the last commit. If `fn` throws, the batches before it are committed (when SQLite has not
   * rolled the transaction back itself) and the error is rethrown.
   */
  write<T>(rows: number, fn: () => T): T;
  /** Commits what is open, if anything. */
  commit(): void;
}

/**
 * One transaction per `rowsPerCommit` rows for a bulk write done in smaller batches (an export
 * load): memory holds one batch, and the commit, with the WAL frames of every page the batches
 * touched, comes once per several batches. Pages of a large mirror's indexes are touched by
 * nearly every batch, so each commit of 2,000 rows rewrote most of them (load rates:
 * docs/benchmarks.md "export"). A crash loses at most the open transaction's whole batches.
 */
export function bulkCommits(mirror: Mirror, rowsPerCommit: number): BulkCommits {
  const { sqlite } = mirrorInternals(mirror);
  let open = false;
  let rows = 0;
  const commit = (): void => {
    if (open && sqlite.inTransaction) sqlite.exec('COMMIT');
    open = false;
    rows = 0;
  };
  return {
    write(count, fn) {
      // Inside a transaction someone else holds, the batch is theirs to commit.
      if (!open && sqlite.inTransaction) return fn();
      if (!open) {
        sqlite.exec('BEGIN IMMEDIATE');
        open = true;
      }
      let result;
      try {
        result = fn();
      } catch (error) {
        commit();
        throw error;
      }
      rows += count;
      if (rows >= rowsPerCommit) commit();
      return result;
    },
    commit,
  };
}
