import { describe, expect, it } from 'vitest';
import { parseFilters } from '../../../src/simulator/filters.js';

describe('parseFilters', () => {
  it('parses every canonical filter and the paging defaults', () => {
    const r = parseFilters({
      jurisdiction: 'MGA',
      payment_category: 'crypto',
      game_provider: 'NetEnt',
      exclude_provider: 'evolution',
      exclude_payment_category: 'card',
      has_affiliate_programs: 'true',
      geo: 'GB',
      enriched_after: '2025-01-01T00:00:00+00:00',
    });
    expect(r.errors).toEqual({});
    expect(r.filters).toEqual({
      jurisdiction: 'mga',
      payment_category: 'crypto',
      game_provider: 'netent',
      exclude_provider: 'evolution',
      exclude_payment_category: 'card',
      has_affiliate_programs: true,
      geo: 'gb',
      enriched_after: Date.parse('2025-01-01T00:00:00.000Z'),
    });
    expect([r.page, r.perPage]).toEqual([1, 50]);
  });

  it('reports bad values under their wire names', () => {
    const r = parseFilters(
      {
        jurisdiction: 'mars',
        per_page: '501',
        page: '0',
        enriched_after: 'yesterday',
        has_affiliate_programs: 'maybe',
      },
      (n) => `q_${n}`,
    );
    expect(Object.keys(r.errors).sort()).toEqual([
      'q_enriched_after',
      'q_has_affiliate_programs',
      'q_jurisdiction',
      'q_page',
      'q_per_page',
    ]);
  });

  it('refuses paging inside export filters', () => {
    expect(parseFilters({ page: '1' }, undefined, { paging: false }).errors).toEqual({
      page: ['is not an export filter'],
    });
  });
});
