import { describe, expect, it } from 'vitest';
import { startTestSimulator } from '../../helpers/start-simulator.js';
import { call } from './http.js';

const sim_ = (path: string): string => path;

describe('/_sim control surface over HTTP', () => {
  it('reads state, moves the clock, sets credits and logs, without an API key', async () => {
    const sim = await startTestSimulator({ domains: 30, credits: 50 });
    const state = await call(sim, 'GET', sim_('/_sim/state'), { base: 'origin', auth: false });
    expect(state.status).toBe(200);
    expect(state.body).toMatchObject({ domains: 30, account: { credits_granted: 50 } });
    expect(JSON.stringify(state.body)).not.toContain(sim.apiKey);

    const before = sim.control.now();
    const clock = await call(sim, 'POST', '/_sim/clock', {
      base: 'origin',
      auth: false,
      body: { advanceMs: 3_600_000 },
    });
    expect(clock.body.now).toBeGreaterThanOrEqual(before + 3_600_000);

    const credits = await call(sim, 'POST', '/_sim/credits', {
      base: 'origin',
      auth: false,
      body: { granted: null },
    });
    expect(credits.body).toMatchObject({ credits_granted: null });
    expect(
      (await call(sim, 'POST', '/_sim/credits', { base: 'origin', auth: false, body: { granted: -1 } }))
        .status,
    ).toBe(400);

    await call(sim, 'GET', '/account');
    const usage = await call(sim, 'GET', '/_sim/usage', { base: 'origin', auth: false });
    expect(usage.body.usage).toEqual([
      expect.objectContaining({ endpoint: 'GET /account', status: 200, credits: 0 }),
    ]);
    const requests = await call(sim, 'GET', '/_sim/requests', { base: 'origin', auth: false });
    expect(requests.body.requests).toEqual([
      expect.objectContaining({ method: 'GET', path: '/account', auth: 'x-api-key', authValid: true }),
    ]);
    await call(sim, 'DELETE', '/_sim/logs', { base: 'origin', auth: false });
    expect(sim.control.usage()).toEqual([]);
    expect(sim.control.requests()).toEqual([]);
  });

  it('sets and clears faults', async () => {
    const sim = await startTestSimulator({ domains: 10 });
    const put = await call(sim, 'PUT', '/_sim/faults', {
      base: 'origin',
      auth: false,
      body: { rules: [{ kind: 'status', status: 500 }] },
    });
    expect(put.status).toBe(200);
    expect((await call(sim, 'GET', '/account')).status).toBe(500);
    const stats = await call(sim, 'GET', '/_sim/faults', { base: 'origin', auth: false });
    expect(stats.body.stats).toEqual({ injected: { status: 1 }, total: 1 });
    await call(sim, 'DELETE', '/_sim/faults', { base: 'origin', auth: false });
    expect((await call(sim, 'GET', '/account')).status).toBe(200);
    expect(
      (
        await call(sim, 'PUT', '/_sim/faults', {
          base: 'origin',
          auth: false,
          body: { rules: [{ kind: 'bogus' }] },
        })
      ).status,
    ).toBe(400);
  });

  it('reads the truth and mutates the catalogue', async () => {
    const sim = await startTestSimulator({ domains: 40 });
    const list = await call(sim, 'GET', '/_sim/truth/domains?jurisdiction=mga&limit=3', {
      base: 'origin',
      auth: false,
    });
    expect(list.body.total).toBe(sim.control.truth.listDomains({ jurisdiction: 'mga' }).length);
    expect(list.body.domains).toEqual(sim.control.truth.listDomains({ jurisdiction: 'mga' }).slice(0, 3));
    const domain = list.body.domains[0] as string;
    const profile = await call(sim, 'GET', `/_sim/truth/domains/${encodeURIComponent(domain)}`, {
      base: 'origin',
      auth: false,
    });
    expect(profile.body).toEqual(sim.control.truth.profile(domain));
    const licence = profile.body.licenses.find((l: { jurisdiction: string }) => l.jurisdiction === 'mga');

    const setStatus = await call(sim, 'POST', '/_sim/mutate', {
      base: 'origin',
      auth: false,
      body: { op: 'setLicenceStatus', domain, licenseNumber: licence.license_number, status: 'revoked' },
    });
    expect(setStatus.status).toBe(200);
    const after = sim.control.truth.profile(domain)!;
    expect(after.licenses.find((l) => l.license_number === licence.license_number)!.status).toBe('revoked');
    expect(after.last_enriched_at > profile.body.last_enriched_at).toBe(true);

    await call(sim, 'POST', '/_sim/mutate', {
      base: 'origin',
      auth: false,
      body: { op: 'addPaymentMethod', domain, pm: { normalized_name: 'newpay', category: 'ewallet' } },
    });
    expect(sim.control.truth.profile(domain)!.payment_methods.at(-1)).toMatchObject({
      normalized_name: 'newpay',
      category: 'ewallet',
      confidence: 'high',
    });
    await call(sim, 'POST', '/_sim/mutate', {
      base: 'origin',
      auth: false,
      body: { op: 'removePaymentMethod', domain, normalizedName: 'newpay' },
    });
    await call(sim, 'POST', '/_sim/mutate', {
      base: 'origin',
      auth: false,
      body: { op: 'removeLicence', domain, licenseNumber: licence.license_number },
    });
    expect(
      sim.control.truth.profile(domain)!.licenses.some((l) => l.license_number === licence.license_number),
    ).toBe(false);

    const added = await call(sim, 'POST', '/_sim/mutate', {
      base: 'origin',
      auth: false,
      body: { op: 'addDomain', position: 'start' },
    });
    expect(sim.control.truth.listDomains()[0]).toBe(added.body.result);
    await call(sim, 'POST', '/_sim/mutate', {
      base: 'origin',
      auth: false,
      body: { op: 'removeDomain', domain: added.body.result },
    });
    expect((await call(sim, 'GET', '/_sim/truth/count', { base: 'origin', auth: false })).body.count).toBe(
      40,
    );
    expect(
      (
        await call(sim, 'POST', '/_sim/mutate', {
          base: 'origin',
          auth: false,
          body: { op: 'reenrich', domain: 'missing.example' },
        })
      ).status,
    ).toBe(404);
    expect(
      (await call(sim, 'POST', '/_sim/mutate', { base: 'origin', auth: false, body: { op: 'explode' } }))
        .status,
    ).toBe(400);
  });

  it('changes the URL style of poll_url and download_url', async () => {
    const sim = await startTestSimulator({ domains: 10, timeScale: 0.01 });
    await call(sim, 'PUT', '/_sim/url-style', {
      base: 'origin',
      auth: false,
      body: { pollUrl: 'absolute', downloadUrl: { origin: 'http://evil.example:9' } },
    });
    const created = await call(sim, 'POST', '/exports', { body: {} });
    expect(created.body.data.poll_url).toBe(`${sim.baseUrl}/exports/1`);
    sim.control.advanceClock(1_000);
    const done = await call(sim, 'GET', '/exports/1');
    expect(done.body.data.download_url).toBe('http://evil.example:9/api/v1/igaming/exports/1/download');
    const truthExport = await call(sim, 'GET', '/_sim/truth/exports/1', { base: 'origin', auth: false });
    expect(truthExport.body).toMatchObject({ id: 1, status: 'completed' });
    expect((await call(sim, 'GET', '/_sim/truth/runs/1', { base: 'origin', auth: false })).status).toBe(404);
  });

  it('keeps the most recent logLimit entries of the usage and request logs', async () => {
    const sim = await startTestSimulator({ domains: 30, logLimit: 5 });
    // 23 requests: enough to trim the logs several times (a tenth of the limit, at least one, at a time).
    const domains = sim.control.truth.listDomains();
    for (let i = 0; i < 23; i++) await call(sim, 'GET', `/domains/${encodeURIComponent(domains[i]!)}`);
    const expected = domains.slice(18, 23);
    expect(sim.control.requests().map((r) => r.path)).toEqual(expected.map((d) => `/domains/${d}`));
    expect(sim.control.usage().map((u) => u.domain)).toEqual(expected);
    const overHttp = await call(sim, 'GET', '/_sim/requests', { base: 'origin', auth: false });
    expect(overHttp.body.requests).toHaveLength(5);
  });

  it('refuses a logLimit that is not a positive integer', async () => {
    for (const logLimit of [0, -1, 2.5, Number.NaN])
      await expect(startTestSimulator({ logLimit })).rejects.toThrow(/logLimit must be a positive integer/);
  });

  it('answers 404 for unknown control routes and paths outside the base path', async () => {
    const sim = await startTestSimulator({ domains: 10 });
    expect((await call(sim, 'GET', '/_sim/nope', { base: 'origin', auth: false })).status).toBe(404);
    expect((await call(sim, 'GET', '/api/v2/other', { base: 'origin' })).status).toBe(404);
    expect((await call(sim, 'GET', '/nope')).status).toBe(404);
  });
});
