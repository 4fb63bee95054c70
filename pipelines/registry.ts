import { resolve } from 'node:path';
import type { DomainServiceApi } from '../src/api/index.js';
import { CANONICAL_FILTERS } from '../src/config/defaults.js';
import type { PipelineStepConfig } from '../src/config/config.js';
import type { MirrorRunContext } from '../src/runtime/run.js';
import type { RunResult } from '../src/runtime/run-result.js';
import { DomainSyncError } from '../src/util/domain-sync-error.js';
import { parseDuration } from '../src/util/duration.js';
import { enrichPipeline, type EnrichOptions } from './enrich/index.js';
import { exportPipeline, type ExportOptions } from './export/index.js';
import { resolveSnapshotTables, snapshotPipeline, type SnapshotOptions } from './snapshot.js';
import { syncPipeline, type SyncOptions } from './sync.js';

/** A step type of a named pipeline (PRODUCT.md "pipelines.NAME.steps"). */
export type StepType = PipelineStepConfig['type'];

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

type Kind =
  'boolean' | 'positiveInt' | 'nonNegativeInt' | 'string' | 'stringList' | 'duration' | 'filters' | 'format';

interface StepDefinition {
  needsApi: boolean;
  /** Option name (as in the config file: the command's flag in camelCase) → value kind. */
  options: Readonly<Record<string, Kind>>;
  /** Filter names this step refuses (managed by the pipeline itself). */
  forbiddenFilters?: readonly string[];
  /** Extra checks and conversions; returns the pipeline's options or pushes issues. */
  build(options: Record<string, unknown>, path: string, issues: string[]): Record<string, unknown>;
  run(ctx: StepContext, options: Record<string, unknown>): Promise<RunResult<object>>;
}

/**
 * The step types a named pipeline can use and the options each accepts. The option names are
 * the command's flags in camelCase (`sync --no-profiles` → `profiles: false`, `enrich
 * --stale-after 30d` → `staleAfter: "30d"`), so the README's command docs double as step docs.
 */
export const STEP_DEFINITIONS: Readonly<Record<StepType, StepDefinition>> = {
  sync: {
    needsApi: true,
    options: { filters: 'filters', full: 'boolean', profiles: 'boolean', concurrency: 'positiveInt' },
    forbiddenFilters: ['page'],
    build: (options) => options,
    run: (ctx, options) => syncPipeline(withApi(ctx, 'sync'), options as SyncOptions),
  },
  export: {
    needsApi: true,
    options: {
      filters: 'filters',
      format: 'format',
      fields: 'stringList',
      maxCredits: 'nonNegativeInt',
      load: 'boolean',
      recreateExpired: 'boolean',
    },
    forbiddenFilters: ['page', 'per_page'],
    build: (options) => options,
    run: (ctx, options) => exportPipeline(withApi(ctx, 'export'), options as ExportOptions),
  },
  enrich: {
    needsApi: true,
    options: {
      budget: 'nonNegativeInt',
      staleAfter: 'duration',
      domains: 'stringList',
      filters: 'filters',
      concurrency: 'positiveInt',
      strategy: 'string',
      wait: 'duration',
    },
    build: (options) => {
      const { staleAfter, wait, ...rest } = options;
      const built: EnrichOptions = { ...(rest as EnrichOptions) };
      if (typeof staleAfter === 'string') built.staleAfterMs = parseDuration(staleAfter) ?? undefined;
      if (typeof wait === 'string') built.waitMs = parseDuration(wait) ?? undefined;
      // Same rule as the `enrich` command: --domain without --stale-after enriches only those.
      if (built.domains !== undefined && built.domains.length > 0 && staleAfter === undefined) {
        built.requestedOnly = true;
      }
      return built as Record<string, unknown>;
    },
    run: (ctx, options) => enrichPipeline(withApi(ctx, 'enrich'), options as EnrichOptions),
  },
  snapshot: {
    needsApi: false,
    options: { out: 'string', tables: 'stringList' },
    build: (options, path, issues) => {
      const { out, tables } = options;
      if (Array.isArray(tables)) {
        try {
          resolveSnapshotTables(tables as string[]);
        } catch (error) {
          issues.push(`${path}.tables: ${(error as Error).message.replace(/^--tables: /, '')}`);
        }
      }
      const built: SnapshotOptions = {
        ...(typeof out === 'string' ? { outDir: resolve(out) } : {}),
        ...(Array.isArray(tables) ? { tables: tables as string[] } : {}),
      };
      return built as Record<string, unknown>;
    },
    run: (ctx, options) => snapshotPipeline(ctx, options as SnapshotOptions),
  },
};

