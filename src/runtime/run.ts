import { redactText } from '../log/redact.js';
import { buildDeferredIndexes, deferredIndexNames } from '../mirror/store/deferred-indexes.js';
import { finishPipelineRun, startPipelineRun } from '../mirror/store/runs.js';
import { undoUncheckedLoad } from '../mirror/store/unchecked-load.js';
import { isoFromMs } from '../util/time.js';
import { acquireMirrorLock, LockedError, type MirrorLockHandle } from './lock.js';
import type { RunContext } from './run-context.js';
import { errorCode, runStatusForError } from './run-result.js';
import type { ItemFailure, RunResult, RunStatus } from './run-result.js';

export { errorCode, runStatusForError, SERVICE_STOP_CODES } from './run-result.js';

/** What a pipeline body hands back to {@link runPipeline}. */
export interface PipelineBodyResult<Stats extends object> {
  status: RunStatus;
  stats: Stats;
  failures: ItemFailure[];
  creditsSpent: number;
  error?: { code: string; message: string };
}

/**
 * What {@link runPipeline} needs from its context: a {@link RunContext} without the service
 * client, so pipelines that only read the mirror (`snapshot`) run without an API key. Every
 * `RunContext` is one.
 */
export type MirrorRunContext = Omit<RunContext, 'api'>;

/** The run a pipeline body is executing in; `ctx` is the caller's context with a run-scoped logger. */
export interface PipelineRun<Ctx extends MirrorRunContext = RunContext> {
  id: number;
  startedAt: string;
  ctx: Ctx;
}

/**
 * Runs a pipeline body with `pipeline_runs` bookkeeping: a row at start, the outcome at the end.
 * Never throws for what the body throws: an abort becomes `interrupted`, a 401 or quota stop
 * becomes `stopped_by_service`, anything else `failed`, each with the error's stable code.
 * `stats` given to `partialStats` are kept when the body throws, so a summary still has them.
 *
 * Takes the cross-process mirror lock first ({@link acquireMirrorLock}; re-entrant, so a named
 * pipeline's steps run under the named pipeline's lock). When the lock cannot be had within
 * `config.lock.waitMs`, returns status `failed` with error `ERR_LOCKED` naming the holder and
 * `runId` null: nothing was recorded (the result then also carries `lockHolder`, which the
 * commands' `--json` summaries pass on).
 */
export async function runPipeline<Stats extends object, Ctx extends MirrorRunContext = RunContext>(
  ctx: Ctx,
  pipeline: string,
  body: (run: PipelineRun<Ctx>) => Promise<PipelineBodyResult<Stats>>,
  partialStats: () => Stats,
): Promise<RunResult<Stats>> {
  // The cross-process mirror lock is taken before anything is recorded: a process that cannot
  // get it writes nothing to the mirror, not even a pipeline_runs row.
  let lock: MirrorLockHandle;
  try {
    lock = await acquireMirrorLock(ctx, pipeline);
  } catch (error) {
    return notStarted(ctx, pipeline, error, partialStats());
  }
  try {
    // The body sees the lock's signal: aborted on SIGINT/SIGTERM and also if the lease is lost.
    return await lock.run(() => runRecorded({ ...ctx, signal: lock.signal }, pipeline, body, partialStats));
  } finally {
    lock.release();
  }
}

