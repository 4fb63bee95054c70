import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { syncPipeline } from '../../../pipelines/sync.js';
import type { RunningSimulator } from '../../../src/simulator/index.js';
import { diffMirrorWithTruth } from '../../helpers/mirror-truth.js';
import { queryMirror } from '../../helpers/mirror.js';
import { openTestContext } from '../../helpers/test-context.js';
import { richDomain, startProxiedSimulator } from './fixtures.js';
import type { ProxiedSimulator } from './fixtures.js';
import { FULL } from '../mode.js';
import { caseName, EXTRA_KEY, getAt, matrixCases, pipelineRows, SPEC_RESOURCES } from './spec-table.js';
import type { SpecResource } from './spec-table.js';

/*
 * The bad-input matrix through `sync` into a real SQLite mirror: every field of the domain
 * summary, the domain profile, its licences and payment methods × {missing, null, wrong type,
 * unseen enum value, extra field}. A tolerated row is stored as documented (null → NULL, unseen
 * enum verbatim, what has no column kept in profile_extra); an error names the field, and nothing of the
 * bad entity is half-written while every other domain is mirrored (docs/contract.md "Promises").
 */

const PER_PAGE = 2;
let proxied: ProxiedSimulator;
/** The simulator as the test context sees it: its base URL is the proxy's. */
let target: RunningSimulator;
let profileDomain: string;
let summaryDomain: string;
let summaryIndex: number;

beforeAll(async () => {
  proxied = await startProxiedSimulator({ domains: 6, seed: 83 });
  target = { ...proxied.sim, baseUrl: proxied.proxy.baseUrl };
  profileDomain = richDomain(proxied.sim);
  // The summary under test sits on a later page, so that earlier pages show what a refused page
  // leaves behind: everything before it, nothing of it.
  const listing = proxied.sim.control.truth.listDomains();
  const position = listing.findIndex((d, i) => i >= PER_PAGE && i % PER_PAGE === 1);
  summaryDomain = listing[position]!;
  summaryIndex = position % PER_PAGE;
});

afterAll(async () => {
  await proxied?.close();
});

const CONFIG = { sync: { perPage: PER_PAGE }, api: { maxRetries: 1 } };

const resource = (name: string): SpecResource => SPEC_RESOURCES.find((r) => r.name === name)!;

/** Profile columns of `domains` by the profile field they come from (docs/schema.md). */
const DOMAIN_COLUMNS: Record<string, string> = {
  domain: 'domain',
  status: 'status',
  last_enriched_at: 'last_enriched_at',
  'operator.name': 'operator_name',
  'operator.legal_entity_name': 'operator_legal_entity_name',
  'operator.country_of_incorporation': 'operator_country',
  'brand.name': 'brand_name',
  'brand.slug': 'brand_slug',
  'meta.freshness_age_seconds': 'freshness_age_seconds',
  'meta.served_from_cache': 'served_from_cache',
  'meta.billable': 'billable',
  'meta.observed_at': 'observed_at',
};
const OBJECT_COLUMNS: Record<string, string[]> = {
  operator: ['operator_name', 'operator_legal_entity_name', 'operator_country'],
  brand: ['brand_name', 'brand_slug'],
  meta: ['freshness_age_seconds', 'served_from_cache', 'billable', 'observed_at'],
};
const SECTIONS = ['game_providers', 'affiliate_programs', 'geo', 'related_domains'];
const PROFILE_COLUMNS = [
  ...Object.values(DOMAIN_COLUMNS),
  'raw_profile',
  'profile_extra',
  'profile_hash',
  'profile_synced_at',
];

/** A tolerated value as a column holds it: absent/null → NULL, booleans → 0/1, text verbatim. */
function asColumn(value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value;
}

function rows(dbPath: string, sql: string, ...params: unknown[]): Array<Record<string, unknown>> {
  return queryMirror(dbPath, sql, ...params);
}

/** Everything the mirror holds from `domain`'s profile (not its listing columns). */
function profileState(dbPath: string, domain: string) {
  const [row] = rows(dbPath, 'SELECT * FROM domains WHERE domain_normalized = ?', domain);
  return {
    profile: row ? Object.fromEntries(PROFILE_COLUMNS.map((c) => [c, row[c]])) : undefined,
    licences: rows(dbPath, 'SELECT * FROM licenses WHERE domain_normalized = ? ORDER BY 2, 3', domain),
    paymentMethods: rows(
      dbPath,
      'SELECT * FROM payment_methods WHERE domain_normalized = ? ORDER BY 2',
      domain,
    ),
    sections: rows(dbPath, 'SELECT * FROM domain_sections WHERE domain_normalized = ? ORDER BY 2', domain),
  };
}

