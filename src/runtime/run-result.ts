import { AbortedError } from '../util/domain-sync-error.js';

/** How a pipeline ended; a failed item is data (see {@link ItemFailure}), not an exception. */
export type RunStatus = 'done' | 'budget_reached' | 'stopped_by_service' | 'interrupted' | 'failed';

/** One item that could not be processed (a profile, a run, a row). */
export interface ItemFailure {
  /** What failed: a domain, a run id, an export id. */
  item: string;
  /** Stable error code, e.g. ERR_NOT_FOUND. */
  code: string;
  message: string;
}

/** What every pipeline returns; pipelines never throw for item failures or service stops. */
export interface RunResult<Stats extends object = Record<string, unknown>> {
  pipeline: string;
  /** The `pipeline_runs.id` of this run. */
  runId: string | number | null;
  status: RunStatus;
  startedAt: string;
  finishedAt: string;
  stats: Stats;
  failures: ItemFailure[];
  creditsSpent: number;
  /** Set when status is failed, stopped_by_service or interrupted. */
  error?: { code: string; message: string };
}

/** Error codes that mean "the service stopped us" (exit 3), not "we failed". */
export const SERVICE_STOP_CODES: ReadonlySet<string> = new Set([
  'ERR_AUTH',
  'ERR_QUOTA_EXCEEDED',
  'ERR_INSUFFICIENT_CREDITS',
]);

/**
 * How an error ends a run: an abort is `interrupted`, a rejected key or exhausted credits is
 * `stopped_by_service`, anything else `failed`. The one place this rule lives; pipelines that
 * keep their own stats and failures when stopping use it too.
 */
export function runStatusForError(
  error: unknown,
): Extract<RunStatus, 'interrupted' | 'stopped_by_service' | 'failed'> {
  const code = errorCode(error);
  if (error instanceof AbortedError || code === 'ERR_ABORTED') return 'interrupted';
  return SERVICE_STOP_CODES.has(code) ? 'stopped_by_service' : 'failed';
}

/** The stable code of an error, or `ERR_INTERNAL` for one we did not raise on purpose. */
export function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('ERR_') ? code : 'ERR_INTERNAL';
}
