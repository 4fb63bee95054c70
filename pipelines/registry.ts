import type { DomainServiceApi } from '../src/api/index.js';
import type { PipelineStepConfig } from '../src/config/config.js';
import type { MirrorRunContext } from '../src/runtime/run.js';
import type { RunResult } from '../src/runtime/run-result.js';
import { DomainSyncError } from '../src/util/domain-sync-error.js';
import type { EnrichOptions } from './enrich/index.js';
import type { ExportOptions } from './export/index.js';
import type { PublishOptions } from './publish.js';
import type { SnapshotOptions } from './snapshot.js';
import {
  normaliseStepOptions,
  STEP_SCHEMAS,
  stepIssueMessage,
  type NormaliseEnv,
  type StepSchema,
  type StepType,
} from './step-options/index.js';
import type { SyncOptions } from './sync.js';

export type { StepType };

/** What a step runs with: a mirror context, plus the service client for steps that call it. */
export type StepContext = MirrorRunContext & { api?: DomainServiceApi };

/** A step whose options were validated: ready to run. */
export interface PreparedStep {
  type: StepType;
  /** Whether the step calls the service (needs `DOMAIN_SYNC_API_KEY` and a base URL). */
  needsApi: boolean;
  continueOnError: boolean;
  /** The step's options after validation, as passed to its pipeline function. */
  options: Readonly<Record<string, unknown>>;
  /** Runs the step's pipeline; never throws for what the pipeline reports (see each pipeline). */
  run(ctx: StepContext): Promise<RunResult<object>>;
}

interface StepDefinition {
  needsApi: boolean;
  /** The step's options: the same schema as its command's flags (pipelines/step-options). */
  schema: StepSchema<Record<string, unknown>>;
  run(ctx: StepContext, options: Record<string, unknown>): Promise<RunResult<object>>;
}

/**
 * The step types a named pipeline can use. A step's options are its command's flags in
 * camelCase (`sync --no-profiles` → `profiles: false`, `enrich --stale-after 30d` →
 * `staleAfter: "30d"`), repeatable flags as lists (`--domain` → `domains`), filters as an object,
 * and they mean exactly what the flags mean: both go through the step type's schema.
 *
 * Each step imports its pipeline when it runs, so that `run` and `schedule` load only the
 * pipelines their steps use: publish brings the PostgreSQL client (pg and kysely), snapshot the
 * Parquet writer, export the CSV reader.
 */
export const STEP_DEFINITIONS: Readonly<Record<StepType, StepDefinition>> = {
  sync: {
    needsApi: true,
    schema: STEP_SCHEMAS.sync,
    run: async (ctx, options) =>
      (await import('./sync.js')).syncPipeline(withApi(ctx, 'sync'), options as SyncOptions),
  },
  export: {
    needsApi: true,
    schema: STEP_SCHEMAS.export,
    run: async (ctx, options) =>
      (await import('./export/index.js')).exportPipeline(withApi(ctx, 'export'), options as ExportOptions),
  },
  enrich: {
    needsApi: true,
    schema: STEP_SCHEMAS.enrich,
    run: async (ctx, options) =>
      (await import('./enrich/index.js')).enrichPipeline(withApi(ctx, 'enrich'), options as EnrichOptions),
  },
  snapshot: {
    needsApi: false,
    schema: STEP_SCHEMAS.snapshot,
    run: async (ctx, options) =>
      (await import('./snapshot.js')).snapshotPipeline(ctx, options as SnapshotOptions),
  },
  publish: {
    needsApi: false,
    schema: STEP_SCHEMAS.publish,
    run: async (ctx, options) =>
      (await import('./publish.js')).publishPipeline(ctx, options as PublishOptions),
  },
};

/**
 * Validates one configured step and returns it ready to run. Pushes one issue per problem to
 * `issues`, each naming the key path (`pipelines.nightly.steps[0].options.tabels: unknown
 * option of a snapshot step (valid: out, tables, to)`), and returns null when there was any.
 * Relative paths in options are resolved against `cwd`; destination names are checked against
 * `destinations` (the config's) when given.
 */
export function prepareStep(
  step: PipelineStepConfig,
  path: string,
  issues: string[],
  cwd: string = process.cwd(),
  destinations?: NormaliseEnv['destinations'],
): PreparedStep | null {
  const definition = STEP_DEFINITIONS[step.type];
  const result = normaliseStepOptions(definition.schema, step.options, { cwd, source: 'step', destinations });
  if (!result.ok) {
    for (const issue of result.issues) issues.push(stepIssueMessage(`${path}.options`, issue));
    return null;
  }
  const { options } = result;
  return {
    type: step.type,
    needsApi: definition.needsApi,
    continueOnError: step.continueOnError,
    options,
    run: (ctx) => definition.run(ctx, options),
  };
}

function withApi<Ctx extends StepContext>(ctx: Ctx, step: StepType): Ctx & { api: DomainServiceApi } {
  // The run command opens the client whenever a step needs it; reaching this is a bug.
  if (ctx.api === undefined) {
    throw new DomainSyncError('ERR_INTERNAL', `a ${step} step needs the service client, and none was opened`);
  }
  return ctx as Ctx & { api: DomainServiceApi };
}