const PROFILE_CASES = pipelineRows(
  matrixCases(['domain profile', 'licence', 'payment method'].map((name) => resource(name))),
  FULL,
);

describe('bad-input matrix: profile fields through sync into the mirror', () => {
  test.each(PROFILE_CASES.map((c) => [caseName(c), c] as const))('%s', async (_name, c) => {
    const ctx = await openTestContext(target, { config: CONFIG });
    const dbPath = ctx.mirror.path;
    const others = proxied.sim.control.truth.listDomains().filter((d) => d !== profileDomain);
    let before: ReturnType<typeof profileState> | undefined;
    if (c.expect.outcome === 'error') {
      // A clean mirror first, then a changed profile that arrives bad: the stored profile must
      // stay exactly as it was (no partial update), not only "no partial insert".
      proxied.proxy.reset();
      expect((await syncPipeline(ctx)).failures).toEqual([]);
      before = profileState(dbPath, profileDomain);
      proxied.sim.control.advanceClock(60_000);
      proxied.sim.control.mutate.reenrich(profileDomain);
    }
    const sent: { original?: unknown; body?: unknown } = {};
    proxied.proxy.reset();
    proxied.proxy.setRules([
      {
        method: 'GET',
        path: (p) => decodeURIComponent(p) === `/domains/${profileDomain}`,
        json: (body) => {
          sent.original = structuredClone(body);
          c.apply(body);
          sent.body = body;
          return body;
        },
      },
    ]);
    const run = await syncPipeline(ctx, c.expect.outcome === 'error' ? {} : { full: true });
    expect(proxied.proxy.requests.filter((r) => r.rewritten)).toHaveLength(1);
    expect(run.status).toBe('done');
    // Every other domain is mirrored whatever happened to this one.
    expect(diffMirrorWithTruth(dbPath, proxied.sim, others)).toEqual([]);

    if (c.expect.outcome === 'error') {
      expect(run.failures).toHaveLength(1);
      expect(run.failures[0]).toMatchObject({ item: profileDomain, code: 'ERR_PROTOCOL' });
      expect(run.failures[0]!.message).toContain(
        `GET /domains/${encodeURIComponent(profileDomain)}: ${c.expect.fieldPath}: ${c.expect.expected}`,
      );
      expect(profileState(dbPath, profileDomain)).toEqual(before);
      return;
    }

    expect(run.failures).toEqual([]);
    const state = profileState(dbPath, profileDomain);
    expect(state.profile?.profile_synced_at).not.toBeNull();
    // The whole answer is no longer stored (migration 0010): profile_extra keeps what has no
    // column or row, an unknown field at the place it came (a list whole), and nothing else.
    const data = getAt(sent.body, 'data') as Record<string, unknown>;
    const original = getAt(sent.original, 'data') as Record<string, unknown>;
    const relative = c.path.slice('data.'.length);
    expect(state.profile?.raw_profile).toBeNull();
    const extra = JSON.parse(String(state.profile?.profile_extra)) as Record<string, unknown>;
    if (relative.endsWith(EXTRA_KEY)) {
      expect(getAt(extra, relative)).toEqual(getAt(data, relative));
      expect(getAt(extra, relative)).not.toBeUndefined();
    } else expect(extra).toEqual({});
    const [row] = rows(dbPath, 'SELECT * FROM domains WHERE domain_normalized = ?', profileDomain);

    if (relative.endsWith(EXTRA_KEY)) {
      // Kept in profile_extra (checked above); the typed columns are the truth's.
      expect(diffMirrorWithTruth(dbPath, proxied.sim, [profileDomain])).toEqual([]);
    } else if (relative in DOMAIN_COLUMNS) {
      expect(row![DOMAIN_COLUMNS[relative]!]).toBe(asColumn(c.expect.value));
    } else if (relative in OBJECT_COLUMNS) {
      for (const column of OBJECT_COLUMNS[relative]!) expect(row![column]).toBeNull();
    } else if (SECTIONS.includes(relative)) {
      const section = state.sections.find((s) => s.section === relative);
      if (c.expect.value === undefined) expect(section).toBeUndefined();
      else expect(section?.data).toBe(JSON.stringify(c.expect.value));
    } else if (relative === 'licenses' || relative === 'payment_methods') {
      // An absent (or null) section means "not requested": nothing stored for it.
      expect(relative === 'licenses' ? state.licences : state.paymentMethods).toEqual([]);
    } else if (relative.startsWith('licenses[0].')) {
      const field = relative.slice('licenses[0].'.length);
      const licence = getAt(original, 'licenses[0]') as Record<string, string>;
      const jurisdiction = field === 'jurisdiction' ? (c.expect.value as string) : licence.jurisdiction;
      const [stored] = state.licences.filter(
        (l) => l.jurisdiction === jurisdiction && l.license_number === licence.license_number,
      );
      expect(stored, 'the licence row').toBeDefined();
      expect(stored![field]).toBe(asColumn(c.expect.value));
      expect(state.licences).toHaveLength((original.licenses as unknown[]).length);
    } else if (relative.startsWith('payment_methods[0].')) {
      const field = relative.slice('payment_methods[0].'.length);
      const method = getAt(original, 'payment_methods[0]') as Record<string, string>;
      const [stored] = state.paymentMethods.filter((m) => m.normalized_name === method.normalized_name);
      expect(stored![field]).toBe(asColumn(c.expect.value));
      expect(state.paymentMethods).toHaveLength((original.payment_methods as unknown[]).length);
    } else {
      throw new Error(`no storage rule for ${relative}`);
    }
  });
});

