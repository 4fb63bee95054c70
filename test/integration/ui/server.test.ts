/**
 * The dashboard's HTTP surface, without a browser: every page answers, refuses what it must
 * (405, 404, 400, a foreign Host), escapes every value and never shows a secret. The browser
 * tests (browser.test.ts) check what people see.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMirror } from '../../../src/mirror/database.js';
import type { Mirror } from '../../../src/mirror/database.js';
import { releaseLock } from '../../../src/mirror/store/locks.js';
import { startUiServer } from '../../../src/ui/index.js';
import type { RunningUi } from '../../../src/ui/index.js';
import { queryMirror } from '../../helpers/mirror.js';
import { buildUiFixture, LOCK_TOKEN, PROBES } from './fixture.js';
import type { UiFixture } from './fixture.js';
import { httpRequest } from './http.js';

let fx: UiFixture;
let mirror: Mirror;
let ui: RunningUi;

beforeAll(async () => {
  fx = await buildUiFixture();
  mirror = await openMirror(fx.mirrorPath, { readonly: true });
  ui = await startUiServer({ mirror, config: fx.config });
}, 120_000);

afterAll(async () => {
  await ui?.close();
  await mirror?.close();
  await fx?.close();
});

const get = (path: string, options?: Parameters<typeof httpRequest>[2]) =>
  httpRequest(ui.origin, path, options);

const PAGES = ['/', '/runs', '/credits', '/changes', '/domains', '/snapshots'] as const;

/** Every text a page could hold that must never reach it. */
function secrets(): string[] {
  return [LOCK_TOKEN, fx.sim.apiKey];
}

