import {
  flagIssueMessage,
  normaliseStepOptions,
  type NormaliseEnv,
  type OptionSpec,
  type StepSchema,
} from '../../pipelines/step-options/index.js';
import { UsageError } from '../util/domain-sync-error.js';

/*
 * A command's flags → its pipeline's options. Only the command-line syntax is handled here:
 * repeated flags become lists, `a,b` becomes a list, `--filter NAME=VALUE` flags become an
 * object. What the options mean (checks, conversions, defaults, rules between options) is the
 * step type's schema, the same one a named pipeline's step goes through, so a flag and a step
 * option can never mean two things.
 */

/**
 * The options `schema`'s pipeline gets from the flags commander parsed. Throws
 * {@link UsageError} (exit 2) naming the flag for the first problem. Flags that are a mode of the
 * command (`--dry-run`) are left to the command.
 */
export function optionsFromFlags<Options>(
  schema: StepSchema<Options>,
  flags: Readonly<Record<string, unknown>>,
  cwd: string,
  destinations?: NormaliseEnv['destinations'],
): Options {
  const input: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(schema.options)) {
    if (spec.mode) continue;
    const value = flags[commanderKey(spec.flag)];
    if (value !== undefined) input[key] = fromSyntax(spec, value);
  }
  const result = normaliseStepOptions(schema, input, { cwd, source: 'flags', destinations });
  if (!result.ok) throw new UsageError(flagIssueMessage(schema, result.issues[0]!));
  return result.options;
}

/** Where commander keeps a flag's value: `--max-credits` → `maxCredits`, `--no-load` → `load`. */
export function commanderKey(flag: string): string {
  return flag.replace(/^--(no-)?/, '').replace(/-([a-z])/g, (_match, letter: string) => letter.toUpperCase());
}

function fromSyntax(spec: OptionSpec, value: unknown): unknown {
  switch (spec.syntax) {
    case 'value':
    case 'repeat':
      return value;
    case 'commaList':
      return String(value).split(',');
    case 'nameValue':
      return parseNameValues(spec.flag, value as readonly string[]);
  }
}

/**
 * `--filter NAME=VALUE` flags → `{ NAME: "VALUE" }`, names and values trimmed. A flag without
 * `=` or a name given twice is a usage error; the names and values are checked by the schema.
 */
function parseNameValues(flag: string, values: readonly string[]): Record<string, string> {
  const object: Record<string, string> = {};
  for (const raw of values) {
    const eq = raw.indexOf('=');
    if (eq <= 0) throw new UsageError(`${flag} "${raw}": expected NAME=VALUE, e.g. ${flag} jurisdiction=mga`);
    const name = raw.slice(0, eq).trim();
    if (Object.hasOwn(object, name)) throw new UsageError(`${flag} "${raw}": "${name}" given twice`);
    object[name] = raw.slice(eq + 1).trim();
  }
  return object;
}
