import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../src/api/errors.js';
import { toWireFilters } from '../../../src/api/filters.js';

const renamed: Record<string, string> = {
  jurisdiction: 'license_jurisdiction',
  page: 'p',
  per_page: 'limit',
};
const wireName = (name: string): string => renamed[name] ?? name;

describe('toWireFilters', () => {
  it('maps canonical names to wire names, page and per_page included', () => {
    expect(
      toWireFilters({ per_page: 500, page: 2, jurisdiction: 'mga', has_affiliate_programs: false }, wireName),
    ).toEqual([
      ['license_jurisdiction', 'mga'],
      ['has_affiliate_programs', false],
      ['limit', 500],
      ['p', 2],
    ]);
  });

  it('drops undefined and null values', () => {
    expect(toWireFilters({ geo: undefined, jurisdiction: null } as never, wireName)).toEqual([]);
  });

  it.each([
    [{ per_page: 501 }, 'per_page must be an integer from 1 to 500'],
    [{ per_page: 0 }, 'per_page'],
    [{ page: 1.5 }, 'page'],
    [{ jurisdicton: 'mga' }, 'unknown filter "jurisdicton"'],
    [{ has_affiliate_programs: 'yes' }, 'has_affiliate_programs must be a boolean'],
  ])('refuses %j before sending', (filters, message) => {
    expect(() => toWireFilters(filters as never, wireName)).toThrow(InvalidArgumentError);
    expect(() => toWireFilters(filters as never, wireName)).toThrow(message);
  });
});
