import { describe, expect, it } from 'vitest';
import { startTestSimulator } from '../../helpers/start-simulator.js';
import { call } from './http.js';

describe('simulator authentication (docs/service-api.md "Authentication")', () => {
  it('accepts X-API-Key and Authorization: Bearer', async () => {
    const sim = await startTestSimulator({ domains: 20 });
    expect((await call(sim, 'GET', '/account')).status).toBe(200);
    expect(
      (
        await call(sim, 'GET', '/account', {
          auth: false,
          headers: { Authorization: `Bearer ${sim.apiKey}` },
        })
      ).status,
    ).toBe(200);
  });

  it('gives the exact 401 body for a missing or invalid key', async () => {
    const sim = await startTestSimulator({ domains: 20 });
    const cases: Array<Record<string, string>> = [
      {},
      { 'X-API-Key': 'client_wrong' },
      { Authorization: 'Bearer client_wrong' },
      { Authorization: sim.apiKey },
    ];
    for (const headers of cases) {
      const reply = await call(sim, 'GET', '/domains', { auth: false, headers });
      expect(reply.status).toBe(401);
      expect(Object.keys(reply.body).sort()).toEqual(['errors', 'message', 'success', 'timestamp']);
      expect(reply.body).toMatchObject({ success: false, message: 'Unauthorized', errors: {} });
      expect(Number.isNaN(Date.parse(reply.body.timestamp))).toBe(false);
    }
  });

  it('lets X-API-Key win when both headers are present, even when it is the invalid one', async () => {
    const sim = await startTestSimulator({ domains: 20 });
    const bothBadKey = await call(sim, 'GET', '/account', {
      auth: false,
      headers: { 'X-API-Key': 'client_wrong', Authorization: `Bearer ${sim.apiKey}` },
    });
    expect(bothBadKey.status).toBe(401);
    const bothGoodKey = await call(sim, 'GET', '/account', {
      auth: false,
      headers: { 'X-API-Key': sim.apiKey, Authorization: 'Bearer client_wrong' },
    });
    expect(bothGoodKey.status).toBe(200);
    expect(sim.control.requests().map((r) => [r.auth, r.authValid])).toEqual([
      ['x-api-key', false],
      ['x-api-key', true],
    ]);
  });

  it('accepts every configured key and logs 401s in usage without storing the key', async () => {
    const sim = await startTestSimulator({ domains: 20, apiKeys: ['client_one', 'client_two'] });
    expect(sim.apiKey).toBe('client_one');
    expect(
      (await call(sim, 'GET', '/account', { auth: false, headers: { 'X-API-Key': 'client_two' } })).status,
    ).toBe(200);
    await call(sim, 'GET', '/account', { auth: false });
    expect(sim.control.usage().map((u) => [u.endpoint, u.status, u.credits])).toEqual([
      ['GET /account', 200, 0],
      ['GET /account', 401, 0],
    ]);
    const logged = JSON.stringify([sim.control.requests(), sim.control.usage()]);
    expect(logged).not.toContain('client_one');
    expect(logged).not.toContain('client_two');
  });
});
