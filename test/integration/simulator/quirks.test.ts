import { describe, expect, it } from 'vitest';
import { normalizeTimestamp } from '../../../src/util/time.js';
import { startTestSimulator } from '../../helpers/start-simulator.js';
import { call } from './http.js';

describe('quirks mode', () => {
  it('uses unseen enum values, extra fields, other timestamp spellings, nulls and Unicode names; truth stays canonical', async () => {
    const sim = await startTestSimulator({ domains: 600, quirks: true });
    const names: string[] = [];
    for (let page = 1; page <= 2; page++) {
      const reply = await call(sim, 'GET', `/domains?per_page=300&page=${page}`);
      names.push(...reply.body.data.domains.map((d: { domain_normalized: string }) => d.domain_normalized));
      expect(reply.body.data.domains[0]).toHaveProperty('x_sim_revision');
    }
    expect(names.some((n) => /[^ -~]/.test(n))).toBe(true);
    const stamps: string[] = [];
    const statuses = new Set<string>();
    const confidences = new Set<string>();
    let nullLegal = 0;
    let emptySections = 0;
    for (const name of names.slice(0, 300)) {
      const reply = await call(sim, 'GET', `/domains/${encodeURIComponent(name)}`);
      expect(reply.status).toBe(200);
      const data = reply.body.data;
      expect(data).toHaveProperty('x_sim_revision');
      stamps.push(
        data.last_enriched_at,
        ...data.licenses.map((l: { first_seen_at: string }) => l.first_seen_at),
      );
      for (const l of data.licenses) statuses.add(l.status);
      for (const m of data.payment_methods) confidences.add(m.confidence);
      if (data.operator.legal_entity_name === null) nullLegal++;
      if (data.game_providers.length === 0 || data.geo.target_countries.length === 0) emptySections++;
      const truth = sim.control.truth.profile(name)!;
      expect(truth).not.toHaveProperty('x_sim_revision');
      expect(normalizeTimestamp(data.last_enriched_at)).toBe(truth.last_enriched_at);
    }
    expect(stamps.some((s) => s.endsWith('+00:00'))).toBe(true);
    expect(stamps.some((s) => /:\d{2}Z$/.test(s))).toBe(true);
    expect(statuses.has('suspended')).toBe(true);
    expect(confidences.has('medium')).toBe(true);
    expect(nullLegal).toBeGreaterThan(0);
    expect(emptySections).toBeGreaterThan(0);
  });

  it('shows unseen run error types and export statuses', async () => {
    const sim = await startTestSimulator({ domains: 200, quirks: true, runFailureRate: 1, timeScale: 0.01 });
    const now = sim.control.now();
    const stale = sim.control.truth
      .listDomains()
      .filter((d) => now - Date.parse(sim.control.truth.profile(d)!.last_enriched_at) > 2 * 86_400_000);
    for (const domain of stale.slice(0, 12)) await call(sim, 'POST', '/enrichments', { body: { domain } });
    const created = await call(sim, 'POST', '/exports', { body: {} });
    expect((await call(sim, 'GET', `/exports/${created.body.data.export_id}`)).body.data.status).toBe(
      'processing',
    );
    sim.control.advanceClock(2_000);
    const types = new Set<string>();
    for (let id = 1; id <= 12; id++)
      types.add((await call(sim, 'GET', `/enrichment_runs/${id}`)).body.data.error_details.error_type);
    expect(types.size).toBeGreaterThan(1);
    sim.control.advanceClock(3_600_000);
    expect((await call(sim, 'GET', `/exports/${created.body.data.export_id}`)).body.data.status).toBe(
      'expired',
    );
  });

  it('is deterministic for a seed', async () => {
    const a = await startTestSimulator({
      domains: 100,
      quirks: true,
      seed: 4,
      epochMs: Date.parse('2025-01-01T00:00:00Z'),
    });
    const b = await startTestSimulator({
      domains: 100,
      quirks: true,
      seed: 4,
      epochMs: Date.parse('2025-01-01T00:00:00Z'),
    });
    const c = await startTestSimulator({
      domains: 100,
      quirks: true,
      seed: 5,
      epochMs: Date.parse('2025-01-01T00:00:00Z'),
    });
    const page = async (sim: typeof a): Promise<string> =>
      (await call(sim, 'GET', '/domains?per_page=100')).text;
    expect(await page(a)).toBe(await page(b));
    expect(await page(a)).not.toBe(await page(c));
  });
});
