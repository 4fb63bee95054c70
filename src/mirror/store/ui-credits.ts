import { cachedStatement } from '../database.js';
import type { Mirror } from '../database.js';
import type { AccountSnapshotRecord } from './credits.js';

/*
 * Reads of the dashboard's Credits page (docs/ui.md): the ledger by UTC day and pipeline, its
 * entries newest first, and the account answers recorded by `account`, `enrich` and `export`.
 * Time windows go through the `credit_ledger_at` index.
 */

/** Credits of one UTC day and one pipeline (`(none)` outside a run). */
export interface SpendPerDayRow {
  day: string;
  pipeline: string;
  credits: number;
  entries: number;
}

/** Ledger totals per UTC day and pipeline, for entries at or after `since` (ISO 8601), oldest first. */
export function spendPerDay(mirror: Mirror, since: string): SpendPerDayRow[] {
  return cachedStatement(
    mirror,
    `SELECT substr(c.at, 1, 10) AS day, coalesce(r.pipeline, '(none)') AS pipeline,
            sum(c.credits) AS credits, count(*) AS entries
     FROM credit_ledger c LEFT JOIN pipeline_runs r ON r.id = c.pipeline_run_id
     WHERE c.at >= ? GROUP BY 1, 2 ORDER BY 1, 2`,
  ).all(since) as SpendPerDayRow[];
}

/** Ledger totals per pipeline since `since` (ISO 8601), or over the whole ledger when null. */
export function spendPerPipeline(
  mirror: Mirror,
  since: string | null,
): Array<{ pipeline: string; credits: number; entries: number }> {
  const sqlText =
    since === null
      ? `SELECT coalesce(r.pipeline, '(none)') AS pipeline, sum(c.credits) AS credits, count(*) AS entries
         FROM credit_ledger c LEFT JOIN pipeline_runs r ON r.id = c.pipeline_run_id GROUP BY 1 ORDER BY 2 DESC, 1`
      : `SELECT coalesce(r.pipeline, '(none)') AS pipeline, sum(c.credits) AS credits, count(*) AS entries
         FROM credit_ledger c LEFT JOIN pipeline_runs r ON r.id = c.pipeline_run_id
         WHERE c.at >= ? GROUP BY 1 ORDER BY 2 DESC, 1`;
  const statement = cachedStatement(mirror, sqlText);
  return (since === null ? statement.all() : statement.all(since)) as Array<{
    pipeline: string;
    credits: number;
    entries: number;
  }>;
}

/** A ledger entry as the Credits page lists it, with the pipeline of its run. */
export interface LedgerEntryRow {
  id: number;
  at: string;
  pipeline: string | null;
  pipeline_run_id: number | null;
  operation: string;
  domain: string | null;
  export_id: number | null;
  run_id: number | null;
  credits: number;
  estimated_credits: number | null;
  note: string | null;
}

/** Ledger entries newest first (by id), `limit` + 1 rows when there is a next page. */
export function ledgerEntries(
  mirror: Mirror,
  options: { beforeId?: number | null; limit: number },
): LedgerEntryRow[] {
  return cachedStatement(
    mirror,
    `SELECT c.id, c.at, r.pipeline, c.pipeline_run_id, c.operation, c.domain, c.export_id, c.run_id,
            c.credits, c.estimated_credits, c.note
     FROM credit_ledger c LEFT JOIN pipeline_runs r ON r.id = c.pipeline_run_id
     WHERE c.id < ? ORDER BY c.id DESC LIMIT ?`,
  ).all(options.beforeId ?? Number.MAX_SAFE_INTEGER, options.limit + 1) as LedgerEntryRow[];
}

/** The newest `limit` account answers, newest first. */
export function recentAccountSnapshots(mirror: Mirror, limit: number): AccountSnapshotRecord[] {
  return cachedStatement(
    mirror,
    `SELECT id, at, plan, credits_granted, credits_used, credits_reserved, available_credits, pipeline_run_id
     FROM account_snapshots ORDER BY at DESC, id DESC LIMIT ?`,
  ).all(limit) as AccountSnapshotRecord[];
}