describe('bad-input matrix: listing items through sync into the mirror', () => {
  // The table's summary row is `data.domains[1]`: the domain under test is the second of its page.
  test('the domain under test is the item the table names', () => {
    expect(summaryIndex).toBe(1);
    expect(resource('domain summary').root).toBe('data.domains[1]');
  });

  test.each(
    pipelineRows(matrixCases([resource('domain summary')]), FULL).map((c) => [caseName(c), c] as const),
  )('%s', async (_name, c) => {
    const ctx = await openTestContext(target, { config: CONFIG });
    const dbPath = ctx.mirror.path;
    const listing = proxied.sim.control.truth.listDomains();
    const page = Math.floor(listing.indexOf(summaryDomain) / PER_PAGE);
    proxied.proxy.reset();
    proxied.proxy.setRules([
      {
        method: 'GET',
        path: '/domains',
        json: (body) => {
          const items = getAt(body, 'data.domains') as Array<{ domain_normalized: string }>;
          if (items[summaryIndex]?.domain_normalized === summaryDomain) c.apply(body);
          return body;
        },
      },
    ]);
    const run = await syncPipeline(ctx);
    const mirrored = rows(dbPath, 'SELECT domain_normalized FROM domains ORDER BY 1').map(
      (r) => r.domain_normalized,
    );

    if (c.expect.outcome === 'error') {
      // A page that cannot be read stops the listing: the pages before it are kept (with their
      // profiles), nothing of it or after it is written, and the watermark does not move.
      expect(run.status).toBe('failed');
      expect(run.error?.code).toBe('ERR_PROTOCOL');
      expect(run.error?.message).toContain(`GET /domains: ${c.expect.fieldPath}: ${c.expect.expected}`);
      const before = listing.slice(0, page * PER_PAGE);
      expect(before.length).toBeGreaterThan(0);
      expect(mirrored).toEqual([...before].sort());
      expect(diffMirrorWithTruth(dbPath, proxied.sim, before)).toEqual([]);
      const watermarks = rows(dbPath, "SELECT watermark FROM sync_state WHERE pipeline = 'sync'");
      expect(watermarks.every((w) => w.watermark === null)).toBe(true);
      return;
    }

    expect(run.status).toBe('done');
    expect(run.failures).toEqual([]);
    expect(mirrored).toEqual([...listing].sort());
    const [row] = rows(dbPath, 'SELECT * FROM domains WHERE domain_normalized = ?', summaryDomain);
    const field = c.path.slice(`data.domains[${summaryIndex}].`.length);
    const truth = proxied.sim.control.truth.profile(summaryDomain)!;
    if (field === 'company_name') expect(row!.company_name).toBe(asColumn(c.expect.value));
    else expect(row!.company_name).toBe(truth.company_name);
    if (field === 'last_enriched_at') expect(row!.listing_last_enriched_at).toBe(asColumn(c.expect.value));
    else expect(row!.listing_last_enriched_at).toBe(truth.last_enriched_at);
    // The profile is fetched either way and is the truth's.
    const others = field === 'company_name' ? listing.filter((d) => d !== summaryDomain) : listing;
    expect(diffMirrorWithTruth(dbPath, proxied.sim, others)).toEqual([]);
  });
});
