import { prepareNamedPipeline, runNamedPipeline } from '../../../pipelines/named.js';
import type { NamedPipelineStats, PreparedPipeline } from '../../../pipelines/named.js';
import type { StepContext } from '../../../pipelines/registry.js';
import type { Config } from '../../config/config.js';
import { openMirror } from '../../mirror/database.js';
import { noopProgress } from '../../runtime/progress.js';
import type { RunResult } from '../../runtime/run-result.js';
import { UsageError } from '../../util/domain-sync-error.js';
import { parseDuration, formatDuration } from '../../util/duration.js';
import { systemClock } from '../../util/time.js';
import type { CommandContext, CommandResult } from '../context.js';
import { exitCodeForOutcome } from '../exit-codes.js';
import { openServices } from '../services.js';

interface RunFlags {
  wait?: string;
}

/**
 * `domain-sync run NAME [--wait DURATION]`: runs `pipelines.NAME` (see {@link runNamedPipeline}).
 *
 * Unknown name or a bad step option: exit 2 before anything is opened. Opens the service
 * client only when a step needs it, so a snapshot-only pipeline runs without an API key. When
 * the mirror is locked by another process, waits up to `--wait` (default `lock.wait`), then
 * exits 1 with `ERR_LOCKED` and the holder's pipeline, pid, host and start time.
 */
export async function runCommand(
  ctx: CommandContext,
  flags: RunFlags,
  args: string[],
): Promise<CommandResult> {
  const name = args[0];
  if (name === undefined || name === '') throw new UsageError('run: missing the pipeline name');
  const config = withLockWait(ctx.config, flags.wait);
  const pipeline = prepareNamedPipeline(config, name);
  const step = await openStepContext(ctx, config, pipeline.needsApi, true);
  try {
    const result = await runNamedPipeline(step.ctx, pipeline);
    step.ctx.progress.stop();
    if (result.error?.code === 'ERR_LOCKED') ctx.output.note(`domain-sync: ${result.error.message}`);
    return {
      exitCode: exitCodeForOutcome(result.status, result.failures.length),
      summary: { ...result, mirror: step.ctx.mirror.path },
      human: describeNamedRun(result, pipeline),
    };
  } finally {
    await step.close();
  }
}

/**
 * `--wait DURATION` over `lock.wait`: a copy of the config with `lock.waitMs` replaced.
 * Throws {@link UsageError} (exit 2) for a value that is not a duration.
 */
export function withLockWait(config: Config, wait: string | undefined): Config {
  if (wait === undefined) return config;
  const waitMs = parseDuration(wait);
  if (waitMs === null)
    throw new UsageError(`--wait "${wait}": not a duration (write it like 90s, 15m, 12h or 30d)`);
  return { ...config, lock: { ...config.lock, waitMs } };
}

/**
 * The context named pipelines run in: the client and mirror when a step calls the service
 * (API key and base URL required: exit 2 otherwise), the mirror alone otherwise. Logs go to
 * `log.file` when the config sets one.
 */
export async function openStepContext(
  ctx: CommandContext,
  config: Config,
  needsApi: boolean,
  progress: boolean,
): Promise<{ ctx: StepContext; close(): Promise<void> }> {
  // The CLI's logger already goes to `log.file` when the config sets one.
  const logger = ctx.logger;
  if (needsApi) {
    const services = await openServices(ctx, progress);
    return { ctx: { ...services, config, logger }, close: () => services.close() };
  }
  const mirror = await openMirror(config.database.path, { logger });
  const runCtx: StepContext = {
    config,
    mirror,
    logger,
    signal: ctx.signal,
    progress: progress ? ctx.output.progress() : noopProgress,
    clock: systemClock,
  };
  return { ctx: runCtx, close: () => mirror.close() };
}

/** Text lines for a named run: one per step with its status and run id. */
export function describeNamedRun(
  result: RunResult<NamedPipelineStats>,
  pipeline: PreparedPipeline,
): string[] {
  const lines = [`${pipeline.name} ${result.status} (run ${result.runId ?? 'not started'})`];
  const width = Math.max(0, ...pipeline.steps.map((s) => s.type.length));
  for (const step of result.stats.steps) {
    const took =
      step.startedAt && step.finishedAt
        ? `, ${formatDuration(Date.parse(step.finishedAt) - Date.parse(step.startedAt))}`
        : '';
    lines.push(
      `  ${step.index}. ${step.type.padEnd(width)}  ${step.status.padEnd(18)}` +
        (step.runId === null ? '' : ` run ${step.runId}${took}`) +
        (step.failures ? `, ${step.failures} item failures` : '') +
        (step.creditsSpent ? `, ${step.creditsSpent} credits` : '') +
        (step.continueOnError && (step.status === 'failed' || step.status === 'stopped_by_service')
          ? ' (continueOnError)'
          : ''),
    );
    if (step.error) lines.push(`     ${step.error.code}: ${step.error.message}`);
  }
  lines.push(
    ...result.failures.slice(0, 20).map((f) => `  failed: ${f.item}: ${f.code}: ${f.message}`),
    ...(result.failures.length > 20 ? [`  … and ${result.failures.length - 20} more failures`] : []),
  );
  if (result.error) lines.push(`  stopped: ${result.error.code}: ${result.error.message}`);
  return lines;
}
