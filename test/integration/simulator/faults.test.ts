import { describe, expect, it } from 'vitest';
import { startTestSimulator } from '../../helpers/start-simulator.js';
import { call } from './http.js';

describe('fault injection', () => {
  it("'status' answers the status with Retry-After, then the rule runs out after `times`", async () => {
    const sim = await startTestSimulator({ domains: 20 });
    sim.control.setFaults([
      { kind: 'status', status: 502, retryAfterSeconds: 3, path: '/account', times: 1 },
    ]);
    const faulted = await call(sim, 'GET', '/account');
    expect(faulted.status).toBe(502);
    expect(faulted.headers.get('retry-after')).toBe('3');
    expect(faulted.body).toMatchObject({ success: false });
    expect((await call(sim, 'GET', '/account')).status).toBe(200);
    expect(sim.control.faultStats()).toEqual({ injected: { status: 1 }, total: 1 });
  });

  it("'status' defaults to 503 and matches method and path prefix only", async () => {
    const sim = await startTestSimulator({ domains: 20 });
    sim.control.setFaults([{ kind: 'status', method: 'GET', path: '/domains/' }]);
    expect((await call(sim, 'GET', '/domains')).status).toBe(200);
    const name = sim.control.truth.listDomains()[0]!;
    expect((await call(sim, 'GET', `/domains/${name}`)).status).toBe(503);
  });

  it("'rate_limit' gives a 429 that is not quota_exceeded, with Retry-After (default 1)", async () => {
    const sim = await startTestSimulator({ domains: 20 });
    sim.control.setFaults([{ kind: 'rate_limit' }]);
    const reply = await call(sim, 'GET', '/domains');
    expect(reply.status).toBe(429);
    expect(reply.headers.get('retry-after')).toBe('1');
    expect(reply.body.error.code).toBe('rate_limited');
  });

  it("'reset' destroys the connection", async () => {
    const sim = await startTestSimulator({ domains: 20 });
    sim.control.setFaults([{ kind: 'reset', times: 1 }]);
    await expect(call(sim, 'GET', '/account')).rejects.toThrow();
    expect((await call(sim, 'GET', '/account')).status).toBe(200);
    expect(sim.control.usage()[0]).toMatchObject({ status: 0, credits: 0 });
  });

  it("'latency' delays but still answers, and is counted", async () => {
    const sim = await startTestSimulator({ domains: 20 });
    sim.control.setFaults([{ kind: 'latency', latencyMs: 20 }]);
    expect((await call(sim, 'GET', '/account')).status).toBe(200);
    expect(sim.control.faultStats().injected.latency).toBe(1);
  });

  it("'truncate' sends the full Content-Length and part of the body", async () => {
    const sim = await startTestSimulator({ domains: 20 });
    sim.control.setFaults([{ kind: 'truncate', path: '/domains' }]);
    const res = await fetch(`${sim.baseUrl}/domains`, { headers: { 'X-API-Key': sim.apiKey } });
    expect(res.status).toBe(200);
    expect(Number(res.headers.get('content-length'))).toBeGreaterThan(100);
    await expect(res.text()).rejects.toThrow();
  });

  it("'malformed' sends 200 with a body that is not JSON", async () => {
    const sim = await startTestSimulator({ domains: 20 });
    sim.control.setFaults([{ kind: 'malformed' }]);
    const reply = await call(sim, 'GET', '/account');
    expect(reply.status).toBe(200);
    expect(() => JSON.parse(reply.text)).toThrow();
  });

  it('afterProcessing: the POST takes effect (credits reserved, run created) before the fault', async () => {
    const sim = await startTestSimulator({ domains: 50, runFailureRate: 0 });
    const now = sim.control.now();
    const domain = sim.control.truth
      .listDomains()
      .find((d) => now - Date.parse(sim.control.truth.profile(d)!.last_enriched_at) > 2 * 86_400_000)!;
    sim.control.setFaults([
      { kind: 'status', status: 500, method: 'POST', path: '/enrichments', afterProcessing: true, times: 1 },
    ]);
    expect((await call(sim, 'POST', '/enrichments', { body: { domain } })).status).toBe(500);
    expect(sim.control.account().credits_reserved).toBe(10);
    expect(sim.control.truth.run(1)).toMatchObject({ id: 1, status: 'pending', domain });
    expect(sim.control.usage()[0]).toMatchObject({ status: 500, credits: 10, runId: 1 });

    sim.control.setFaults([{ kind: 'reset', method: 'POST', afterProcessing: true, times: 1 }]);
    await expect(call(sim, 'POST', '/exports', { body: {} })).rejects.toThrow();
    expect(sim.control.truth.export(1)).toMatchObject({ id: 1 });
  });

  it('without afterProcessing the POST has no effect', async () => {
    const sim = await startTestSimulator({ domains: 50 });
    sim.control.setFaults([{ kind: 'truncate', method: 'POST' }]);
    const res = await fetch(`${sim.baseUrl}/exports`, {
      method: 'POST',
      headers: { 'X-API-Key': sim.apiKey },
      body: '{}',
    });
    await expect(res.text()).rejects.toThrow();
    expect(sim.control.truth.export(1)).toBeUndefined();
    expect(sim.control.account().credits_reserved).toBe(0);
  });

  it('probabilities are reproducible for a seed', async () => {
    const pattern = async (): Promise<number[]> => {
      const sim = await startTestSimulator({ domains: 10, seed: 5 });
      sim.control.setFaults([{ kind: 'status', probability: 0.5 }]);
      const statuses: number[] = [];
      for (let i = 0; i < 16; i++) statuses.push((await call(sim, 'GET', '/account')).status);
      return statuses;
    };
    const first = await pattern();
    expect(await pattern()).toEqual(first);
    expect(new Set(first)).toEqual(new Set([200, 503]));
  });

  it('clearFaults removes every rule', async () => {
    const sim = await startTestSimulator({ domains: 10 });
    sim.control.setFaults([{ kind: 'status' }]);
    sim.control.clearFaults();
    expect((await call(sim, 'GET', '/account')).status).toBe(200);
  });
});