describe('pages', () => {
  it('each page answers 200 with HTML, links to every page by name, and sets a strict CSP', async () => {
    const home = await get('/');
    expect(home.status).toBe(200);
    for (const [name, href] of [
      ['Overview', '/'],
      ['Runs', '/runs'],
      ['Credits', '/credits'],
      ['Changes', '/changes'],
      ['Domains', '/domains'],
      ['Snapshots', '/snapshots'],
    ]) {
      expect(home.body).toContain(`<a href="${href}"`);
      expect(home.body).toMatch(new RegExp(`<a href="${href}"[^>]*>${name}</a>`));
    }
    const runId = queryMirror<{ id: number }>(fx.mirrorPath, 'SELECT max(id) AS id FROM pipeline_runs')[0]!
      .id;
    for (const path of [...PAGES, `/runs/${runId}`, `/domains/${encodeURIComponent(fx.probeDomain)}`]) {
      const page = await get(path);
      expect(page.status, path).toBe(200);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(page.headers['content-security-policy']).toContain("default-src 'none'");
      expect(page.headers['x-content-type-options']).toBe('nosniff');
      expect(page.body).toMatch(/^<!doctype html>/);
      expect(page.body).not.toMatch(/<script/i);
      // Nothing is loaded from elsewhere: every src/href is a path of the dashboard or a fragment.
      for (const [, url] of page.body.matchAll(/(?:src|href)="([^"]*)"/g))
        expect(url, path).toMatch(/^(\/|#|\?)/);
      for (const secret of secrets()) expect(page.body, path).not.toContain(secret);
    }
  });

  it('HEAD answers like GET without a body; assets are served with a validator', async () => {
    const head = await get('/runs', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    expect(Number(head.headers['content-length'])).toBeGreaterThan(500);
    const css = await get('/assets/ui.css');
    expect(css.status).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    const again = await get('/assets/ui.css', { headers: { 'if-none-match': String(css.headers.etag) } });
    expect(again.status).toBe(304);
    expect((await get('/favicon.ico')).status).toBe(200);
  });

  it('dates are YYYY-MM-DD and times UTC', async () => {
    const runs = await get('/runs');
    expect(runs.body).toMatch(/<time datetime="[^"]+">\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC<\/time>/);
    const times = [...runs.body.matchAll(/<time datetime="[^"]+">([^<]*)<\/time>/g)].map((m) => m[1]);
    expect(times.length).toBeGreaterThan(0);
    for (const text of times) expect(text).toMatch(/^\d{4}-\d{2}-\d{2}(?: \d{2}:\d{2}:\d{2} UTC)?$/);
    // Nor a locale-formatted time anywhere else ("8:42:49 AM", "08:42:49 GMT"). Only those shapes:
    // the page shows the fixture's temp dir, whose random name once ended in "AM".
    expect(runs.body).not.toMatch(/\d:\d{2}(?::\d{2})?\s?[AP]M\b|\bGMT\b/);
  });
});

describe('refusals', () => {
  it('answers 405 to every method but GET and HEAD, with Allow and without a stack', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
      const answer = await get('/domains', { method, body: method === 'POST' ? 'q=x' : undefined });
      expect(answer.status, method).toBe(405);
      expect(answer.headers.allow).toBe('GET, HEAD');
      expect(answer.body).toContain('405 Method not allowed');
      expect(answer.body).not.toMatch(/at .+\(.+:\d+:\d+\)|node:internal|\.ts:\d+/);
    }
  });

  it('answers 404 to unknown paths, runs and domains', async () => {
    for (const path of [
      '/nope',
      '/runs/999999',
      '/domains/no-such-domain.example',
      '/runs/abc',
      '/assets/x.js',
      '/domains/',
    ]) {
      const answer = await get(path);
      expect(answer.status, path).toBe(404);
      expect(answer.body).toContain('404 Not found');
    }
  });

  it('answers 400 naming the parameter to bad, unknown or repeated parameters', async () => {
    const cases: Array<[string, string]> = [
      ['/domains?page=2', 'unknown parameter "page"'],
      ['/domains?q=a&q=b', '"q" is given more than once'],
      ['/changes?from=2026-13-01', '"from" must be a date written YYYY-MM-DD'],
      ['/changes?from=2026-02-01&to=2026-01-01', '"from" (2026-02-01) is after "to" (2026-01-01)'],
      ['/changes?kind=domains', '"kind" must be one of licenses, payment_methods'],
      ['/changes?kind=licenses&category=card', '"category" filters payment-method changes'],
      ['/changes?before=yesterday', '"before" is not a page position'],
      ['/runs?before=-1', '"before" must be a positive whole number'],
      ['/credits?days=0', '"days" must be a whole number from 1 to 366'],
      ['/?x=1', 'unknown parameter "x" (this page takes none)'],
      ['/domains?q=%01', '"q" holds a control character'],
      ['/domains/%E0%A4%A', 'not valid percent-encoding'],
    ];
    for (const [path, message] of cases) {
      const answer = await get(path);
      expect(answer.status, path).toBe(400);
      expect(answer.body, path).toContain(message.replaceAll('"', '&quot;'));
    }
  });

  it('refuses a Host that is not a loopback name while bound to loopback (DNS rebinding)', async () => {
    const port = new URL(ui.origin).port;
    expect((await get('/', { headers: { host: `evil.example:${port}` } })).status).toBe(400);
    expect((await get('/', { headers: { host: `localhost:${port}` } })).status).toBe(200);
    expect((await get('/', { headers: { host: `127.0.0.1:1` } })).status).toBe(400);
  });
});

describe('content', () => {
  it('shows markup from the catalogue as text', async () => {
    const page = await get(`/domains/${encodeURIComponent(fx.probeDomain)}`);
    expect(page.status).toBe(200);
    for (const probe of Object.values(PROBES)) {
      expect(page.body).not.toContain(probe);
      expect(page.body).toContain(
        probe
          .replaceAll('&', '&amp;')
          .replaceAll('<', '&lt;')
          .replaceAll('>', '&gt;')
          .replaceAll('"', '&quot;')
          .replaceAll("'", '&#39;'),
      );
    }
    const list = await get(`/domains?q=${encodeURIComponent('onerror')}`);
    expect(list.body).toContain(fx.probeDomain);
    expect(list.body).not.toContain('<img src=x');
  });

  it('the domain page shows the licence history of a changed licence', async () => {
    const page = await get(`/domains/${encodeURIComponent(fx.licenceDomain)}`);
    const history = page.body.slice(
      page.body.indexOf('<h2>Licence history</h2>'),
      page.body.indexOf('<h2>Payment methods</h2>'),
    );
    const number = fx.licenceNumber.replaceAll('&', '&amp;');
    // The first sync was the mirror's baseline: the licence's one recorded change is its status.
    const rows = history.split('<tr>').filter((row) => row.includes(number));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toContain('>changed</span>');
    const [before, after] = fx.licenceStatuses;
    expect(rows[0]).toMatch(new RegExp(`<td>${before}</td>\\s*<td>${after}</td>`));
    expect(history).toContain('>removed</span>');
    expect(history).not.toContain('>added</span>');
  });

  it('a domain unchanged since the first sync says so', async () => {
    const unchanged = queryMirror<{ domain_normalized: string }>(
      fx.mirrorPath,
      `SELECT domain_normalized FROM domains d
       WHERE NOT EXISTS (SELECT 1 FROM change_log c WHERE c.domain_normalized = d.domain_normalized)
       ORDER BY domain_normalized LIMIT 1`,
    )[0]!.domain_normalized;
    const page = await get(`/domains/${encodeURIComponent(unchanged)}`);
    expect(page.status).toBe(200);
    const day = queryMirror<{ day: string }>(
      fx.mirrorPath,
      'SELECT substr(started_at, 1, 10) AS day FROM mirror_baseline',
    )[0]!.day;
    expect(page.body).toMatch(
      new RegExp(`No change recorded since the mirror&#39;s first sync \\(${day}\\)\\.`),
    );
  });

  it('a domain new since the first sync shows its licences and payment methods as added', async () => {
    const page = await get(`/domains/${encodeURIComponent(fx.addedDomain)}`);
    const added = (body: string) => (body.match(/>added<\/span>/g) ?? []).length;
    const licences = page.body.slice(
      page.body.indexOf('<h2>Licence history</h2>'),
      page.body.indexOf('<h2>Payment methods</h2>'),
    );
    const stored = queryMirror<{ licences: number; methods: number }>(
      fx.mirrorPath,
      `SELECT (SELECT count(*) FROM licenses WHERE domain_normalized = ?) AS licences,
              (SELECT count(*) FROM payment_methods WHERE domain_normalized = ?) AS methods`,
      fx.addedDomain,
      fx.addedDomain,
    )[0]!;
    expect(stored.licences).toBeGreaterThan(0);
    expect(added(licences)).toBe(stored.licences);
    expect(added(page.body)).toBe(stored.licences + stored.methods);
  });

  it('the search narrows the list by name, jurisdiction and payment category', async () => {
    const count = (body: string) => (body.match(/<tr>\s*<td>\s*<a href="\/domains\//g) ?? []).length;
    const all = await get('/domains');
    expect(count(all.body)).toBe(50);
    const byName = await get(`/domains?q=${encodeURIComponent(fx.licenceDomain)}`);
    expect(count(byName.body)).toBe(1);
    const mga = await get('/domains?jurisdiction=mga');
    const mgaTruth = queryMirror<{ n: number }>(
      fx.mirrorPath,
      `SELECT count(DISTINCT domain_normalized) AS n FROM licenses WHERE jurisdiction = 'mga' AND removed_at IS NULL`,
    )[0]!.n;
    expect(count(mga.body)).toBe(Math.min(50, mgaTruth));
    expect(mgaTruth).toBeGreaterThan(0);
    const none = await get('/domains?q=zzzz-no-such-name');
    expect(none.body).toContain('No domain matches.');
  });

  it('pages through domains in name order without gaps or repeats', async () => {
    const names: string[] = [];
    let path: string | null = '/domains?category=card';
    while (path !== null) {
      const page = await get(path);
      names.push(
        ...[...page.body.matchAll(/<tr>\s*<td>\s*<a href="\/domains\/([^"]+)">/g)].map((m) =>
          decodeURIComponent(m[1]!),
        ),
      );
      const next = /<a href="([^"]+)" rel="next">/.exec(page.body);
      path = next ? next[1]!.replaceAll('&amp;', '&') : null;
    }
    const truth = queryMirror<{ d: string }>(
      fx.mirrorPath,
      `SELECT DISTINCT domain_normalized AS d FROM payment_methods WHERE category = 'card' AND removed_at IS NULL ORDER BY 1`,
    ).map((r) => r.d);
    expect(truth.length).toBeGreaterThan(50);
    expect(names).toEqual(truth);
  });

  it('the Changes page lists the changes newest first, filtered by jurisdiction', async () => {
    const jurisdiction = queryMirror<{ j: string }>(
      fx.mirrorPath,
      `SELECT jurisdiction AS j FROM licenses WHERE domain_normalized = ? AND license_number = ?`,
      fx.licenceDomain,
      fx.licenceNumber,
    )[0]!.j;
    const page = await get(`/changes?jurisdiction=${encodeURIComponent(jurisdiction)}`);
    expect(page.status).toBe(200);
    // Where the history starts: the first sync's day, from the mirror.
    const firstSync = queryMirror<{ day: string }>(
      fx.mirrorPath,
      'SELECT substr(started_at, 1, 10) AS day FROM mirror_baseline WHERE finished_at IS NOT NULL',
    );
    expect(firstSync).toHaveLength(1);
    expect(page.body).toContain(`Changes since the mirror&#39;s first sync (${firstSync[0]!.day})`);
    expect(page.body).toContain(fx.licenceNumber.replaceAll('&', '&amp;'));
    expect(page.body).not.toContain('>payment method</td>');
    const times = [...page.body.matchAll(/<tr>\s*<td>\s*<time datetime="([^"]+)"/g)].map((m) => m[1]!);
    expect(times.length).toBeGreaterThan(1);
    expect([...times].sort().reverse()).toEqual(times);
  });

  it('the Credits page shows spend, the allowances left and the ledger; Snapshots the dates and destinations', async () => {
    const credits = await get('/credits');
    expect(credits.body).toContain('credits.maxPerDay');
    expect(credits.body).toContain('credits.maxPerMonth');
    expect(credits.body).toMatch(/<svg\s+class="chart"[\s\S]*<rect\s+class="bar s0"/);
    const spent = queryMirror<{ n: number }>(fx.mirrorPath, 'SELECT sum(credits) AS n FROM credit_ledger')[0]!
      .n;
    expect(spent).toBeGreaterThan(0);
    const snapshots = await get('/snapshots');
    expect(snapshots.body).toContain(new Date().toISOString().slice(0, 10));
    expect(snapshots.body).toContain('postgres://db.example.internal:5432/catalogue');
    expect(snapshots.body).not.toContain('analyst@');
    expect(snapshots.body).toContain('s3://example-bucket/domain-sync');
  });
});

describe('change counts', () => {
  it('counts changes committed after the start a bounded number per request, and says so meanwhile', async () => {
    const reader = await openMirror(fx.mirrorPath, { readonly: true });
    const slow = await startUiServer({ mirror: reader, config: fx.config, maxChangeRowsPerRequest: 1 });
    try {
      const total = () =>
        Number(/([\d\u2009]+) changes of any kind/.exec(body)?.[1]?.replaceAll('\u2009', ''));
      let body = (await httpRequest(slow.origin, '/changes')).body;
      const before = total();
      expect(body).not.toContain('still counting');
      const domains = fx.sim.control.truth
        .listDomains()
        .filter((d) => (fx.sim.control.truth.profile(d)?.licenses.length ?? 0) > 0)
        .slice(10, 12);
      for (const d of domains) {
        const licence = fx.sim.control.truth.profile(d)!.licenses[0]!;
        fx.sim.control.mutate.setLicenceStatus(
          d,
          licence.license_number,
          licence.status === 'revoked' ? 'active' : 'revoked',
        );
      }
      // The fixture holds the mirror lock (for the Overview's lock table); a sync needs it.
      const writer = await openMirror(fx.mirrorPath);
      releaseLock(writer, { name: 'mirror', token: LOCK_TOKEN });
      await writer.close();
      await fx.cli(['sync']);
      const added = queryMirror<{ n: number }>(
        fx.mirrorPath,
        'SELECT count(*) AS n FROM change_log WHERE id > (SELECT max(id) FROM change_log) - 100 AND at >= ?',
        new Date(Date.now() - 60_000).toISOString(),
      )[0]!.n;
      expect(added).toBeGreaterThanOrEqual(2);
      body = (await httpRequest(slow.origin, '/changes')).body;
      expect(body).toContain('still counting');
      for (let i = 0; i < 200 && body.includes('still counting'); i++)
        body = (await httpRequest(slow.origin, '/changes')).body;
      expect(body).not.toContain('still counting');
      expect(total()).toBeGreaterThanOrEqual(before + 2);
    } finally {
      await slow.close();
      await reader.close();
    }
  });
});
