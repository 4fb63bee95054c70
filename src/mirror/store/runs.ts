import { DomainSyncError } from '../../util/domain-sync-error.js';
import { cachedStatement } from '../database.js';
import type { Mirror } from '../database.js';
import { integerColumn, jsonColumn, keyColumn, requiredTimestamp, textColumn } from './values.js';

/** A `pipeline_runs` row with `stats` parsed. */
export interface PipelineRunRecord {
  id: number;
  pipeline: string;
  status: string;
  started_at: string;
  finished_at: string | null;
  credits_spent: number;
  stats: Record<string, unknown> | null;
  error: string | null;
  pid: number | null;
}

/** Options of {@link startPipelineRun}. */
export interface StartPipelineRunOptions {
  /** Pipeline name: `sync`, `export`, `enrich`, `snapshot`, or a config pipeline name. */
  pipeline: string;
  /** Start time (any ISO 8601 spelling). */
  startedAt: string;
  /** Process id, so an operator can tell a crashed run from a live one. @default null */
  pid?: number;
}

/** Options of {@link finishPipelineRun}. */
export interface FinishPipelineRunOptions {
  /** Final status, e.g. `done`, `budget_reached`, `stopped_by_service`, `failed`. */
  status: string;
  /** End time (any ISO 8601 spelling). */
  finishedAt: string;
  /** Overrides the total kept up to date by `recordCredits`. @default the ledger's running total */
  creditsSpent?: number | bigint;
  /** Counts and other summary data, stored as JSON. @default null (keeps the last stats) */
  stats?: Record<string, unknown>;
  /** Error message (already redacted by the caller). @default null */
  error?: string | null;
}

interface PipelineRunRow extends Omit<PipelineRunRecord, 'stats'> {
  stats: string | null;
}

function toRecord(row: PipelineRunRow): PipelineRunRecord {
  return { ...row, stats: row.stats === null ? null : (JSON.parse(row.stats) as Record<string, unknown>) };
}

/** Records the start of a pipeline run (`status = 'running'`) and returns its id. */
export function startPipelineRun(mirror: Mirror, options: StartPipelineRunOptions): number {
  const pipeline = keyColumn(options.pipeline, 'pipeline');
  const startedAt = requiredTimestamp(options.startedAt, 'startedAt');
  const result = cachedStatement(
    mirror,
    `INSERT INTO pipeline_runs (pipeline, status, started_at, pid) VALUES (?, 'running', ?, ?)`,
  ).run(pipeline, startedAt, options.pid ?? null);
  return Number(result.lastInsertRowid);
}

/**
 * Saves intermediate stats of a running pipeline (for example after each committed batch), so a
 * crashed run still shows how far it got. Throws `ERR_MIRROR_NOT_FOUND` for an unknown id.
 */
export function updatePipelineRunStats(mirror: Mirror, id: number, stats: Record<string, unknown>): void {
  const { changes } = cachedStatement(mirror, 'UPDATE pipeline_runs SET stats = ? WHERE id = ?').run(
    jsonColumn(stats),
    id,
  );
  if (changes === 0) throw notFound(id);
}

/**
 * Records the end of a pipeline run. Throws `ERR_MIRROR_NOT_FOUND` for an unknown id. Finishing
 * twice overwrites the first outcome (the last word wins).
 */
export function finishPipelineRun(mirror: Mirror, id: number, options: FinishPipelineRunOptions): void {
  const status = keyColumn(options.status, 'status');
  const finishedAt = requiredTimestamp(options.finishedAt, 'finishedAt');
  const credits = integerColumn(options.creditsSpent, 'creditsSpent');
  const { changes } = cachedStatement(
    mirror,
    `UPDATE pipeline_runs SET status = ?, finished_at = ?, credits_spent = coalesce(?, credits_spent),
       stats = coalesce(?, stats), error = ? WHERE id = ?`,
  ).run(status, finishedAt, credits, jsonColumn(options.stats), textColumn(options.error, 'error'), id);
  if (changes === 0) throw notFound(id);
}

/** One pipeline run by id, or `undefined`. */
export function getPipelineRun(mirror: Mirror, id: number): PipelineRunRecord | undefined {
  const row = cachedStatement(mirror, 'SELECT * FROM pipeline_runs WHERE id = ?').get(id) as
    PipelineRunRow | undefined;
  return row === undefined ? undefined : toRecord(row);
}

/** The most recent run of each pipeline, by pipeline name. */
export function lastRuns(mirror: Mirror): PipelineRunRecord[] {
  const rows = cachedStatement(
    mirror,
    'SELECT * FROM v_last_pipeline_runs ORDER BY pipeline',
  ).all() as PipelineRunRow[];
  return rows.map(toRecord);
}

/**
 * Runs still marked `running`: live in another process, or left behind by a crash (compare
 * `pid`). The caller decides, and closes a dead one with {@link finishPipelineRun}.
 */
export function listRunningPipelineRuns(mirror: Mirror): PipelineRunRecord[] {
  const rows = cachedStatement(
    mirror,
    `SELECT * FROM pipeline_runs WHERE status = 'running' ORDER BY id`,
  ).all() as PipelineRunRow[];
  return rows.map(toRecord);
}

function notFound(id: number): DomainSyncError {
  return new DomainSyncError('ERR_MIRROR_NOT_FOUND', `pipeline run ${id} is not in the mirror`);
}
