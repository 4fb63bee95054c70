import type { PipelineStepConfig } from '../../src/config/config.js';

/** A step type of a named pipeline. */
export type StepType = PipelineStepConfig['type'];

/*
 * One meaning per option. A command's flags (`enrich --domain a.com --filter jurisdiction=mga`)
 * and a named pipeline step's options (`{ "type": "enrich", "options": { "domains": ["a.com"],
 * "filters": { "jurisdiction": "mga" } } }`) are two spellings of the same options: each step
 * type has one schema here, and both spellings go through {@link normaliseStepOptions} with it.
 * The CLI only turns its command-line syntax into the step spelling first (repeated flags into
 * lists, `a,b` into lists, `NAME=VALUE` into an object), see src/cli/step-flags.ts.
 */

/** Where the options come from: the command's flags, or a step of a named pipeline. */
export type OptionSource = 'flags' | 'step';

/** What a check needs besides the value. */
export interface NormaliseEnv {
  /** Relative paths are resolved against this directory. */
  cwd: string;
  /**
   * The config's destinations by name (their type is all a check reads), so a step or a flag
   * naming one that is not configured is refused before anything runs. When left out, only the
   * names' spelling is checked (the pipeline checks them again when it starts).
   */
  destinations?: Readonly<Record<string, { readonly type: string }>>;
}

/** A problem with one option, named by its step option key. */
export interface OptionIssue {
  key: string;
  /** What is wrong, the same words for both spellings. */
  problem: string;
  /** In a step, the part of the option at fault (`filters.geo`). */
  item?: string;
  /** On the command line, the argument at fault, named after the flag (`--filter "geo=de"`). */
  cliArg?: string;
}

/** A checked value, or why it is refused. */
export type Checked = { ok: true; value: unknown } | ({ ok: false } & Omit<OptionIssue, 'key'>);

/** How a flag is written on the command line. */
export type FlagSyntax =
  /** `--budget 500`, or a switch such as `--full` / `--no-load`: the value as commander gives it. */
  | 'value'
  /** `--domain a --domain b`: a list. */
  | 'repeat'
  /** `--fields a,b`: a list. */
  | 'commaList'
  /** `--filter NAME=VALUE`, repeatable: an object. */
  | 'nameValue';

/** One option of a step: its flag, and the check both spellings go through. */
export interface OptionSpec {
  /** The command's long flag (`--stale-after`, `--no-load`); the step option is its camelCase. */
  flag: string;
  syntax: FlagSyntax;
  /** Checks and converts a value given in the step spelling. */
  check?: (value: unknown, env: NormaliseEnv) => Checked;
  /**
   * Set for a flag that is not a step option, saying why. The option still reaches the pipeline
   * from the command (with its default from a step) unless `mode` is set too.
   */
  commandOnly?: string;
  /** A flag that changes what the command does instead of being a pipeline option. */
  mode?: boolean;
}

/** The options of one step type, and how checked values become the pipeline's options. */
export interface StepSchema<Options = Record<string, unknown>> {
  type: StepType;
  /** Step option key (the flag in camelCase, a repeatable flag's name as a plural) → spec. */
  options: Readonly<Record<string, OptionSpec>>;
  /** The pipeline's options from the checked values (only keys that were given); cross-option rules. */
  build(values: Readonly<Record<string, unknown>>, env: NormaliseEnv): Options;
}

/** The pipeline's options, or every problem found. */
export type Normalised<Options> = { ok: true; options: Options } | { ok: false; issues: OptionIssue[] };

/**
 * Checks every option given in the step spelling against the step's schema and builds the
 * pipeline's options. From a step, an unknown key and a command-only flag are problems too.
 * Never throws: every problem is returned, in the order of the input's keys.
 */
export function normaliseStepOptions<Options>(
  schema: StepSchema<Options>,
  input: Readonly<Record<string, unknown>>,
  env: NormaliseEnv & { source: OptionSource },
): Normalised<Options> {
  const issues: OptionIssue[] = [];
  const values: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    const spec = Object.hasOwn(schema.options, key) ? schema.options[key] : undefined;
    if (spec === undefined || (env.source === 'step' && spec.commandOnly !== undefined)) {
      issues.push({ key, problem: unknownOptionProblem(schema, spec) });
      continue;
    }
    if (spec.mode) continue;
    const checked = spec.check ? spec.check(value, env) : { ok: true as const, value };
    if (checked.ok) values[key] = checked.value;
    else {
      const { ok: _ok, ...issue } = checked;
      issues.push({ key, ...issue });
    }
  }
  if (issues.length > 0) return { ok: false, issues };
  return { ok: true, options: schema.build(values, env) };
}

/** The options a step accepts: every flag that is not command-only. */
export function stepOptionKeys(schema: StepSchema<unknown>): string[] {
  return Object.entries(schema.options)
    .filter(([, spec]) => spec.commandOnly === undefined)
    .map(([key]) => key);
}

function unknownOptionProblem(schema: StepSchema<unknown>, spec: OptionSpec | undefined): string {
  if (spec?.commandOnly !== undefined) {
    return `${spec.flag} is a flag of the ${schema.type} command only, not a step option: ${spec.commandOnly}`;
  }
  const valid = stepOptionKeys(schema);
  return `unknown option of a ${schema.type} step (valid: ${valid.length ? valid.join(', ') : 'none'})`;
}

/** An issue as a config problem: `pipelines.nightly.steps[1].options.tabels: unknown option …`. */
export function stepIssueMessage(optionsPath: string, issue: OptionIssue): string {
  return `${optionsPath}.${issue.key}${issue.item === undefined ? '' : `.${issue.item}`}: ${issue.problem}`;
}

/** An issue as a usage problem: `--filter "geo=de": enrich … understands only …`. */
export function flagIssueMessage(schema: StepSchema<unknown>, issue: OptionIssue): string {
  const flag = schema.options[issue.key]?.flag ?? `--${issue.key}`;
  return `${flag}${issue.cliArg === undefined ? '' : ` "${issue.cliArg}"`}: ${issue.problem}`;
}
