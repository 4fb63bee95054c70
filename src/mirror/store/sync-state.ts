import { cachedStatement, inTransaction } from '../database.js';
import type { Mirror } from '../database.js';
import { canonicalJson, jsonColumn, keyColumn, requiredTimestamp } from './values.js';

/** A `sync_state` entry: where a pipeline stopped, for one filter set. */
export interface SyncState {
  pipeline: string;
  scopeKey: string;
  /** The filter set this scope stands for, as given to {@link setSyncState}. */
  filters: Record<string, unknown> | null;
  /** E.g. the highest `last_enriched_at` fully committed (sync's `enriched_after` watermark). */
  watermark: string | null;
  /** Resumable cursor, any JSON. */
  cursor: unknown;
  pipelineRunId: number | null;
  updatedAt: string;
}

/** What {@link setSyncState} writes. `undefined` keeps the stored value; `null` clears it. */
export interface SetSyncStateOptions {
  pipeline: string;
  scopeKey: string;
  filters?: Record<string, unknown> | null;
  watermark?: string | null;
  cursor?: unknown;
  pipelineRunId?: number | null;
  /** Time of the update (any ISO 8601 spelling). */
  updatedAt: string;
}

/**
 * The scope key of a filter set: canonical JSON (keys sorted, undefined dropped), so the same
 * filters in any order share one watermark, and `{}` / `undefined` is the unfiltered scope `{}`.
 * Readable on purpose: an operator can see in `sync_state` which filters a row is for.
 */
export function scopeKeyFor(filters: Readonly<Record<string, unknown>> | undefined): string {
  return canonicalJson(filters ?? {});
}

interface SyncStateRow {
  pipeline: string;
  scope_key: string;
  filters: string | null;
  watermark: string | null;
  cursor: string | null;
  pipeline_run_id: number | null;
  updated_at: string;
}

/** The state of `pipeline` for `scopeKey`, or `undefined` when none was saved. */
export function getSyncState(mirror: Mirror, pipeline: string, scopeKey: string): SyncState | undefined {
  const row = cachedStatement(mirror, 'SELECT * FROM sync_state WHERE pipeline = ? AND scope_key = ?').get(
    pipeline,
    scopeKey,
  ) as SyncStateRow | undefined;
  if (row === undefined) return undefined;
  return {
    pipeline: row.pipeline,
    scopeKey: row.scope_key,
    filters: row.filters === null ? null : (JSON.parse(row.filters) as Record<string, unknown>),
    watermark: row.watermark,
    cursor: row.cursor === null ? null : (JSON.parse(row.cursor) as unknown),
    pipelineRunId: row.pipeline_run_id,
    updatedAt: row.updated_at,
  };
}

/**
 * Saves the state of a pipeline for one scope (merge: fields left `undefined` keep their stored
 * values). Call it only after the rows the watermark covers are committed.
 * The watermark is stored exactly as given.
 */
export function setSyncState(mirror: Mirror, state: SetSyncStateOptions): void {
  const pipeline = keyColumn(state.pipeline, 'pipeline');
  const scopeKey = keyColumn(state.scopeKey, 'scopeKey');
  const updatedAt = requiredTimestamp(state.updatedAt, 'updatedAt');
  inTransaction(mirror, () => {
    const old = cachedStatement(mirror, 'SELECT * FROM sync_state WHERE pipeline = ? AND scope_key = ?').get(
      pipeline,
      scopeKey,
    ) as SyncStateRow | undefined;
    cachedStatement(
      mirror,
      `INSERT INTO sync_state (pipeline, scope_key, filters, watermark, cursor, pipeline_run_id, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (pipeline, scope_key) DO UPDATE SET filters = excluded.filters, watermark = excluded.watermark,
         cursor = excluded.cursor, pipeline_run_id = excluded.pipeline_run_id, updated_at = excluded.updated_at`,
    ).run(
      pipeline,
      scopeKey,
      state.filters === undefined ? (old?.filters ?? null) : jsonColumn(state.filters),
      state.watermark === undefined ? (old?.watermark ?? null) : state.watermark,
      state.cursor === undefined
        ? (old?.cursor ?? null)
        : state.cursor === null
          ? null
          : jsonColumn(state.cursor),
      state.pipelineRunId === undefined ? (old?.pipeline_run_id ?? null) : state.pipelineRunId,
      updatedAt,
    );
  });
}

/** Removes the state of one scope (e.g. `sync --full` starting over). Returns whether a row existed. */
export function clearSyncState(mirror: Mirror, pipeline: string, scopeKey: string): boolean {
  return (
    cachedStatement(mirror, 'DELETE FROM sync_state WHERE pipeline = ? AND scope_key = ?').run(
      pipeline,
      scopeKey,
    ).changes > 0
  );
}
