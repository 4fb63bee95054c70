import { cachedStatement } from '../database.js';
import type { Mirror } from '../database.js';
import type { PipelineRunRecord } from './runs.js';

/* Reads of the dashboard's Runs pages (docs/ui.md). `pipeline_runs` holds one row per run. */

/** Filters and page of {@link listPipelineRuns}. */
export interface ListPipelineRunsOptions {
  pipeline?: string | null;
  status?: string | null;
  /** Only runs with a smaller id (the next page after that id). */
  beforeId?: number | null;
  /** Rows per page. */
  limit: number;
}

interface RunRow extends Omit<PipelineRunRecord, 'stats'> {
  stats: string | null;
}

function toRecord(row: RunRow): PipelineRunRecord {
  let stats: Record<string, unknown> | null = null;
  if (row.stats !== null) {
    try {
      const parsed: unknown = JSON.parse(row.stats);
      stats = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : null;
    } catch {
      stats = null;
    }
  }
  return { ...row, stats };
}

/** Runs newest first (by id), `limit` + 1 rows when there is a next page. */
export function listPipelineRuns(mirror: Mirror, options: ListPipelineRunsOptions): PipelineRunRecord[] {
  const rows = cachedStatement(
    mirror,
    `SELECT * FROM pipeline_runs
     WHERE (@pipeline IS NULL OR pipeline = @pipeline) AND (@status IS NULL OR status = @status)
       AND (@beforeId IS NULL OR id < @beforeId)
     ORDER BY id DESC LIMIT @limit`,
  ).all({
    pipeline: options.pipeline ?? null,
    status: options.status ?? null,
    beforeId: options.beforeId ?? null,
    limit: options.limit + 1,
  }) as RunRow[];
  return rows.map(toRecord);
}

/** Runs that started at or after `since` (ISO 8601), oldest first, at most `limit`. */
export function pipelineRunsSince(mirror: Mirror, since: string, limit: number): PipelineRunRecord[] {
  const rows = cachedStatement(
    mirror,
    `SELECT * FROM (SELECT * FROM pipeline_runs WHERE started_at >= ? ORDER BY started_at DESC, id DESC LIMIT ?)
     ORDER BY started_at, id`,
  ).all(since, limit) as RunRow[];
  return rows.map(toRecord);
}

/** One run by id, or undefined. */
export function pipelineRunById(mirror: Mirror, id: number): PipelineRunRecord | undefined {
  const row = cachedStatement(mirror, 'SELECT * FROM pipeline_runs WHERE id = ?').get(id) as
    RunRow | undefined;
  return row === undefined ? undefined : toRecord(row);
}

/** Pipeline names and run statuses seen in the mirror, for the Runs page's filters. */
export function pipelineRunFacets(mirror: Mirror): { pipelines: string[]; statuses: string[] } {
  const pipelines = cachedStatement(
    mirror,
    'SELECT DISTINCT pipeline AS v FROM pipeline_runs ORDER BY 1',
  ).all() as Array<{
    v: string;
  }>;
  const statuses = cachedStatement(
    mirror,
    'SELECT DISTINCT status AS v FROM pipeline_runs ORDER BY 1',
  ).all() as Array<{
    v: string;
  }>;
  return { pipelines: pipelines.map((r) => r.v), statuses: statuses.map((r) => r.v) };
}

/** Ledger totals of one run by operation. */
export function ledgerOfRun(
  mirror: Mirror,
  runId: number,
): Array<{ operation: string; entries: number; credits: number }> {
  return cachedStatement(
    mirror,
    `SELECT operation, count(*) AS entries, sum(credits) AS credits FROM credit_ledger
     WHERE pipeline_run_id = ? GROUP BY operation ORDER BY operation`,
  ).all(runId) as Array<{ operation: string; entries: number; credits: number }>;
}
