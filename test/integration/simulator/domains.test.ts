import { domainToASCII } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startTestSimulator } from '../../helpers/start-simulator.js';
import { call } from './http.js';

const EPOCH = Date.parse('2025-06-01T00:00:00.000Z');

describe('GET /domains', () => {
  it('pages in the documented order with default per_page 50 and page 1', async () => {
    const sim = await startTestSimulator({ domains: 120, epochMs: EPOCH });
    const first = await call(sim, 'GET', '/domains');
    expect(first.status).toBe(200);
    expect(first.body.success).toBe(true);
    expect(first.body.data).toMatchObject({ total: 120, page: 1, per_page: 50 });
    expect(first.body.data.domains).toHaveLength(50);
    expect(Object.keys(first.body.data.domains[0]).sort()).toEqual([
      'company_name',
      'domain_normalized',
      'last_enriched_at',
    ]);
    const all: string[] = [];
    for (let page = 1; page <= 3; page++) {
      const reply = await call(sim, 'GET', `/domains?per_page=50&page=${page}`);
      all.push(...reply.body.data.domains.map((d: { domain_normalized: string }) => d.domain_normalized));
    }
    expect(all).toEqual(sim.control.truth.listDomains());
    expect((await call(sim, 'GET', '/domains?page=4')).body.data.domains).toEqual([]);
  });

  it('really filters, consistently with the truth', async () => {
    const sim = await startTestSimulator({ domains: 300, epochMs: EPOCH });
    const filters: Array<Record<string, string>> = [
      { jurisdiction: 'mga' },
      { payment_category: 'crypto' },
      { game_provider: 'netent' },
      { exclude_provider: 'netent' },
      { exclude_payment_category: 'card' },
      { has_affiliate_programs: 'true' },
      { geo: 'GB' },
      { enriched_after: new Date(EPOCH - 60 * 86_400_000).toISOString() },
      { jurisdiction: 'ukgc', payment_category: 'ewallet' },
    ];
    for (const f of filters) {
      const reply = await call(sim, 'GET', `/domains?${new URLSearchParams({ ...f, per_page: '500' })}`);
      const names = reply.body.data.domains.map((d: { domain_normalized: string }) => d.domain_normalized);
      const truth = sim.control.truth.listDomains(f);
      expect(names, JSON.stringify(f)).toEqual(truth);
      expect(truth.length).toBeGreaterThan(0);
      expect(truth.length).toBeLessThan(300);
      for (const name of truth.slice(0, 10)) {
        const p = sim.control.truth.profile(name)!;
        if (f.jurisdiction) expect(p.licenses.some((l) => l.jurisdiction === f.jurisdiction)).toBe(true);
        if (f.exclude_payment_category)
          expect(p.payment_methods.some((m) => m.category === f.exclude_payment_category)).toBe(false);
        if (f.enriched_after) expect(p.last_enriched_at > f.enriched_after).toBe(true);
      }
    }
  });

  it('answers 400 with the documented validation body for unknown parameters and bad values', async () => {
    const sim = await startTestSimulator({ domains: 20 });
    const reply = await call(sim, 'GET', '/domains?colour=red&per_page=501&jurisdiction=mars&page=x');
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ success: false, message: 'Validation failed' });
    expect(Object.keys(reply.body.errors).sort()).toEqual(['colour', 'jurisdiction', 'page', 'per_page']);
    expect((await call(sim, 'GET', '/domains?per_page=500')).status).toBe(200);
    expect((await call(sim, 'GET', '/domains?geo=gb&geo=de')).status).toBe(400);
  });

  it('uses the configured wire names for filters and paging', async () => {
    const sim = await startTestSimulator({
      domains: 60,
      queryParamNames: { jurisdiction: 'licence', per_page: 'limit', page: 'p' },
    });
    const reply = await call(sim, 'GET', '/domains?licence=mga&limit=5&p=2');
    expect(reply.status).toBe(200);
    expect(reply.body.data).toMatchObject({ page: 2, per_page: 5 });
    expect(reply.body.data.domains.map((d: { domain_normalized: string }) => d.domain_normalized)).toEqual(
      sim.control.truth.listDomains({ jurisdiction: 'mga' }).slice(5, 10),
    );
    expect((await call(sim, 'GET', '/domains?jurisdiction=mga')).status).toBe(400);
  });

  it('lists added domains at the start or end and forgets removed ones', async () => {
    const sim = await startTestSimulator({ domains: 30 });
    const added = sim.control.mutate.addDomain({ position: 'start' });
    const tail = sim.control.mutate.addDomain({ domain: 'new-casino.example' });
    expect(tail).toBe('new-casino.example');
    const victim = sim.control.truth.listDomains()[5]!;
    sim.control.mutate.removeDomain(victim);
    const reply = await call(sim, 'GET', '/domains?per_page=500');
    const names = reply.body.data.domains.map((d: { domain_normalized: string }) => d.domain_normalized);
    expect(names[0]).toBe(added);
    expect(names.at(-1)).toBe(tail);
    expect(names).not.toContain(victim);
    expect(reply.body.data.total).toBe(31);
    expect((await call(sim, 'GET', `/domains/${victim}`)).status).toBe(404);
  });

  it('awaits the onListPage hook after computing a page, so a mutation shows on later pages only', async () => {
    const sim = await startTestSimulator({ domains: 20 });
    const seen: number[] = [];
    sim.control.onListPage((page) => {
      seen.push(page);
      if (page === 1) sim.control.mutate.addDomain({ position: 'start' });
    });
    const p1 = await call(sim, 'GET', '/domains?per_page=10&page=1');
    const p2 = await call(sim, 'GET', '/domains?per_page=10&page=2');
    expect(seen).toEqual([1, 2]);
    expect(p1.body.data.total).toBe(20);
    expect(p2.body.data.total).toBe(21);
    // The prepended domain shifted everything by one: the last domain of page 1 appears again.
    expect(p2.body.data.domains[0]).toEqual(p1.body.data.domains[9]);
    sim.control.onListPage(null);
  });
});

