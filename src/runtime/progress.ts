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
