import { resolve } from 'node:path';
import { parseDuration } from '../../src/util/duration.js';
import type { Checked, NormaliseEnv } from './schema.js';

/*
 * The checks of single option values, shared by every step schema. Each takes the value in the
 * step spelling (what a config file holds, or what the CLI made of its arguments) and returns
 * the value the pipeline gets, or the problem in words that fit both spellings.
 */

type Check = (value: unknown, env: NormaliseEnv) => Checked;

const ok = (value: unknown): Checked => ({ ok: true, value });
const refuse = (problem: string): Checked => ({ ok: false, problem });

/** A value for messages: `string "a month"`, `number 5`, `a list`, `null`. */
export function describeValue(value: unknown): string {
  return value === null
    ? 'null'
    : Array.isArray(value)
      ? 'a list'
      : `${typeof value} ${JSON.stringify(value)}`;
}

/** `true` or `false` (a switch, or a `--no-…` switch). */
export const booleanValue: Check = (value) =>
  typeof value === 'boolean' ? ok(value) : refuse(`expected true or false, got ${describeValue(value)}`);

/** A whole number > 0. */
export const positiveInt: Check = (value) =>
  Number.isInteger(value) && (value as number) > 0
    ? ok(value)
    : refuse(`expected a positive whole number, got ${describeValue(value)}`);

/** A whole number ≥ 0. */
export const nonNegativeInt: Check = (value) =>
  Number.isInteger(value) && (value as number) >= 0
    ? ok(value)
    : refuse(`expected a whole number ≥ 0, got ${describeValue(value)}`);

/** A string that is not blank; passed on as given. */
export const nonBlankText: Check = (value) =>
  typeof value === 'string' && value.trim() !== ''
    ? ok(value)
    : refuse(`expected a non-empty string, got ${describeValue(value)}`);

/** One of `choices`. */
export function oneOf(choices: readonly string[]): Check {
  return (value) =>
    typeof value === 'string' && choices.includes(value)
      ? ok(value)
      : refuse(`expected ${choices.map((c) => `"${c}"`).join(' or ')}, got ${describeValue(value)}`);
}

/** A duration such as `90s`, `15m`, `12h`, `30d`: milliseconds. */
export const durationMs: Check = (value) => {
  const ms = typeof value === 'string' ? parseDuration(value) : null;
  return ms === null
    ? refuse(`expected a duration such as 90s, 15m, 12h or 30d, got ${describeValue(value)}`)
    : ok(ms);
};

/** A directory or file path: absolute, resolved against the working directory. */
export const path: Check = (value, env) =>
  typeof value === 'string' && value.trim() !== ''
    ? ok(resolve(env.cwd, value))
    : refuse(`expected a non-empty path, got ${describeValue(value)}`);

/**
 * A list of destination names of type `type` (`snapshot --to lake --to archive`), each as
 * configured under `destinations`; at least one. Without the config's destinations in `env`,
 * only the spelling of the names is checked.
 */
export function destinationNames(type: string): Check {
  return (value, env) => {
    const list = nameList('destination name', { atLeastOne: true })(value, env);
    if (!list.ok) return list;
    const names = [...new Set(list.value as string[])];
    const bad = names.find((n) => !/^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(n));
    if (bad !== undefined) return refuse(`"${bad}" is not a destination name (letters, digits, - and _)`);
    if (env.destinations === undefined) return ok(names);
    const configured = env.destinations;
    const usable = Object.keys(configured).filter((n) => configured[n]!.type === type);
    for (const name of names) {
      const destination = Object.hasOwn(configured, name) ? configured[name] : undefined;
      if (destination === undefined || destination.type !== type) {
        const what =
          destination === undefined
            ? `no destination named "${name}"`
            : `destination "${name}" is of type ${destination.type}, not ${type}`;
        return refuse(
          `${what} (${type} destinations in the config: ${usable.length ? usable.join(', ') : 'none'})`,
        );
      }
    }
    return ok(names);
  };
}

/** Rules of a {@link nameList}. */
interface NameListRules {
  /** Refuses a name outside these, naming the first. */
  known?: readonly string[];
  /** Refuses a list with no name left. */
  atLeastOne?: boolean;
  /** Any other check of the names: the problem, or null. */
  validate?: (names: string[]) => string | null;
}

/** A list of names (`what`: `table name`), each trimmed, blanks dropped. */
export function nameList(what: string, rules: NameListRules = {}): Check {
  return (value) => {
    if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
      return refuse(`expected a list of ${what}s, got ${describeValue(value)}`);
    }
    const names = value.map((v) => v.trim()).filter((v) => v !== '');
    if (rules.atLeastOne && names.length === 0) return refuse(`expected at least one ${what}, got none`);
    const { known } = rules;
    const unknown = known === undefined ? undefined : names.find((n) => !known.includes(n));
    if (unknown !== undefined) return refuse(`unknown ${what} "${unknown}" (known: ${known!.join(', ')})`);
    const problem = rules.validate?.(names) ?? null;
    return problem === null ? ok(names) : refuse(problem);
  };
}