describe('GET /domains/:domain', () => {
  it('returns the profile per spec with every section by default, and meta', async () => {
    const sim = await startTestSimulator({ domains: 50, epochMs: EPOCH });
    const name = sim.control.truth.listDomains()[3]!;
    const reply = await call(sim, 'GET', `/domains/${encodeURIComponent(name)}`);
    expect(reply.status).toBe(200);
    const data = reply.body.data;
    const truth = sim.control.truth.profile(name)!;
    expect(data).toMatchObject({
      domain: name,
      domain_normalized: name,
      status: 'enriched',
      last_enriched_at: truth.last_enriched_at,
    });
    expect(data.operator).toEqual(truth.operator);
    expect(data.brand).toEqual(truth.brand);
    expect(data.licenses).toEqual(truth.licenses);
    expect(data.payment_methods).toEqual(truth.payment_methods);
    for (const section of ['game_providers', 'affiliate_programs', 'geo', 'related_domains'])
      expect(data).toHaveProperty(section);
    expect(data.meta).toMatchObject({
      served_from_cache: true,
      billable: false,
      observed_at: truth.last_enriched_at,
    });
    expect(Number.isInteger(data.meta.freshness_age_seconds)).toBe(true);
    expect(sim.control.usage().at(-1)).toMatchObject({
      endpoint: 'GET /domains/:domain',
      credits: 0,
      domain: name,
    });
  });

  it('returns only the sections named by include[] (both spellings) and 400 for unknown ones', async () => {
    const sim = await startTestSimulator({ domains: 50 });
    const name = sim.control.truth.listDomains()[0]!;
    const one = await call(sim, 'GET', `/domains/${name}?include[]=licenses`);
    expect(one.body.data).toHaveProperty('licenses');
    expect(one.body.data).not.toHaveProperty('payment_methods');
    expect(one.body.data).not.toHaveProperty('geo');
    const two = await call(
      sim,
      'GET',
      `/domains/${name}?${encodeURIComponent('include[]')}=geo&${encodeURIComponent('include[]')}=payment_methods`,
    );
    expect(Object.keys(two.body.data)).toEqual(expect.arrayContaining(['geo', 'payment_methods']));
    expect(two.body.data).not.toHaveProperty('licenses');
    expect((await call(sim, 'GET', `/domains/${name}?include[]=secrets`)).status).toBe(400);
  });

  it('answers 404 for an unknown domain and finds a domain by a non-normalised spelling', async () => {
    const sim = await startTestSimulator({ domains: 50 });
    const reply = await call(sim, 'GET', '/domains/no-such-domain.example');
    expect(reply.status).toBe(404);
    expect(reply.body).toMatchObject({ success: false, message: 'Domain not found', errors: {} });
    const name = sim.control.truth.listDomains()[1]!;
    const upper = await call(sim, 'GET', `/domains/WWW.${name.toUpperCase()}`);
    expect(upper.status).toBe(200);
    expect(upper.body.data).toMatchObject({ domain: `WWW.${name.toUpperCase()}`, domain_normalized: name });
  });

  it('serves Unicode domains, percent-encoded or as punycode', async () => {
    const sim = await startTestSimulator({ domains: 20 });
    const name = sim.control.mutate.addDomain({ domain: 'казино.рф' });
    const reply = await call(sim, 'GET', `/domains/${encodeURIComponent(name)}`);
    expect(reply.status).toBe(200);
    expect(reply.body.data.domain_normalized).toBe('казино.рф');
    const puny = await call(sim, 'GET', `/domains/${domainToASCII('казино.рф')}`);
    expect(puny.body.data.domain_normalized).toBe('казино.рф');
  });
});
