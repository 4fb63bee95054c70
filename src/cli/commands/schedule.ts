import { prepareNamedPipeline, runNamedPipeline, type PreparedPipeline } from '../../../pipelines/named.js';
import { lastRuns } from '../../mirror/store/runs.js';
import { releaseHeldMirrorLocks } from '../../runtime/lock.js';
import { checkSchedules, PipelineScheduler, type ScheduledPipeline } from '../../scheduler/index.js';
import { ConfigError, UsageError } from '../../util/domain-sync-error.js';
import { parseDuration } from '../../util/duration.js';
import { sleep } from '../../util/sleep.js';
import type { CommandContext, CommandResult } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { openStepContext, withLockWait } from './run.js';

interface ScheduleFlags {
  wait?: string;
  stopTimeout?: string;
}

/** How long `schedule` waits for running pipelines after SIGINT/SIGTERM by default. */
export const DEFAULT_STOP_TIMEOUT = '30s';

/**
 * `domain-sync schedule [--wait DURATION] [--stop-timeout DURATION]`: long-running; runs every
 * `pipelines.NAME` that has a `schedule` on its cron expression (see {@link PipelineScheduler}).
 *
 * - Every scheduled pipeline is validated at start (cron expression, time zone, step options):
 *   exit 2 naming the key. No scheduled pipeline at all is exit 2 too.
 * - A scheduled run that finds the mirror locked by another process waits up to `--wait`
 *   (default `lock.wait`), then ends `failed` with `ERR_LOCKED` (logged, nothing recorded);
 *   the next tick tries again.
 * - SIGINT/SIGTERM: no new runs; running steps stop at their next safe point; the process exits
 *   0 once they have. If they have not after `--stop-timeout` (default 30s), it releases the
 *   mirror lock and exits 1 (a second signal exits 130 at once; the lease then expires).
 */
export async function scheduleCommand(ctx: CommandContext, flags: ScheduleFlags): Promise<CommandResult> {
  const config = withLockWait(ctx.config, flags.wait);
  const stopTimeoutText = flags.stopTimeout ?? DEFAULT_STOP_TIMEOUT;
  const stopTimeoutMs = parseDuration(stopTimeoutText);
  if (stopTimeoutMs === null) {
    throw new UsageError(`--stop-timeout "${stopTimeoutText}": not a duration (write it like 90s or 5m)`);
  }
  const scheduled: ScheduledPipeline[] = Object.entries(config.pipelines).flatMap(([name, p]) =>
    p.schedule === null ? [] : [{ name, schedule: p.schedule, timezone: p.timezone, catchUp: p.catchUp }],
  );
  if (scheduled.length === 0) {
    throw new UsageError('schedule: no pipeline has a schedule (set pipelines.NAME.schedule in the config)');
  }
  const issues = checkSchedules(scheduled);
  const prepared = new Map<string, PreparedPipeline>();
  for (const p of scheduled) {
    try {
      prepared.set(p.name, prepareNamedPipeline(config, p.name));
    } catch (error) {
      if (error instanceof ConfigError) issues.push(...error.issues);
      else throw error;
    }
  }
  if (issues.length > 0) throw new ConfigError(issues);

  const needsApi = [...prepared.values()].some((p) => p.needsApi);
  const step = await openStepContext(ctx, config, needsApi, false);
  const logger = step.ctx.logger.child({ component: 'scheduler' });
  let forced = false;
  const scheduler = new PipelineScheduler({
    pipelines: scheduled,
    run: (name) => runNamedPipeline(step.ctx, prepared.get(name)!),
    lastStartedAt: (name) => {
      const last = lastRuns(step.ctx.mirror).find((r) => r.pipeline === name);
      return last === undefined ? null : Date.parse(last.started_at);
    },
    logger,
    clock: step.ctx.clock,
  });
  try {
    logger.info('scheduler started', { pid: process.pid, pipelines: scheduled.map((p) => p.name) });
    scheduler.start();

    await untilAborted(ctx.signal);
    scheduler.stop();
    const running = scheduler.running();
    logger.info('scheduler stopping', { running, stopTimeoutMs });
    const idle = scheduler.idle().then(() => true);
    const settled = await Promise.race([idle, sleep(stopTimeoutMs).then(() => false)]);
    if (!settled) {
      forced = true;
      const released = releaseHeldMirrorLocks();
      logger.error('pipelines did not stop in time; exiting anyway', {
        running: scheduler.running(),
        releasedLocks: released,
      });
    } else {
      logger.info('scheduler stopped');
    }
  } finally {
    // After a forced stop a pipeline may still hold the mirror; the process exits right after.
    if (!forced) await step.close();
  }

  const stats = scheduler.stats();
  return {
    exitCode: forced ? EXIT.FAILED : EXIT.OK,
    summary: { stoppedBy: reasonOf(ctx.signal), forced, pipelines: stats, mirror: step.ctx.mirror.path },
    human: [
      `schedule stopped (${reasonOf(ctx.signal)}${forced ? ', forced after --stop-timeout' : ''})`,
      ...stats.map(
        (s) =>
          `  ${s.name} (${s.schedule}${s.timezone ? ` ${s.timezone}` : ''}): ${s.runs} runs, ${s.skippedOverlaps} skipped while running` +
          (s.last ? `, last ${s.last.status} (run ${s.last.runId ?? 'not started'})` : ''),
      ),
    ],
  };
}

function untilAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

function reasonOf(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason.message : typeof reason === 'string' ? reason : 'aborted';
}
