import { describe, expect, it } from 'vitest';
import { Catalogue, normalizeDomain, profileMatches } from '../../../src/simulator/catalogue.js';
import type { DomainFilters } from '../../../src/simulator/filters.js';

const EPOCH = Date.parse('2025-06-01T00:00:00.000Z');
const make = (seed = 1, domains = 300, quirks = false): Catalogue =>
  new Catalogue({ seed, domains, quirks, epochMs: EPOCH });

describe('Catalogue', () => {
  it('is deterministic for a seed and differs between seeds', () => {
    const a = make(7);
    const b = make(7);
    const c = make(8);
    const ids = [0, 1, 42, 299];
    expect(ids.map((id) => a.profile(id))).toEqual(ids.map((id) => b.profile(id)));
    expect(ids.map((id) => a.profile(id))).not.toEqual(ids.map((id) => c.profile(id)));
  });

  it('generates realistic, canonical profiles', () => {
    const cat = make(1, 500);
    for (let id = 0; id < 500; id++) {
      const p = cat.profile(id);
      expect(p.company_name).toBe(p.operator.name);
      expect(p.licenses.length).toBeLessThanOrEqual(4);
      expect(new Set(p.licenses.map((l) => l.jurisdiction)).size).toBe(p.licenses.length);
      expect(p.payment_methods.length).toBeGreaterThanOrEqual(1);
      expect(p.payment_methods.length).toBeLessThanOrEqual(8);
      expect(p.last_enriched_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(Date.parse(p.last_enriched_at)).toBeLessThan(EPOCH);
      for (const l of p.licenses) expect(l.status).toBe('active');
      for (const m of p.payment_methods) expect(m.confidence).toBe('high');
      expect(p.operator.country_of_incorporation).toMatch(/^[A-Z]{2}$/);
    }
  });

  it('filters with the cheap path exactly as on full profiles', () => {
    const cat = make(3, 400);
    const cases: DomainFilters[] = [
      { jurisdiction: 'mga' },
      { payment_category: 'crypto', exclude_payment_category: 'card' },
      { game_provider: 'netent' },
      { game_provider: 'pragmatic play' },
      { exclude_provider: 'evolution' },
      { has_affiliate_programs: true },
      { has_affiliate_programs: false },
      { geo: 'gb' },
      { enriched_after: EPOCH - 30 * 86_400_000 },
      { jurisdiction: 'ukgc', payment_category: 'ewallet', has_affiliate_programs: true },
    ];
    for (const filters of cases) {
      const fast = Array.from(cat.list(filters));
      const slow = [];
      for (let id = 0; id < 400; id++) if (profileMatches(cat.generate(id), filters)) slow.push(id);
      expect(fast, JSON.stringify(filters)).toEqual(slow);
      expect(fast.length, JSON.stringify(filters)).toBeGreaterThan(0);
    }
  });

  it('finds domains by normalised name and rejects look-alikes', () => {
    const cat = make();
    const name = cat.profile(17).domain_normalized;
    expect(cat.idOf(name)).toBe(17);
    expect(cat.idOf(`WWW.${name.toUpperCase()}.`)).toBe(17);
    expect(cat.idOf(name.replace('17', '18'))).toBeUndefined();
    expect(cat.idOf('unknown.example')).toBeUndefined();
    expect(cat.idOf(name.replace('17', '999999'))).toBeUndefined();
  });

  it('adds at the start or end and removes, invalidating cached lists', () => {
    const cat = make(1, 10);
    expect(cat.count()).toBe(10);
    const first = cat.add('start', EPOCH, 'brand-new.example');
    const second = cat.add('start', EPOCH);
    const last = cat.add('end', EPOCH);
    const order = Array.from(cat.list({}));
    expect(order[0]).toBe(second);
    expect(order[1]).toBe(first);
    expect(order.at(-1)).toBe(last);
    expect(cat.idOf('brand-new.example')).toBe(first);
    expect(cat.idOf(cat.profile(second).domain_normalized)).toBe(second);
    cat.remove(3);
    expect(cat.count()).toBe(12);
    expect(Array.from(cat.list({}))).not.toContain(3);
    expect(cat.idOf(cat.generatedName(3))).toBeUndefined();
    expect(() => cat.add('end', EPOCH, 'brand-new.example')).toThrow(/already exists/);
  });

  it('quirks mode produces Unicode names, unseen enum values and nulls, deterministically', () => {
    const cat = make(1, 2000, true);
    const profiles = Array.from({ length: 2000 }, (_, id) => cat.profile(id));
    const unicode = profiles.filter((p) => /[^ -~]/.test(p.domain_normalized));
    expect(unicode.length).toBeGreaterThan(0);
    expect(cat.idOf(unicode[0]!.domain_normalized)).toBe(profiles.indexOf(unicode[0]!));
    expect(profiles.some((p) => p.licenses.some((l) => l.status === 'suspended'))).toBe(true);
    expect(profiles.some((p) => p.payment_methods.some((m) => m.confidence === 'medium'))).toBe(true);
    expect(profiles.some((p) => p.operator.legal_entity_name === null)).toBe(true);
    expect(profiles.some((p) => p.licenses.some((l) => l.source_url === null))).toBe(true);
    expect(profiles.some((p) => p.game_providers.length === 0)).toBe(true);
    expect(make(1, 2000, true).profile(unicode[0]!.domain_normalized.length)).toEqual(
      cat.profile(unicode[0]!.domain_normalized.length),
    );
  });

  it('normalises punycode to Unicode', () => {
    expect(normalizeDomain('xn--80adxhks.xn--p1ai')).toBe('москва.рф');
    expect(normalizeDomain(' WWW.Example.COM. ')).toBe('example.com');
  });
});
