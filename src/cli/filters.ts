import { CANONICAL_FILTERS } from '../config/defaults.js';
import { UsageError } from '../util/domain-sync-error.js';
import { normalizeTimestamp } from '../util/time.js';

const BOOLEAN_FILTERS = new Set(['has_affiliate_programs']);
const INTEGER_FILTERS = new Set(['per_page', 'page']);

/**
 * Parses repeated `--filter NAME=VALUE` flags into canonical filters (docs/contract.md "Filter
 * names"). Unknown names, repeated names and bad values are usage errors naming the flag.
 */
export function parseFilterFlags(
  values: readonly string[] | undefined,
  options: { forbid?: readonly string[] } = {},
): Record<string, string | number | boolean> {
  const filters: Record<string, string | number | boolean> = {};
  for (const raw of values ?? []) {
    const eq = raw.indexOf('=');
    if (eq <= 0)
      throw new UsageError(`--filter "${raw}": expected NAME=VALUE, e.g. --filter jurisdiction=mga`);
    const name = raw.slice(0, eq).trim();
    const value = raw.slice(eq + 1).trim();
    if (!(CANONICAL_FILTERS as readonly string[]).includes(name)) {
      throw new UsageError(
        `--filter "${raw}": unknown filter "${name}" (known: ${CANONICAL_FILTERS.join(', ')})`,
      );
    }
    if (options.forbid?.includes(name))
      throw new UsageError(`--filter "${raw}": "${name}" is managed by this command`);
    if (name in filters) throw new UsageError(`--filter "${raw}": "${name}" given twice`);
    if (value === '') throw new UsageError(`--filter "${raw}": empty value`);
    if (BOOLEAN_FILTERS.has(name)) {
      if (!/^(true|false|1|0)$/i.test(value))
        throw new UsageError(`--filter "${raw}": expected true or false`);
      filters[name] = /^(true|1)$/i.test(value);
    } else if (INTEGER_FILTERS.has(name)) {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 1 || (name === 'per_page' && n > 500)) {
        throw new UsageError(
          `--filter "${raw}": expected a whole number${name === 'per_page' ? ' from 1 to 500' : ' ≥ 1'}`,
        );
      }
      filters[name] = n;
    } else if (name === 'enriched_after') {
      const ts = normalizeTimestamp(value);
      if (ts === null) throw new UsageError(`--filter "${raw}": expected an ISO 8601 timestamp`);
      filters[name] = ts;
    } else {
      filters[name] = value;
    }
  }
  return filters;
}
