/** How a pipeline ended (STYLE.md §3): a failed item is data, not an exception. */
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
