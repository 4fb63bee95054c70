import { CANONICAL_FILTERS } from '../../src/config/defaults.js';
import { normalizeTimestamp } from '../../src/util/time.js';
import { describeValue } from './checks.js';
import type { Checked, StepType } from './schema.js';

/*
 * Filters, one meaning whether they come from `--filter NAME=VALUE` flags or a step's `filters`
 * object: canonical names only (the same in the config and export `filters`), each value
 * converted the same way (a step may write `true` or `"true"`, `50` or `"50"`).
 */

const BOOLEAN_FILTERS = new Set(['has_affiliate_programs']);
const INTEGER_FILTERS = new Set(['per_page', 'page']);

/** Rules of one step's filters. */
export interface FilterRules {
  type: StepType;
  /** Filters the pipeline manages itself (`page`). */
  forbid: readonly string[];
  /** When set, the only filters the step understands, and why. */
  only?: { names: readonly string[]; why: string };
}

/** Checks a filter object (canonical name → value) and converts its values. */
export function filterObject(rules: FilterRules): (value: unknown) => Checked {
  return (value) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return { ok: false, problem: `expected an object of filter name → value, got ${describeValue(value)}` };
    }
    const filters: Record<string, string | number | boolean> = {};
    for (const [name, raw] of Object.entries(value)) {
      const checked = filterValue(rules, name, raw);
      if (typeof checked === 'string') {
        const cliArg = typeof raw === 'object' ? name : `${name}=${String(raw)}`;
        return { ok: false, problem: checked, item: name, cliArg };
      }
      filters[name] = checked.value;
    }
    return { ok: true, value: filters };
  };
}

/** One filter's value, converted; or the problem. */
function filterValue(
  rules: FilterRules,
  name: string,
  raw: unknown,
): { value: string | number | boolean } | string {
  if (!(CANONICAL_FILTERS as readonly string[]).includes(name)) {
    return `unknown filter "${name}" (known: ${CANONICAL_FILTERS.join(', ')})`;
  }
  if (rules.forbid.includes(name)) return `"${name}" is managed by ${rules.type} itself`;
  if (rules.only !== undefined && !rules.only.names.includes(name)) {
    return `${rules.type} ${rules.only.why} and understands only ${rules.only.names.join(', ')}`;
  }
  if (!['string', 'number', 'boolean'].includes(typeof raw)) {
    return `expected a string, number or boolean, got ${describeValue(raw)}`;
  }
  const text = String(raw).trim();
  if (text === '') return 'empty value';
  if (BOOLEAN_FILTERS.has(name)) {
    if (!/^(true|false|1|0)$/i.test(text)) return 'expected true or false';
    return { value: /^(true|1)$/i.test(text) };
  }
  if (INTEGER_FILTERS.has(name)) {
    const n = Number(text);
    if (!Number.isInteger(n) || n < 1 || (name === 'per_page' && n > 500)) {
      return `expected a whole number${name === 'per_page' ? ' from 1 to 500' : ' ≥ 1'}`;
    }
    return { value: n };
  }
  if (name === 'enriched_after') {
    const ts = normalizeTimestamp(text);
    return ts === null ? 'expected an ISO 8601 timestamp' : { value: ts };
  }
  return { value: text };
}
