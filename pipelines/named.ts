import type { Config } from '../src/config/config.js';
import { updatePipelineRunStats } from '../src/mirror/store/runs.js';
import { errorCode, runPipeline } from '../src/runtime/run.js';
import type { ItemFailure, RunResult, RunStatus } from '../src/runtime/run-result.js';
import { ConfigError, UsageError } from '../src/util/domain-sync-error.js';
import { redactText } from '../src/log/redact.js';
import { isoFromMs } from '../src/util/time.js';
import { prepareStep, type PreparedStep, type StepContext, type StepType } from './registry.js';

/** A named pipeline of the config whose steps were all validated. */
export interface PreparedPipeline {
  name: string;
  steps: readonly PreparedStep[];
  /** Whether any step calls the service (the caller must then open the client). */
  needsApi: boolean;
}

/** What one step of a named run did; `skipped` when an earlier step stopped the run. */
export interface StepOutcome {
  /** 0-based position in `pipelines.NAME.steps`. */
  index: number;
  type: StepType;
  status: RunStatus | 'skipped';
  /** The step's own `pipeline_runs.id`, or null when it did not start. */
  runId: string | number | null;
  continueOnError: boolean;
  /** Item failures of the step (a profile, a run). */
  failures: number;
  creditsSpent: number;
  startedAt: string | null;
  finishedAt: string | null;
  error?: { code: string; message: string };
}

/** Stats of a named run, stored in the parent `pipeline_runs.stats` after every step. */
export interface NamedPipelineStats {
  steps: StepOutcome[];
}

/**
 * Looks up `pipelines.NAME` and validates every step's options before anything runs, so a typo
 * in the last step never shows up after the first one spent credits.
 *
 * Throws {@link UsageError} (exit 2) for an unknown name, listing the configured names, and
 * {@link ConfigError} (exit 2) listing every bad option by key path
 * (`pipelines.nightly.steps[1].options.tabels: unknown option …`).
 */
export function prepareNamedPipeline(config: Config, name: string): PreparedPipeline {
  const pipeline = Object.hasOwn(config.pipelines, name) ? config.pipelines[name] : undefined;
  if (pipeline === undefined) {
    const names = Object.keys(config.pipelines).sort();
    throw new UsageError(
      `no pipeline named "${name}" in the config; configured pipelines: ${names.length ? names.join(', ') : '(none)'}`,
    );
  }
  const issues: string[] = [];
  const steps: PreparedStep[] = [];
  pipeline.steps.forEach((step, index) => {
    const prepared = prepareStep(
      step,
      `pipelines.${name}.steps[${index}]`,
      issues,
      undefined,
      config.destinations,
    );
    if (prepared !== null) steps.push(prepared);
  });
  if (issues.length > 0) throw new ConfigError(issues);
  return { name, steps, needsApi: steps.some((step) => step.needsApi) };
}

/**
 * Runs a named pipeline: its steps in order, under one parent `pipeline_runs` row named after
 * the pipeline (each step also records its own row; the parent's `stats.steps` lists them with
 * their run ids and outcomes, saved after every step).
 *
 * - A step that ends `failed` or `stopped_by_service` stops the steps after it (they are
 *   recorded `skipped`) unless it says `continueOnError`. An `interrupted` step (SIGINT/SIGTERM,
 *   lost lock) always stops the run. Item failures do not stop it.
 * - The parent's status is the worst of its steps: `failed` > `interrupted` >
 *   `stopped_by_service` > `budget_reached` > `done`; its error names the first step that did
 *   not finish well; its failures are the steps' item failures, prefixed with the step.
 * - Holds the mirror lock for the whole run; the steps re-enter it (src/runtime/lock.ts).
 * - Never throws for what a step reports or throws. Validation problems throw before anything
 *   is recorded (see {@link prepareNamedPipeline}).
 */