/**
 * Validates one configured step and returns it ready to run. Pushes one issue per problem to
 * `issues`, each naming the key path (`pipelines.nightly.steps[0].options.tabels: unknown
 * option (valid: out, tables)`), and returns null when there was any.
 */
export function prepareStep(step: PipelineStepConfig, path: string, issues: string[]): PreparedStep | null {
  const definition = STEP_DEFINITIONS[step.type];
  const before = issues.length;
  const optionsPath = `${path}.options`;
  const checked: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(step.options)) {
    const kind = definition.options[key];
    if (kind === undefined) {
      const valid = Object.keys(definition.options);
      issues.push(
        `${optionsPath}.${key}: unknown option of a ${step.type} step (valid: ${valid.length ? valid.join(', ') : 'none'})`,
      );
      continue;
    }
    const problem = checkKind(kind, value, definition.forbiddenFilters ?? []);
    if (problem !== null) issues.push(`${optionsPath}.${key}: ${problem}`);
    else checked[key] = value;
  }
  if (issues.length > before) return null;
  const options = definition.build(checked, optionsPath, issues);
  if (issues.length > before) return null;
  return {
    type: step.type,
    needsApi: definition.needsApi,
    continueOnError: step.continueOnError,
    options,
    run: (ctx) => definition.run(ctx, options),
  };
}

function checkKind(kind: Kind, value: unknown, forbiddenFilters: readonly string[]): string | null {
  switch (kind) {
    case 'boolean':
      return typeof value === 'boolean' ? null : `expected true or false, got ${describe(value)}`;
    case 'positiveInt':
      return Number.isInteger(value) && (value as number) > 0
        ? null
        : `expected a positive whole number, got ${describe(value)}`;
    case 'nonNegativeInt':
      return Number.isInteger(value) && (value as number) >= 0
        ? null
        : `expected a whole number ≥ 0, got ${describe(value)}`;
    case 'string':
      return typeof value === 'string' && value !== ''
        ? null
        : `expected a non-empty string, got ${describe(value)}`;
    case 'format':
      return value === 'csv' || value === 'json' ? null : `expected "csv" or "json", got ${describe(value)}`;
    case 'stringList':
      return Array.isArray(value) && value.every((v) => typeof v === 'string' && v !== '')
        ? null
        : `expected a list of non-empty strings, got ${describe(value)}`;
    case 'duration':
      return typeof value === 'string' && parseDuration(value) !== null
        ? null
        : `expected a duration like 90s, 15m, 12h or 30d, got ${describe(value)}`;
    case 'filters': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        return `expected an object of filter name → value, got ${describe(value)}`;
      }
      for (const [name, v] of Object.entries(value)) {
        if (!(CANONICAL_FILTERS as readonly string[]).includes(name)) {
          return `unknown filter "${name}" (known: ${CANONICAL_FILTERS.join(', ')})`;
        }
        if (forbiddenFilters.includes(name)) return `filter "${name}" is managed by this step`;
        if (!['string', 'number', 'boolean'].includes(typeof v)) {
          return `filter "${name}": expected a string, number or boolean, got ${describe(v)}`;
        }
      }
      return null;
    }
  }
}

function describe(value: unknown): string {
  return value === null
    ? 'null'
    : Array.isArray(value)
      ? 'a list'
      : `${typeof value} ${JSON.stringify(value)}`;
}

function withApi<Ctx extends StepContext>(ctx: Ctx, step: StepType): Ctx & { api: DomainServiceApi } {
  // The run command opens the client whenever a step needs it; reaching this is a bug.
  if (ctx.api === undefined) {
    throw new DomainSyncError('ERR_INTERNAL', `a ${step} step needs the service client, and none was opened`);
  }
  return ctx as Ctx & { api: DomainServiceApi };
}
