import Database from 'better-sqlite3';
import { DomainSyncError } from '../../util/domain-sync-error.js';
import { cachedStatement, countOf, mirrorInternals } from '../database.js';
import type { Mirror } from '../database.js';
import { logicalType, SNAPSHOT_TABLES, type LogicalColumnType } from './snapshot.js';

/*
 * What `publish` reads from the mirror: the published tables, their columns with logical types,
 * and the rows changed since a change sequence value (migration 0005), all from ONE read
 * snapshot so that the rows sent and the watermark recorded with them agree.
 */

/**
 * The tables `publish` sends by default: the contract's tables, then the two the analyst views
 * read besides them (`change_log` for the licence and payment method changes, `credit_ledger`
 * for the credits per day).
 */
export const PUBLISH_TABLES = [...SNAPSHOT_TABLES, 'change_log', 'credit_ledger'] as const;

/** A table `publish` can send. */
export type PublishTable = (typeof PUBLISH_TABLES)[number];

/** A column of a published table. */
export interface PublishColumn {
  name: string;
  /** What the column holds: `timestamp` (ISO text, UTC), `json` (text), `boolean` (0/1), … */
  type: LogicalColumnType;
  /** Position in the table's primary key (1-based), or 0 when not part of it. */
  pk: number;
}

/** Throws a usage error (exit 2) unless `table` is a table `publish` can send. */
export function assertPublishTable(table: string): asserts table is PublishTable {
  if (!(PUBLISH_TABLES as readonly string[]).includes(table)) {
    throw new DomainSyncError(
      'ERR_USAGE',
      `unknown table "${table}" (publishable tables: ${PUBLISH_TABLES.join(', ')})`,
    );
  }
}

function describe(db: Database.Database, table: PublishTable): PublishColumn[] {
  const info = db
    .prepare(`SELECT name, type, pk FROM pragma_table_info(?) ORDER BY cid`)
    .all(table) as Array<{ name: string; type: string; pk: number }>;
  return info.map((c) => ({ name: c.name, type: logicalType(c.name, c.type), pk: c.pk }));
}

/** The mirror's change counter and identity, as of a read snapshot. */
export interface ChangeState {
  /** The counter: every row changed so far has a change_seq at most this. */
  changeSeq: number;
  /** This mirror file's random id (a copy of the file has the same). */
  mirrorId: string;
}

/**
 * A read snapshot of the mirror for one publish: every call sees the mirror as it was when the
 * reader was opened, whatever other processes write meanwhile. Close it when done.
 */
export interface PublishReader {
  readonly state: ChangeState;
  /** The table's columns in table order, with their logical types. */
  columns(table: PublishTable): PublishColumn[];
  /** How many rows of `table` changed after `afterSeq` (-1: every row). */
  countChanged(table: PublishTable, afterSeq: number): number;
  /**
   * The rows of `table` changed after `afterSeq` (-1: every row), each an array of values in
   * {@link columns} order: integers as `bigint` (exact above 2^53), text and timestamps as the
   * stored strings, booleans as 0n/1n, NULL as null. Streams: memory stays flat whatever the
   * table's size. Only one iterator may be open at a time; finish or `return()` it first.
   */
  rows(table: PublishTable, afterSeq: number): IterableIterator<unknown[]>;
  close(): void;
}

/**
 * Opens a {@link PublishReader} on its own read-only connection (so the mirror's connection stays
 * free, e.g. for the lock's heartbeat, while the caller awaits between rows). Not supported for
 * `:memory:` mirrors.
 */
export function openPublishReader(mirror: Mirror): PublishReader {
  mirrorInternals(mirror); // throws if closed
  const db = new Database(mirror.path, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    // BEGIN is deferred: the snapshot starts with the first read, the counter's.
    db.exec('BEGIN');
    const state = readChangeState(db);
    const columns = new Map<PublishTable, PublishColumn[]>();
    const columnsOf = (table: PublishTable): PublishColumn[] => {
      assertPublishTable(table);
      let cols = columns.get(table);
      if (cols === undefined) columns.set(table, (cols = describe(db, table)));
      return cols;
    };
    return {
      state,
      columns: columnsOf,
      countChanged(table, afterSeq) {
        columnsOf(table);
        const row = db
          .prepare(`SELECT count(*) AS n FROM "${table}" WHERE change_seq > ? AND change_seq <= ?`)
          .get(afterSeq, state.changeSeq) as { n: number };
        return row.n;
      },
      rows(table, afterSeq) {
        const list = columnsOf(table)
          .map((c) => `"${c.name}"`)
          .join(', ');
        // Rows stamped after the snapshot's counter cannot be visible in the snapshot, but the
        // upper bound keeps the rule explicit: this publish covers exactly (afterSeq, changeSeq].
        return db
          .prepare(`SELECT ${list} FROM ${source(table, afterSeq)} WHERE change_seq > ? AND change_seq <= ?`)
          .raw(true)
          .safeIntegers(true)
          .iterate(afterSeq, state.changeSeq) as IterableIterator<unknown[]>;
      },
      close() {
        if (!db.open) return;
        try {
          if (db.inTransaction) db.exec('COMMIT');
        } catch {
          // Only read, so nothing to keep: closing ends the snapshot whatever is still open.
        }
        db.close();
      },
    };
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * The FROM clause of a publish's read of the rows of `table` after `afterSeq` (its count reads
 * the change_seq index where there is one, whatever `afterSeq`). Every row (-1, a first or
 * `--full` publish): one pass over the table in its own order (`NOT INDEXED`). Rows changed after
 * a watermark: SQLite's choice, which is the table's change_seq index where it has one
 * (migration 0009) and a scan where it has none; a first load that was killed part-way leaves
 * some of those indexes set aside until the next run builds them, so this does not insist on
 * them with `INDEXED BY`.
 */
function source(table: PublishTable, afterSeq: number): string {
  return afterSeq < 0 ? `"${table}" NOT INDEXED` : `"${table}"`;
}

function readChangeState(db: Database.Database): ChangeState {
  const row = db.prepare('SELECT value, mirror_id FROM mirror_change_seq WHERE id = 1').get() as
    { value: number; mirror_id: string } | undefined;
  if (row === undefined) {
    throw new DomainSyncError('ERR_MIRROR_OPEN', 'the mirror has no change counter (migration 0005 missing)');
  }
  return { changeSeq: row.value, mirrorId: row.mirror_id };
}

/** The mirror's change counter and identity now (for `status`). */
export function changeState(mirror: Mirror): ChangeState {
  const row = cachedStatement(
    mirror,
    'SELECT value, mirror_id FROM mirror_change_seq WHERE id = 1',
  ).get() as {
    value: number;
    mirror_id: string;
  };
  return { changeSeq: row.value, mirrorId: row.mirror_id };
}

/**
 * Rows of `tables` changed after each table's `afterSeq` (a table missing from `afterSeq` counts
 * whole): how far a destination is behind the mirror, for `status`. Each count is read from the
 * table's change_seq index where it has one (migration 0009); the others are small.
 */
export function rowsChangedSince(
  mirror: Mirror,
  afterSeq: Readonly<Record<string, number>>,
  tables: readonly PublishTable[] = PUBLISH_TABLES,
): number {
  let total = 0;
  for (const table of tables) {
    assertPublishTable(table);
    total += countOf(
      mirror,
      `SELECT count(*) AS n FROM "${table}" WHERE change_seq > ?`,
      afterSeq[table] ?? -1,
    );
  }
  return total;
}
