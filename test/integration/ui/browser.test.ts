/**
 * The dashboard in a real headless Chromium (test/helpers/chromium.ts): each page loads with no
 * console error and no failed request, its charts draw, the search narrows the domain list, a
 * domain page shows its licence history, markup from the catalogue stays text, and writes,
 * unknown paths and bad parameters are refused with a page. One browser and one tab for the
 * whole file, to keep `npm test` short.
 *
 * Screenshots of every page are written to a temp dir, or to `UI_SCREENSHOTS_DIR` when set:
 * `npm run screenshots` writes the ones docs/ui.md shows (docs/ui/).
 */
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openMirror } from '../../../src/mirror/database.js';
import type { Mirror } from '../../../src/mirror/database.js';
import { startUiServer } from '../../../src/ui/index.js';
import type { RunningUi } from '../../../src/ui/index.js';
import { launchChromium } from '../../helpers/chromium.js';
import { buildUiFixture, LOCK_TOKEN, PROBES } from './fixture.js';
import type { UiFixture } from './fixture.js';

let fx: UiFixture;
let mirror: Mirror;
let ui: RunningUi;
let browser: Browser;
let page: Page;
let shotsDir: string;
let ownShotsDir = false;
/** Console errors, uncaught page errors, failed and >= 400 requests since the last reset. */
let problems: string[] = [];

beforeAll(async () => {
  const [fixture, launched] = await Promise.all([buildUiFixture(), launchChromium()]);
  fx = fixture;
  browser = launched;
  mirror = await openMirror(fx.mirrorPath, { readonly: true });
  ui = await startUiServer({ mirror, config: fx.config });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: ui.origin });
  page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) =>
    problems.push(`request failed: ${r.url()} ${r.failure()?.errorText ?? ''}`),
  );
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  if (process.env.UI_SCREENSHOTS_DIR) {
    shotsDir = resolve(process.env.UI_SCREENSHOTS_DIR);
    await mkdir(shotsDir, { recursive: true });
  } else {
    shotsDir = await mkdtemp(join(tmpdir(), 'ui-shots-'));
    ownShotsDir = true;
  }
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await ui?.close();
  await mirror?.close();
  await fx?.close();
  if (ownShotsDir) await rm(shotsDir, { recursive: true, force: true });
});

beforeEach(() => {
  problems = [];
});

/** Non-empty marks of every chart on the page (rects with a size). */
async function chartMarks(): Promise<number[]> {
  return page.$$eval('svg.chart', (svgs) =>
    svgs.map(
      (svg) =>
        [...svg.querySelectorAll('rect')].filter((r) => r.getBBox().width > 0 && r.getBBox().height > 0)
          .length,
    ),
  );
}

