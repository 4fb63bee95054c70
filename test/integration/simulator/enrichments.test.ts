import { describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../../src/simulator/index.js';
import { startTestSimulator } from '../../helpers/start-simulator.js';
import { call } from './http.js';

const DAY = 86_400_000;

function staleDomains(sim: RunningSimulator, count: number): string[] {
  const now = sim.control.now();
  return sim.control.truth
    .listDomains()
    .filter((d) => now - Date.parse(sim.control.truth.profile(d)!.last_enriched_at) > 2 * DAY)
    .slice(0, count);
}

describe('POST /enrichments and GET /enrichment_runs/:id', () => {
  it('starts a run (202, 10 credits reserved), then settles it when it completes', async () => {
    const sim = await startTestSimulator({ domains: 50, runFailureRate: 0 });
    const [domain] = staleDomains(sim, 1) as [string];
    const started = await call(sim, 'POST', '/enrichments', { body: { domain } });
    expect(started.status).toBe(202);
    expect(typeof started.body.message).toBe('string');
    const runId = started.body.data.enrichment_run_id;
    expect(started.body.data).toEqual({
      enrichment_run_id: runId,
      poll_url: `/api/v1/igaming/enrichment_runs/${runId}`,
      cached: false,
      billable: true,
    });
    expect(sim.control.account()).toMatchObject({
      credits_used: 0,
      credits_reserved: 10,
      available_credits: 99_990,
    });

    const pending = await call(sim, 'GET', `/enrichment_runs/${runId}`);
    expect(pending.body.data).toMatchObject({
      id: runId,
      status: 'pending',
      domain,
      strategy: 'full',
      completed_at: null,
    });
    expect(pending.body.data).not.toHaveProperty('enrichment');

    sim.control.advanceClock(120_001);
    const done = await call(sim, 'GET', `/enrichment_runs/${runId}`);
    expect(done.body.data).toMatchObject({ id: runId, status: 'completed', domain, strategy: 'full' });
    expect(done.body.data.enrichment).toEqual({
      domain_normalized: domain,
      status: 'enriched',
      last_enriched_at: done.body.data.completed_at,
    });
    const durationMs = Date.parse(done.body.data.completed_at) - Date.parse(done.body.data.started_at);
    expect(durationMs).toBeGreaterThanOrEqual(30_000);
    expect(durationMs).toBeLessThanOrEqual(120_000);
    expect(sim.control.account()).toMatchObject({
      credits_used: 10,
      credits_reserved: 0,
      available_credits: 99_990,
    });
    expect(sim.control.truth.profile(domain)!.last_enriched_at).toBe(done.body.data.completed_at);
    expect(sim.control.usage().find((u) => u.endpoint === 'POST /enrichments')).toMatchObject({
      status: 202,
      credits: 10,
      runId,
      domain,
    });
  });

  it('serves a recent enrichment from cache at 0 credits, and bills again once the window has passed', async () => {
    const sim = await startTestSimulator({ domains: 50, cacheWindowMs: 60_000 });
    const [domain] = staleDomains(sim, 1) as [string];
    sim.control.mutate.reenrich(domain);
    const cached = await call(sim, 'POST', '/enrichments', { body: { domain, strategy: 'full' } });
    expect(cached.status).toBe(200);
    expect(cached.body.data).toEqual({
      domain,
      status: 'enriched',
      last_enriched_at: sim.control.truth.profile(domain)!.last_enriched_at,
      meta: { served_from_cache: true, billable: false },
    });
    expect(sim.control.account()).toMatchObject({ credits_used: 0, credits_reserved: 0 });
    sim.control.advanceClock(60_001);
    expect((await call(sim, 'POST', '/enrichments', { body: { domain } })).status).toBe(202);
    expect(sim.control.usage().map((u) => u.credits)).toEqual([0, 10]);
  });

  it('uses the timeScale for durations (timeScale 0.01 → at most 1.2 s)', async () => {
    const sim = await startTestSimulator({ domains: 50, timeScale: 0.01, runFailureRate: 0 });
    const [domain] = staleDomains(sim, 1) as [string];
    const started = await call(sim, 'POST', '/enrichments', { body: { domain, strategy: 'quick' } });
    sim.control.advanceClock(1_201);
    const run = sim.control.truth.run(started.body.data.enrichment_run_id) as {
      status: string;
      strategy: string;
    };
    expect(run).toMatchObject({ status: 'completed', strategy: 'quick' });
  });

  it('ends failed runs with error_details and releases their credits', async () => {
    const sim = await startTestSimulator({ domains: 50, runFailureRate: 1 });
    const [domain] = staleDomains(sim, 1) as [string];
    const started = await call(sim, 'POST', '/enrichments', { body: { domain } });
    sim.control.advanceClock(120_001);
    const failed = await call(sim, 'GET', `/enrichment_runs/${started.body.data.enrichment_run_id}`);
    expect(failed.body.data).toMatchObject({ status: 'failed', error_details: { error_type: 'timeout' } });
    expect(typeof failed.body.data.error_details.error).toBe('string');
    expect(failed.body.data.completed_at).not.toBeNull();
    expect(sim.control.account()).toMatchObject({
      credits_used: 0,
      credits_reserved: 0,
      available_credits: 100_000,
    });
    expect(sim.control.usage()[0]).toMatchObject({ credits: 10, refundedCredits: 10 });
  });

  it('answers 429 quota_exceeded exactly per spec when fewer than 10 credits are available', async () => {
    const sim = await startTestSimulator({ domains: 50, credits: 15 });
    const [a, b] = staleDomains(sim, 2) as [string, string];
    expect((await call(sim, 'POST', '/enrichments', { body: { domain: a } })).status).toBe(202);
    const refused = await call(sim, 'POST', '/enrichments', { body: { domain: b } });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      error: {
        code: 'quota_exceeded',
        message: expect.any(String),
        details: { granted: 15, used: 0, reserved: 10 },
      },
    });
    expect(sim.control.account()).toMatchObject({
      credits_granted: 15,
      credits_reserved: 10,
      available_credits: 5,
    });
    expect(sim.control.usage().at(-1)).toMatchObject({ status: 429, credits: 0 });
    sim.control.setCredits(null);
    expect((await call(sim, 'POST', '/enrichments', { body: { domain: b } })).status).toBe(202);
    const account = await call(sim, 'GET', '/account');
    expect(account.body.data).toEqual({
      plan: 'simulator',
      credits_granted: null,
      credits_used: 0,
      credits_reserved: 20,
      available_credits: 2_147_483_647,
    });
  });

  it('validates the body, 404s unknown domains and unknown run ids', async () => {
    const sim = await startTestSimulator({ domains: 20 });
    const bad = await call(sim, 'POST', '/enrichments', { body: { strategy: 'full' } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toHaveProperty('domain');
    expect((await call(sim, 'POST', '/enrichments', { body: { domain: 'nope.example' } })).status).toBe(404);
    const unknownRun = await call(sim, 'GET', '/enrichment_runs/999');
    expect(unknownRun.status).toBe(404);
    expect(unknownRun.body).toMatchObject({ success: false, errors: {} });
    expect(sim.control.account().credits_reserved).toBe(0);
  });

  it('chooses durations and outcomes deterministically per (seed, run id)', async () => {
    const outcomes = async (): Promise<unknown[]> => {
      const sim = await startTestSimulator({ domains: 200, seed: 9, runFailureRate: 0.5 });
      const ids: number[] = [];
      for (const domain of staleDomains(sim, 12))
        ids.push((await call(sim, 'POST', '/enrichments', { body: { domain } })).body.data.enrichment_run_id);
      sim.control.advanceClock(120_001);
      return ids.map((id) => {
        const run = sim.control.truth.run(id) as { status: string; started_at: string; completed_at: string };
        return [run.status, Date.parse(run.completed_at) - Date.parse(run.started_at)];
      });
    };
    const first = await outcomes();
    expect(await outcomes()).toEqual(first);
    expect(new Set(first.map((o) => (o as [string])[0]))).toEqual(new Set(['completed', 'failed']));
  });
});