/** {@link runPipeline} once the lock is held: the `pipeline_runs` bookkeeping. */
async function runRecorded<Stats extends object, Ctx extends MirrorRunContext>(
  ctx: Ctx,
  pipeline: string,
  body: (run: PipelineRun<Ctx>) => Promise<PipelineBodyResult<Stats>>,
  partialStats: () => Stats,
): Promise<RunResult<Stats>> {
  const startedAt = isoFromMs(ctx.clock());
  const id = startPipelineRun(ctx.mirror, { pipeline, startedAt, pid: process.pid });
  const logger = ctx.logger.child({ pipeline, runId: id });
  logger.info('pipeline started');
  const runCtx = { ...ctx, logger };
  let outcome: PipelineBodyResult<Stats>;
  try {
    undoUncheckedLoadLeft(runCtx);
    await buildIndexesLeftDeferred(runCtx);
    outcome = await body({ id, startedAt, ctx: runCtx });
  } catch (error) {
    const code = errorCode(error);
    const status = runStatusForError(error);
    outcome = {
      status,
      stats: partialStats(),
      failures: [],
      creditsSpent: 0,
      error: { code, message: redactText(error instanceof Error ? error.message : String(error)) },
    };
    if (status === 'failed' && code === 'ERR_INTERNAL' && error instanceof Error && error.stack) {
      logger.debug('stack', { stack: redactText(error.stack) });
    }
  }
  const finishedAt = isoFromMs(ctx.clock());
  const stats = { ...outcome.stats, failures: outcome.failures.length } as Record<string, unknown>;
  finishPipelineRun(ctx.mirror, id, {
    status: outcome.status,
    finishedAt,
    stats,
    error: outcome.error ? `${outcome.error.code}: ${outcome.error.message}` : null,
  });
  const level =
    outcome.status === 'failed'
      ? 'error'
      : outcome.status === 'done' || outcome.status === 'budget_reached'
        ? 'info'
        : 'warn';
  logger[level]('pipeline finished', { status: outcome.status, ...stats, error: outcome.error });
  return {
    pipeline,
    runId: id,
    status: outcome.status,
    startedAt,
    finishedAt,
    stats: outcome.stats,
    failures: outcome.failures,
    creditsSpent: outcome.creditsSpent,
    ...(outcome.error ? { error: outcome.error } : {}),
  };
}

/** The result of a run that never started because the mirror lock could not be taken. */
function notStarted<Stats extends object>(
  ctx: MirrorRunContext,
  pipeline: string,
  error: unknown,
  stats: Stats,
): RunResult<Stats> {
  const code = errorCode(error);
  const now = isoFromMs(ctx.clock());
  const message = redactText(error instanceof Error ? error.message : String(error));
  const holder = error instanceof LockedError ? error.holder : undefined;
  ctx.logger.error('pipeline not started: mirror lock not acquired', { pipeline, code, holder });
  return {
    pipeline,
    runId: null,
    status: runStatusForError(error),
    startedAt: now,
    finishedAt: now,
    // Nothing ran: the stats are the body's initial ones, so every command can print them.
    stats,
    failures: [],
    creditsSpent: 0,
    error: { code, message },
    ...(holder ? { lockHolder: holder } : {}),
  };
}

type IndexBuildContext = Pick<MirrorRunContext, 'mirror' | 'logger' | 'progress'>;

/**
 * Builds the indexes set aside in `deferred_indexes` (src/mirror/store/deferred-indexes.ts), if
 * any, with a progress task and a log line; the caller holds the mirror lock. A first load (a sync,
 * an export's load) calls it once it has written its rows.
 */
export async function buildIndexesSetAside(ctx: IndexBuildContext): Promise<void> {
  const pending = deferredIndexNames(ctx.mirror).length;
  if (pending === 0) return;
  // On a large mirror the builds take tens of seconds with no other progress line (docs/operations.md
  // "Logs"); a log that ends at the last page must not look stuck.
  ctx.logger.info('building the mirror indexes set aside during the load', { indexes: pending });
  const task = ctx.progress.task('indexes', pending, 'indexes');
  const built = await buildDeferredIndexes(ctx.mirror, () => task.increment());
  task.done();
  ctx.logger.info('mirror indexes built', { indexes: built.names.length, ms: Math.round(built.ms) });
}

/**
 * Removes the rows of an export's one-pass load into an empty mirror that stopped before it read
 * its file to the end (killed, or stopped by a signal): a file not checked whole must not stay in
 * the mirror (src/mirror/store/unchecked-load.ts). Runs before anything else of every run; the
 * export is still `loading`, so the next `export` loads the file again.
 */
function undoUncheckedLoadLeft(ctx: Pick<MirrorRunContext, 'mirror' | 'logger'>): void {
  const undone = undoUncheckedLoad(ctx.mirror);
  if (undone === undefined) return;
  ctx.logger.warn(
    'removed the rows of an export load that stopped before its file was read to the end; the next export run loads it again',
    { exportId: undone.exportId, domains: undone.domains },
  );
}

/**
 * Builds the indexes a first load set aside and was killed before building again: the first
 * command to hold the lock after it does, before its own work, so no run works on a mirror
 * without them for long.
 */
async function buildIndexesLeftDeferred(ctx: IndexBuildContext): Promise<void> {
  const left = deferredIndexNames(ctx.mirror).length;
  if (left === 0) return;
  ctx.logger.warn('building the mirror indexes a first load set aside and did not build (was it killed?)', {
    indexes: left,
  });
  await buildIndexesSetAside(ctx);
}