async function screenshot(name: string): Promise<void> {
  const path = join(shotsDir, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  const bytes = await readFile(path);
  expect(bytes.subarray(1, 4).toString()).toBe('PNG');
  expect(bytes.length).toBeGreaterThan(10_000);
}

describe('pages', () => {
  it('each page loads without a console error or a failed request, draws its charts, and is photographed', async () => {
    const pages: Array<{ name: string; path: string; charts: number }> = [
      { name: 'overview', path: '/', charts: 1 },
      { name: 'runs', path: '/runs', charts: 1 },
      { name: 'credits', path: '/credits', charts: 1 },
      { name: 'changes', path: '/changes', charts: 1 },
      { name: 'domains', path: '/domains', charts: 0 },
      { name: 'domain', path: `/domains/${encodeURIComponent(fx.licenceDomain)}`, charts: 0 },
      { name: 'snapshots', path: '/snapshots', charts: 0 },
    ];
    for (const p of pages) {
      const response = await page.goto(p.path, { waitUntil: 'load' });
      expect(response?.status(), p.path).toBe(200);
      const marks = await chartMarks();
      expect(marks.length, `${p.path}: charts`).toBe(p.charts);
      for (const n of marks) expect(n, `${p.path}: marks in a chart`).toBeGreaterThan(0);
      // The stylesheet applied (it is the only file the page loads besides the icon).
      const display = await page.$eval(
        'header.top',
        (h) =>
          (globalThis as unknown as { getComputedStyle(e: unknown): { display: string } }).getComputedStyle(h)
            .display,
      );
      expect(display).toBe('flex');
      await screenshot(p.name);
    }
    const run = await page.goto('/runs', { waitUntil: 'load' });
    expect(run?.status()).toBe(200);
    await page.getByRole('link', { name: /^\d+$/ }).first().click();
    await page.waitForURL(/\/runs\/\d+$/);
    await screenshot('run');
    expect(problems).toEqual([]);
  });

  it('"/" links to every page with an ordinary link named after it', async () => {
    for (const [name, path] of [
      ['Runs', '/runs'],
      ['Credits', '/credits'],
      ['Changes', '/changes'],
      ['Domains', '/domains'],
      ['Snapshots', '/snapshots'],
      ['Overview', '/'],
    ] as const) {
      await page.goto('/');
      await page.getByRole('link', { name, exact: true }).click();
      await page.waitForURL(`${ui.origin}${path}`);
      expect(await page.locator('h1').first().textContent()).toBe(name);
    }
    expect(problems).toEqual([]);
  });

  it('the search field narrows the domain list, and the filters combine', async () => {
    await page.goto('/domains');
    const rows = page.locator('#domain-results tbody tr');
    const before = await rows.count();
    expect(before).toBe(50);
    const stem = fx.licenceDomain.replace(/\d.*$/, '');
    await page.getByRole('searchbox', { name: 'Search domains by name' }).fill(stem);
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/q=/);
    const byStem = await rows.count();
    expect(byStem).toBeGreaterThan(0);
    expect(byStem).toBeLessThan(before);
    for (const text of await rows.locator('td:first-child a').allTextContents()) expect(text).toContain(stem);
    await page.getByRole('searchbox', { name: 'Search domains by name' }).fill(fx.licenceDomain);
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/q=/);
    expect(await rows.count()).toBe(1);
    await page.getByRole('link', { name: fx.licenceDomain }).click();
    await page.waitForURL(/\/domains\/.+/);
    expect(await page.locator('h1').textContent()).toBe(fx.licenceDomain);
    await page.goto('/domains');
    await page.locator('select[name="jurisdiction"]').selectOption('mga');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/jurisdiction=mga/);
    for (const text of await rows.locator('td:nth-child(5)').allTextContents()) expect(text).toContain('mga');
    expect(problems).toEqual([]);
  });

  it('a domain page shows its licence history', async () => {
    await page.goto(`/domains/${encodeURIComponent(fx.licenceDomain)}`);
    const history = page.locator('h2:text-is("Licence history") + table tbody tr');
    const texts = await history.allTextContents();
    const ofLicence = texts.filter((t) => t.includes(fx.licenceNumber));
    // The first sync was the mirror's baseline: what changed since is the licence's status.
    expect(ofLicence).toHaveLength(1);
    expect(ofLicence[0]).toContain('changed');
    expect(ofLicence[0]).toContain(fx.licenceStatuses[0]);
    expect(ofLicence[0]).toContain(fx.licenceStatuses[1]);
    expect(texts.some((t) => t.includes('removed'))).toBe(true);
    expect(texts.some((t) => t.includes('added'))).toBe(false);
    await page.goto(`/domains/${encodeURIComponent(fx.addedDomain)}`);
    const ofAdded = await page.locator('h2:text-is("Licence history") + table tbody tr').allTextContents();
    expect(ofAdded.length).toBeGreaterThan(0);
    for (const text of ofAdded) expect(text).toContain('added');
    if (fx.unicodeDomain !== undefined) {
      await page.goto(`/domains?q=${encodeURIComponent(fx.unicodeDomain)}`);
      await page.getByRole('link', { name: fx.unicodeDomain }).click();
      await page.waitForURL(/\/domains\/.+/);
      expect(await page.locator('h1').textContent()).toBe(fx.unicodeDomain);
    }
    expect(problems).toEqual([]);
  });
});

describe('safety', () => {
  it('markup in the catalogue stays text and runs nothing', async () => {
    await page.goto(`/domains/${encodeURIComponent(fx.probeDomain)}`);
    expect(await page.title()).toBe(`${fx.probeDomain} · domain-sync`);
    expect(await page.locator('dt:text-is("company") + dd').textContent()).toBe(PROBES.companyName);
    expect(await page.locator('#licences').textContent()).toContain(PROBES.licenceStatus);
    expect(await page.locator('#payment-methods').textContent()).toContain(PROBES.paymentMethod);
    expect(await page.locator('#payment-methods').textContent()).toContain(PROBES.paymentCategory);
    expect(await page.locator('img, script, b, svg[onload]').count()).toBe(0);
    await page.goto(`/domains?q=${encodeURIComponent('Probe <img')}`);
    expect(await page.locator('#domain-results tbody tr').count()).toBe(1);
    expect(await page.locator('#domain-results img').count()).toBe(0);
    await page.goto('/changes?kind=payment_methods');
    expect(await page.locator('main img, main script, main b').count()).toBe(0);
    expect(await page.title()).toBe('Changes · domain-sync');
    expect(await page.content()).not.toContain(LOCK_TOKEN);
    expect(problems).toEqual([]);
  });

  it('writes, unknown paths and bad parameters get a page with the reason, not a stack trace', async () => {
    for (const method of ['POST', 'PUT', 'DELETE'] as const) {
      const answer = await page.request.fetch(`${ui.origin}/domains`, { method, data: 'q=x' });
      expect(answer.status()).toBe(405);
      expect(await answer.text()).toContain('it answers GET and HEAD');
    }
    const missing = await page.goto('/no-such-page');
    expect(missing?.status()).toBe(404);
    expect(await page.locator('h1').textContent()).toBe('404 Not found');
    const bad = await page.goto('/changes?from=2026-02-30');
    expect(bad?.status()).toBe(400);
    expect(await page.locator('.error-box').textContent()).toContain(
      '"from" must be a date written YYYY-MM-DD',
    );
    await screenshot('bad-request');
    expect(await page.content()).not.toMatch(/node:internal|\.ts:\d+:\d+/);
    // The browser reports the two refused pages themselves, nothing else.
    expect(problems.filter((p) => !/404|400|Failed to load resource/.test(p))).toEqual([]);
  });
});
