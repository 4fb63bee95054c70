import type { ExportFormat } from '../../src/api/index.js';
import type { Mirror } from '../../src/mirror/database.js';
import { clearSyncState, getSyncState, setSyncState } from '../../src/mirror/store/sync-state.js';

/*
 * The saved intent of a POST /exports. It is written before the POST is sent (`requested`, with
 * the account's used+reserved credits then) and again right after the 202 (`created`, with the
 * export id), in `sync_state` under the parameters' hash. A run that finds a `requested` intent
 * knows an earlier POST has an unknown outcome; the account then tells whether it was billed.
 */

/** `sync_state.pipeline` of export intents. */
const INTENT_PIPELINE = 'export';

/** The saved intent of a POST /exports (sync_state cursor, keyed by the parameters' hash). */
export type ExportIntent =
  | {
      state: 'requested';
      requestedAt: string;
      creditsSpentBefore: number | null;
      estimatedCredits: number | null;
    }
  | { state: 'created'; exportId: number; requestedAt: string; estimatedCredits: number | null };

/** The export's parameters, stored beside the intent for people reading `sync_state`. */
export interface IntentParams {
  filters: Readonly<Record<string, string | number | boolean>>;
  format: ExportFormat;
  fields: readonly string[] | undefined;
}

/** The intent saved for these parameters, or null. */
export function readIntent(mirror: Mirror, paramsHash: string): ExportIntent | null {
  const state = getSyncState(mirror, INTENT_PIPELINE, paramsHash);
  return (state?.cursor as ExportIntent | null | undefined) ?? null;
}

/** Saves (replaces) the intent for these parameters. */
export function saveIntent(
  mirror: Mirror,
  paramsHash: string,
  intent: ExportIntent,
  meta: { params: IntentParams; pipelineRunId: number; at: string },
): void {
  const { filters, format, fields } = meta.params;
  setSyncState(mirror, {
    pipeline: INTENT_PIPELINE,
    scopeKey: paramsHash,
    filters: { filters, format, fields: fields ?? null },
    cursor: intent,
    pipelineRunId: meta.pipelineRunId,
    updatedAt: meta.at,
  });
}

/** Forgets the intent: the POST was refused for sure, or its credits are recorded. */
export function clearIntent(mirror: Mirror, paramsHash: string): void {
  clearSyncState(mirror, INTENT_PIPELINE, paramsHash);
}
