import cron, { type ScheduledTask, type TaskOptions } from 'node-cron';
import type { Logger } from '../log/logger.js';

/*
 * The only module that imports node-cron. Behaviours of node-cron 4.6 handled here:
 * `schedule()` starts at once, so tasks are made with `createTask` and started explicitly;
 * `noOverlap` silently skips, so overlap is handled by the scheduler (which logs it); errors are
 * emitted, not thrown, so the task function never throws.
 */

/** The part of a node-cron task the scheduler uses. */
export interface CronTask {
  start(): void;
  /** Stops and unregisters the task; idempotent. */
  destroy(): void;
  /** The next `count` times the expression matches, from now. */
  nextRuns(count: number): Date[];
}

/** Options of {@link createCronTask}. */
export interface CronTaskOptions {
  /** Task name in node-cron's own log lines. */
  name: string;
  /** IANA time zone, or null for the machine's. */
  timezone: string | null;
  /** Receives node-cron's own messages and missed-execution warnings. */
  logger: Logger;
}

/**
 * A stopped node-cron task calling `onTick` at each match of `expression` (5 fields, or 6 with
 * seconds first). `onTick` must not throw; the task does not wait for what it returns.
 */
export function createCronTask(expression: string, onTick: () => void, options: CronTaskOptions): CronTask {
  const taskOptions: TaskOptions = {
    name: options.name,
    logger: cronLogger(options.logger),
    // node-cron warns for a tick missed while the event loop was blocked and does not catch it
    // up; we log it ourselves below, with the pipeline name, instead of its generic warning.
    suppressMissedWarning: true,
    ...(options.timezone === null ? {} : { timezone: options.timezone }),
  };
  const task: ScheduledTask = cron.createTask(expression, () => onTick(), taskOptions);
  task.on('execution:missed', (context) => {
    options.logger.warn('scheduled time missed (event loop blocked); not caught up', {
      scheduledAt: context.date.toISOString(),
    });
  });
  let destroyed = false;
  return {
    start: () => void task.start(),
    destroy: () => {
      if (destroyed) return;
      destroyed = true;
      void task.destroy();
    },
    nextRuns: (count) => task.getNextRuns(count),
  };
}

/**
 * Checks a cron expression and a time zone; returns the problems (empty when both are fine).
 * node-cron accepts an unknown time zone at creation and fails later, so it is checked here.
 */
export function checkCronExpression(expression: string, timezone: string | null): string[] {
  const problems: string[] = [];
  const detail = cron.validateDetailed(expression);
  if (!detail.valid) {
    const reasons = detail.errors.map((e) => `${e.field}: ${e.message}`).join('; ');
    problems.push(`not a valid cron expression "${expression}"${reasons ? ` (${reasons})` : ''}`);
  }
  if (timezone !== null) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    } catch {
      problems.push(`unknown time zone "${timezone}" (use an IANA name like Europe/Berlin)`);
    }
  }
  return problems;
}

/**
 * How far back {@link lastOccurrenceBetween} looks at most: it asks node-cron about every minute
 * of the window, one matching call each, so the window is bounded.
 */
export const MAX_CATCH_UP_LOOKBACK_MS = 31 * 86_400_000;

/**
 * The latest time in `(afterMs, atMs]` matched by `expression` in `timezone`, or null. Looks
 * back at most {@link MAX_CATCH_UP_LOOKBACK_MS} from `atMs`. Used for the catch-up policy: node-cron
 * only computes times after "now", so this walks backwards a minute at a time with the task's
 * own matcher (same time-zone and day-of-week rules as the schedule itself).
 */
export function lastOccurrenceBetween(
  expression: string,
  timezone: string | null,
  afterMs: number,
  atMs: number,
): number | null {
  const floor = Math.max(afterMs, atMs - MAX_CATCH_UP_LOOKBACK_MS);
  if (atMs <= floor) return null;
  const seconds = [...cron.parse(expression).second].sort((a, b) => b - a);
  const first = seconds[seconds.length - 1] ?? 0;
  const task = cron.createTask(expression, () => {}, timezone === null ? {} : { timezone });
  try {
    for (let minute = Math.floor(atMs / 60_000) * 60_000; minute + 59_999 > floor; minute -= 60_000) {
      // Minute, hour and day fields do not depend on the second, so one call rules out a minute.
      if (!task.match(new Date(minute + first * 1000))) continue;
      for (const second of seconds) {
        const at = minute + second * 1000;
        if (at > atMs || at <= floor) continue;
        if (task.match(new Date(at))) return at;
      }
    }
    return null;
  } finally {
    void task.destroy();
  }
}

function cronLogger(logger: Logger): NonNullable<TaskOptions['logger']> {
  const text = (message: string | Error): string => (message instanceof Error ? message.message : message);
  return {
    info: (message) => logger.debug(message),
    warn: (message) => logger.warn(message),
    error: (message, err) => logger.error(text(message), err ? { error: err } : undefined),
    debug: (message) => logger.debug(text(message)),
  };
}
