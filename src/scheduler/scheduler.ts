import type { Logger } from '../log/logger.js';
import type { RunResult } from '../runtime/run-result.js';
import { systemClock, isoFromMs, type Clock } from '../util/time.js';
import { checkCronExpression, createCronTask, lastOccurrenceBetween, type CronTask } from './cron.js';

/** A pipeline `schedule` runs: `pipelines.NAME` with a non-null `schedule`. */
export interface ScheduledPipeline {
  name: string;
  /** Cron expression: 5 fields, or 6 with seconds first. */
  schedule: string;
  /** IANA time zone, or null for the machine's. */
  timezone: string | null;
  /** What to do at start about a time missed while the scheduler was not running. */
  catchUp: 'none' | 'once';
}

/** Why a run was started. */
export type RunReason = 'scheduled' | 'catch-up';

/** Options of {@link PipelineScheduler}. */
export interface PipelineSchedulerOptions {
  pipelines: readonly ScheduledPipeline[];
  /** Runs one named pipeline to its end; the scheduler never runs a pipeline twice at once. */
  run(name: string, reason: RunReason): Promise<RunResult<object>>;
  /** When the pipeline last started (epoch ms), from `pipeline_runs`; null when it never ran. */
  lastStartedAt(name: string): number | null;
  logger: Logger;
  /** @default Date.now */
  clock?: Clock;
}

/** Counters of one scheduled pipeline, for the final summary. */
export interface ScheduledPipelineStats {
  name: string;
  schedule: string;
  timezone: string | null;
  /** Runs started (scheduled and catch-up). */
  runs: number;
  /** Ticks skipped because the previous run of this pipeline was still going. */
  skippedOverlaps: number;
  /** Status of the last run that ended, with its run id. */
  last: { status: string; runId: string | number | null; error?: { code: string; message: string } } | null;
}

/**
 * Checks every scheduled pipeline's cron expression and time zone. Returns one issue per
 * problem, naming the key (`pipelines.nightly.schedule: not a valid cron expression …`).
 */
export function checkSchedules(pipelines: readonly ScheduledPipeline[]): string[] {
  return pipelines.flatMap((p) =>
    checkCronExpression(p.schedule, p.timezone).map(
      (problem) =>
        `pipelines.${p.name}.${problem.startsWith('unknown time zone') ? 'timezone' : 'schedule'}: ${problem}`,
    ),
  );
}

/**
 * Runs named pipelines on their cron expressions (node-cron, through `./cron.ts`).
 *
 * - Never overlaps a pipeline with itself: a tick that comes while the previous run of the same
 *   pipeline is still going is skipped and logged (`skipped: still running`), not queued.
 *   Different pipelines may start side by side; the mirror lock then serialises them.
 * - {@link start} logs the next run times of every pipeline and applies the catch-up policy:
 *   with `catchUp: 'once'`, when a scheduled time passed between the pipeline's last start
 *   (from `pipeline_runs`) and now, the pipeline runs once right away. A pipeline that never
 *   ran is not caught up (a fresh install waits for its first time).
 * - {@link stop} stops the ticks; {@link idle} resolves when the runs in flight have ended (they
 *   stop at a safe point when the signal given to `run` aborts: that is the caller's part).
 * - Never throws from a tick: a run that throws is logged as an error and counted.
 */
export class PipelineScheduler {
  private readonly options: PipelineSchedulerOptions;
  private readonly clock: Clock;
  private readonly tasks = new Map<string, CronTask>();
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly counters = new Map<string, ScheduledPipelineStats>();
  private stopped = false;

  constructor(options: PipelineSchedulerOptions) {
    this.options = options;
    this.clock = options.clock ?? systemClock;
    for (const p of options.pipelines) {
      this.counters.set(p.name, {
        name: p.name,
        schedule: p.schedule,
        timezone: p.timezone,
        runs: 0,
        skippedOverlaps: 0,
        last: null,
      });
    }
  }

  /** Starts every task, logs the next run times, and starts catch-up runs. */
  start(): void {
    const { logger } = this.options;
    for (const p of this.options.pipelines) {
      const taskLogger = logger.child({ pipeline: p.name });
      const task = createCronTask(p.schedule, () => this.launch(p.name, 'scheduled'), {
        name: p.name,
        timezone: p.timezone,
        logger: taskLogger,
      });
      this.tasks.set(p.name, task);
      task.start();
      taskLogger.info('scheduled', {
        schedule: p.schedule,
        timezone: p.timezone ?? 'local',
        catchUp: p.catchUp,
        nextRuns: task.nextRuns(3).map((d) => d.toISOString()),
      });
    }
    for (const p of this.options.pipelines) {
      if (p.catchUp !== 'once') continue;
      const last = this.options.lastStartedAt(p.name);
      if (last === null) continue;
      const missed = lastOccurrenceBetween(p.schedule, p.timezone, last, this.clock());
      if (missed === null) continue;
      logger.info('catching up a missed run', {
        pipeline: p.name,
        missedAt: isoFromMs(missed),
        lastStartedAt: isoFromMs(last),
      });
      this.launch(p.name, 'catch-up');
    }
  }

  /** Stops every task: no new run starts. Runs in flight go on; see {@link idle}. Idempotent. */
  stop(): void {
    this.stopped = true;
    for (const task of this.tasks.values()) task.destroy();
    this.tasks.clear();
  }

  /** Resolves when no run is in flight. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight.values());
  }

  /** Names of the pipelines running now. */
  running(): string[] {
    return [...this.inFlight.keys()];
  }

  /** Counters per pipeline, in config order. */
  stats(): ScheduledPipelineStats[] {
    return [...this.counters.values()].map((s) => ({ ...s }));
  }

  /** The next run times of a pipeline (empty once stopped). */
  nextRuns(name: string, count = 1): Date[] {
    return this.tasks.get(name)?.nextRuns(count) ?? [];
  }

  private launch(name: string, reason: RunReason): void {
    const logger = this.options.logger.child({ pipeline: name });
    const counters = this.counters.get(name);
    if (this.stopped || counters === undefined) return;
    const running = this.inFlight.get(name);
    if (running !== undefined) {
      counters.skippedOverlaps += 1;
      logger.warn('skipped: still running', { reason, skippedOverlaps: counters.skippedOverlaps });
      return;
    }
    counters.runs += 1;
    logger.info('starting scheduled run', { reason });
    // Through a promise so that even a synchronous throw becomes a logged failure.
    const done = Promise.resolve()
      .then(() => this.options.run(name, reason))
      .then(
        (result) => {
          counters.last = {
            status: result.status,
            runId: result.runId,
            ...(result.error ? { error: result.error } : {}),
          };
          const level = result.status === 'failed' ? 'error' : result.status === 'done' ? 'info' : 'warn';
          logger[level]('scheduled run ended', {
            reason,
            status: result.status,
            runId: result.runId,
            ...(result.error ? { error: result.error } : {}),
            next: this.nextRuns(name)[0]?.toISOString() ?? null,
          });
        },
        (error: unknown) => {
          counters.last = { status: 'failed', runId: null };
          logger.error('scheduled run threw', { reason, error });
        },
      )
      .finally(() => this.inFlight.delete(name));
    this.inFlight.set(name, done);
  }
}
