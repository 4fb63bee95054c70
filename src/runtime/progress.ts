import type { Logger } from '../log/logger.js';
import type { Clock } from '../util/time.js';

/** One progress line: pages listed, profiles fetched, runs finished… */
export interface ProgressTask {
  setTotal(total: number): void;
  increment(by?: number): void;
  done(): void;
}

/**
 * Progress reporting seam: the CLI supplies bars on a terminal; elsewhere it is a no-op and
 * pipelines log progress events at a steady cadence instead.
 */
export interface Progress {
  task(label: string, total: number, unit?: string): ProgressTask;
  stop(): void;
}

const noopTask: ProgressTask = { setTotal() {}, increment() {}, done() {} };

/** Progress that shows nothing. */
export const noopProgress: Progress = {
  task: () => noopTask,
  stop() {},
};

/** How often long work logs its progress where no bar is shown (a cron job's log). */
export const PROGRESS_LOG_INTERVAL_MS = 5_000;

/**
 * A log of progress at a steady cadence, for work that runs long with no bar to show it: each call
 * logs `message` at info level unless the last logged call was less than `intervalMs` ago by
 * `clock`. The first call logs.
 */
export function throttledProgressLog(
  logger: Pick<Logger, 'info'>,
  clock: Clock,
  intervalMs: number = PROGRESS_LOG_INTERVAL_MS,
): (message: string, fields: Record<string, unknown>) => void {
  let lastMs: number | undefined;
  return (message, fields) => {
    const now = clock();
    if (lastMs !== undefined && now - lastMs < intervalMs) return;
    lastMs = now;
    logger.info(message, fields);
  };
}
