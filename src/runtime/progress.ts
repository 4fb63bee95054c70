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
 * A steady cadence by `clock`: the function returned says true at most once per `intervalMs`. The
 * first call says true, unless `sinceMs` is given: then the first true comes `intervalMs` after it.
 */
export function progressCadence(
  clock: Clock,
  intervalMs: number = PROGRESS_LOG_INTERVAL_MS,
  sinceMs?: number,
): () => boolean {
  let lastMs = sinceMs;
  return () => {
    const now = clock();
    if (lastMs !== undefined && now - lastMs < intervalMs) return false;
    lastMs = now;
    return true;
  };
}

/**
 * A log of progress at a steady cadence ({@link progressCadence}), for work that runs long with no
 * bar to show it: each call logs `message` at info level when the cadence says so.
 */
export function throttledProgressLog(
  logger: Pick<Logger, 'info'>,
  clock: Clock,
  intervalMs: number = PROGRESS_LOG_INTERVAL_MS,
): (message: string, fields: Record<string, unknown>) => void {
  const due = progressCadence(clock, intervalMs);
  return (message, fields) => {
    if (due()) logger.info(message, fields);
  };
}