export async function runNamedPipeline(
  ctx: StepContext,
  pipeline: PreparedPipeline,
): Promise<RunResult<NamedPipelineStats>> {
  const stats: NamedPipelineStats = { steps: [] };
  const failures: ItemFailure[] = [];
  return runPipeline(
    ctx,
    pipeline.name,
    async (run) => {
      let stoppedBy: StepOutcome | null = null;
      for (const [index, step] of pipeline.steps.entries()) {
        if (stoppedBy !== null || run.ctx.signal.aborted) {
          stats.steps.push(skipped(index, step));
          continue;
        }
        // Steps log with their own pipeline and runId (runPipeline binds them); the parent's are
        // added under other names so a log line never carries two `runId`s.
        const stepCtx: StepContext = {
          ...run.ctx,
          logger: ctx.logger.child({ parentPipeline: pipeline.name, parentRunId: run.id, step: index }),
        };
        const outcome = await runStep(stepCtx, index, step);
        stats.steps.push(outcome.summary);
        failures.push(
          ...outcome.failures.map((f) => ({ ...f, item: `steps[${index}] ${step.type}: ${f.item}` })),
        );
        updatePipelineRunStats(run.ctx.mirror, run.id, { ...stats });
        const status = outcome.summary.status;
        if (
          status === 'interrupted' ||
          ((status === 'failed' || status === 'stopped_by_service') && !step.continueOnError)
        ) {
          stoppedBy = outcome.summary;
        }
      }
      let status = worstStatus(stats.steps);
      // Steps skipped because of SIGINT/SIGTERM leave nothing worse behind, yet the run was cut short.
      if (run.ctx.signal.aborted && SEVERITY[status] < SEVERITY.interrupted) status = 'interrupted';
      const culprit = stats.steps.find((s) => s.status === status && s.error !== undefined);
      return {
        status,
        stats,
        failures,
        creditsSpent: stats.steps.reduce((sum, s) => sum + s.creditsSpent, 0),
        ...(culprit?.error
          ? {
              error: {
                code: culprit.error.code,
                message: `step ${culprit.index} (${culprit.type}, run ${culprit.runId ?? 'not started'}) of ${pipeline.name}: ${culprit.error.message}`,
              },
            }
          : {}),
      };
    },
    () => stats,
  );
}

async function runStep(
  ctx: StepContext,
  index: number,
  step: PreparedStep,
): Promise<{ summary: StepOutcome; failures: ItemFailure[] }> {
  const base = { index, type: step.type, continueOnError: step.continueOnError };
  try {
    const result = await step.run(ctx);
    return {
      summary: {
        ...base,
        status: result.status,
        runId: result.runId,
        failures: result.failures.length,
        creditsSpent: result.creditsSpent,
        startedAt: result.startedAt,
        finishedAt: result.finishedAt,
        ...(result.error ? { error: result.error } : {}),
      },
      failures: result.failures,
    };
  } catch (error) {
    // Pipelines report rather than throw; one that throws anyway (a bug, a usage error found
    // late) fails its step and is recorded like any other failure.
    const now = isoFromMs(ctx.clock());
    const code = errorCode(error);
    ctx.logger.error('step threw', { code, error });
    return {
      summary: {
        ...base,
        status: code === 'ERR_ABORTED' ? 'interrupted' : 'failed',
        runId: null,
        failures: 0,
        creditsSpent: 0,
        startedAt: now,
        finishedAt: now,
        error: { code, message: redactText(error instanceof Error ? error.message : String(error)) },
      },
      failures: [],
    };
  }
}

function skipped(index: number, step: PreparedStep): StepOutcome {
  return {
    index,
    type: step.type,
    status: 'skipped',
    runId: null,
    continueOnError: step.continueOnError,
    failures: 0,
    creditsSpent: 0,
    startedAt: null,
    finishedAt: null,
  };
}

const SEVERITY: Readonly<Record<RunStatus, number>> = {
  done: 0,
  budget_reached: 1,
  stopped_by_service: 2,
  interrupted: 3,
  failed: 4,
};

/** The worst status of the steps that ran (`done` when none ran). */
function worstStatus(steps: readonly StepOutcome[]): RunStatus {
  let worst: RunStatus = 'done';
  for (const step of steps) {
    if (step.status !== 'skipped' && SEVERITY[step.status] > SEVERITY[worst]) worst = step.status;
  }
  return worst;
}
