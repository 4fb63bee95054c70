import { describe, expect, it } from 'vitest';
import { CSV_BASE_COLUMNS } from '../../../src/simulator/index.js';
import { startTestSimulator } from '../../helpers/start-simulator.js';
import { call } from './http.js';

describe('exports', () => {
  it('creates, stays pending (download 404), completes, downloads CSV, expires', async () => {
    const sim = await startTestSimulator({ domains: 200, timeScale: 0.01 });
    const truth = sim.control.truth.listDomains({ jurisdiction: 'mga' });
    const created = await call(sim, 'POST', '/exports', {
      body: { filters: { jurisdiction: 'mga' }, export_format: 'csv', fields: ['licenses', 'geo'] },
    });
    expect(created.status).toBe(202);
    expect(typeof created.body.message).toBe('string');
    const id = created.body.data.export_id;
    expect(created.body.data).toEqual({ export_id: id, poll_url: `/api/v1/igaming/exports/${id}` });
    const cost = Math.ceil(truth.length * 0.1);
    expect(sim.control.account()).toMatchObject({ credits_reserved: cost, credits_used: 0 });
    expect(sim.control.usage().at(-1)).toMatchObject({
      endpoint: 'POST /exports',
      credits: cost,
      exportId: id,
    });

    const pending = await call(sim, 'GET', `/exports/${id}`);
    expect(pending.body.data).toEqual({ id, status: 'pending', format: 'csv' });
    expect((await call(sim, 'GET', `/exports/${id}/download`)).status).toBe(404);

    sim.control.advanceClock(200);
    const done = await call(sim, 'GET', `/exports/${id}`);
    expect(done.body.data).toEqual({
      id,
      status: 'completed',
      format: 'csv',
      download_url: `/api/v1/igaming/exports/${id}/download`,
      total_rows: truth.length,
      credits_used: cost,
      expires_at: expect.any(String),
    });
    expect(sim.control.account()).toMatchObject({ credits_reserved: 0, credits_used: cost });

    const file = await fetch(sim.origin + done.body.data.download_url, {
      headers: { 'X-API-Key': sim.apiKey },
    });
    expect(file.status).toBe(200);
    expect(file.headers.get('content-disposition')).toBe(`attachment; filename="export-${id}.csv"`);
    const lines = (await file.text()).trimEnd().split('\r\n');
    expect(lines[0]).toBe([...CSV_BASE_COLUMNS, 'licenses', 'geo'].join(','));
    expect(lines).toHaveLength(truth.length + 1);
    expect(lines.slice(1).map((l) => l.split(',')[0])).toEqual(truth);

    sim.control.advanceClock(3_600_000);
    expect((await call(sim, 'GET', `/exports/${id}/download`)).status).toBe(404);
    expect((await call(sim, 'GET', `/exports/${id}`)).body.data.status).toBe('completed');
  });

  it('writes line-delimited JSON profiles and snapshots the data at completion', async () => {
    const sim = await startTestSimulator({ domains: 40, timeScale: 0.01 });
    const created = await call(sim, 'POST', '/exports', {
      body: { export_format: 'json', fields: ['payment_methods'] },
    });
    const id = created.body.data.export_id;
    sim.control.advanceClock(200);
    const [first] = sim.control.truth.listDomains() as [string];
    const removed = sim.control.truth.profile(first)!.payment_methods[0]!.normalized_name;
    sim.control.mutate.removePaymentMethod(first, removed);
    const file = await fetch(`${sim.baseUrl}/exports/${id}/download`, {
      headers: { 'X-API-Key': sim.apiKey },
    });
    expect(file.headers.get('content-disposition')).toBe(`attachment; filename="export-${id}.ndjson"`);
    const rows = (await file.text())
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows).toHaveLength(40);
    expect(rows[0]).toMatchObject({ domain_normalized: first, company_name: expect.any(String) });
    expect(rows[0]).not.toHaveProperty('licenses');
    expect(rows[0].payment_methods.map((m: { normalized_name: string }) => m.normalized_name)).toContain(
      removed,
    );
  });

  it('refuses an export costing more than is available with 429 quota_exceeded', async () => {
    const sim = await startTestSimulator({ domains: 100, credits: 5 });
    const refused = await call(sim, 'POST', '/exports', { body: {} });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({
      code: 'quota_exceeded',
      details: { granted: 5, used: 0, reserved: 0 },
    });
    expect(
      (
        await call(sim, 'POST', '/exports', {
          body: { filters: { jurisdiction: 'anjouan', payment_category: 'crypto', game_provider: 'netent' } },
        })
      ).status,
    ).toBe(202);
  });

  it('validates the body and renames filter keys like the query', async () => {
    const sim = await startTestSimulator({
      domains: 50,
      queryParamNames: { jurisdiction: 'licence_jurisdiction' },
    });
    const bad = await call(sim, 'POST', '/exports', {
      body: { filters: { jurisdiction: 'mga', page: '1' }, export_format: 'xml', fields: ['nope'] },
    });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.errors).sort()).toEqual([
      'export_format',
      'fields',
      'filters.jurisdiction',
      'filters.page',
    ]);
    expect(
      (await call(sim, 'POST', '/exports', { body: { filters: { licence_jurisdiction: 'mga' } } })).status,
    ).toBe(202);
    expect((await call(sim, 'GET', '/exports/77')).status).toBe(404);
    expect((await call(sim, 'GET', '/exports/77/download')).status).toBe(404);
  });

  it('streams a large export without building it in memory', async () => {
    const sim = await startTestSimulator({ domains: 20_000, timeScale: 0.01, exportCreditsPerRow: 0.001 });
    const id = (await call(sim, 'POST', '/exports', { body: { fields: [] } })).body.data.export_id;
    sim.control.advanceClock(200);
    const file = await fetch(`${sim.baseUrl}/exports/${id}/download`, {
      headers: { 'X-API-Key': sim.apiKey },
    });
    expect(file.headers.get('content-length')).toBeNull();
    let newlines = 0;
    for await (const chunk of file.body as unknown as AsyncIterable<Uint8Array>)
      for (const byte of chunk) if (byte === 10) newlines++;
    expect(newlines).toBe(20_001);
  });
});
