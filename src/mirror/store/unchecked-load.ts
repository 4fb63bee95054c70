import { cachedStatement, inImmediateTransaction } from '../database.js';
import type { Mirror } from '../database.js';
import { peekNextChangeSeq } from './change-seq.js';

/*
 * An export's load into an empty mirror, in one read of its file (migration 0011).
 *
 * A load keeps a bad file out of the mirror: a row that cannot be stored (a value of the wrong
 * type, a line that is not JSON) must leave the mirror as it was. Into a mirror that holds
 * domains, the load reads the whole file and checks every row before it writes the first one
 * (pipelines/export/load.ts). Into an empty mirror it reads the file once: each row is checked as
 * it is written, and a bad row removes everything the load wrote, which in an empty mirror is
 * every row of the catalogue tables stamped with a change sequence value from the load's first
 * (`undoUncheckedLoad`). Reading a large file twice was about a seventh of a first load's time
 * (docs/benchmarks.md "export").
 *
 * The record of such a load ({@link beginUncheckedLoad}) is committed before its first row and
 * deleted with its last ({@link finishUncheckedLoad}). A load killed or stopped part-way leaves it,
 * and the rows of a file not yet checked whole with it; the next pipeline run of any kind removes
 * them first (src/runtime/run.ts), and the next `export` loads the file again, since its export is
 * still `loading`. Nothing else writes the mirror in between: runs hold the mirror lock.
 */

/** What {@link undoUncheckedLoad} removed. */
export interface UndoneLoad {
  exportId: number;
  domains: number;
}

/**
 * Records that the load of export `exportId` starts writing rows it has not checked whole, from
 * the next change sequence value on. Committed at once.
 */
export function beginUncheckedLoad(mirror: Mirror, exportId: number, at: string): void {
  inImmediateTransaction(mirror, () => {
    cachedStatement(
      mirror,
      'INSERT OR REPLACE INTO mirror_unchecked_load (id, export_id, from_change_seq, started_at) VALUES (1, ?, ?, ?)',
    ).run(exportId, peekNextChangeSeq(mirror), at);
  });
}

/** Deletes the record: every row of the file was read and written. Call in the transaction of the last rows. */
export function finishUncheckedLoad(mirror: Mirror): void {
  cachedStatement(mirror, 'DELETE FROM mirror_unchecked_load').run();
}

/** The tables an export's load writes, children before the domains they reference. */
const LOADED_TABLES = ['domain_sections', 'payment_methods', 'licenses', 'change_log', 'domains'] as const;

/**
 * Removes every row the recorded unchecked load wrote (those stamped with a change sequence value
 * from its first on, in the tables a load writes) and the record, in one transaction. Returns
 * what it removed, or undefined when no such load is recorded.
 */
export function undoUncheckedLoad(mirror: Mirror): UndoneLoad | undefined {
  return inImmediateTransaction(mirror, () => {
    const load = cachedStatement(
      mirror,
      'SELECT export_id, from_change_seq FROM mirror_unchecked_load WHERE id = 1',
    ).get() as { export_id: number; from_change_seq: number } | undefined;
    if (load === undefined) return undefined;
    let domains = 0;
    for (const table of LOADED_TABLES) {
      const { changes } = cachedStatement(mirror, `DELETE FROM ${table} WHERE change_seq >= ?`).run(
        load.from_change_seq,
      );
      if (table === 'domains') domains = changes;
    }
    finishUncheckedLoad(mirror);
    return { exportId: load.export_id, domains };
  });
}
