import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { classifySummaries, markUnlisted, upsertDomainSummaries } from '../../../src/mirror/store/domains.js';
import { upsertProfiles } from '../../../src/mirror/store/profiles.js';
import { licence, paymentMethod, profile, summary } from './builders.js';
import { tempMirror, totalChanges } from './helpers.js';
import { mirrorInternals } from '../../../src/mirror/database.js';
import type { DomainProfileInput } from '../../../src/mirror/inputs.js';

const T1 = '2025-04-01T00:00:00.000Z';
const T2 = '2025-04-02T00:00:00.000Z';
const T3 = '2025-04-03T00:00:00.000Z';

describe('upsertProfiles', () => {
  it('writes domain, licences, payment methods and sections, and a second identical upsert rewrites nothing', async () => {
    const mirror = await tempMirror();
    const first = upsertProfiles(mirror, [profile('a.example'), profile('b.example')], { syncedAt: T1 });
    expect(first).toMatchObject({
      profiles: 2,
      domains: { inserted: 2, updated: 0, unchanged: 0 },
      licencesAdded: 2,
      paymentMethodsAdded: 4,
      sectionsWritten: 8,
    });

    const before = await totalChanges(mirror);
    const second = upsertProfiles(mirror, [profile('a.example'), profile('b.example')], { syncedAt: T2 });
    expect(await totalChanges(mirror)).toBe(before);
    expect(second).toMatchObject({
      domains: { inserted: 0, updated: 0, unchanged: 2 },
      licencesAdded: 0,
      licencesChanged: 0,
      paymentMethodsAdded: 0,
      sectionsWritten: 0,
    });

    const row = await mirror.db
      .selectFrom('domains')
      .selectAll()
      .where('domain_normalized', '=', 'a.example')
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      operator_name: 'Acme Gaming',
      operator_country: 'MT',
      brand_slug: 'acme',
      status: 'enriched',
      served_from_cache: 0,
      freshness_age_seconds: 3600,
      profile_synced_at: T1,
      first_synced_at: T1,
    });
    // Everything the profile has is in a column or a row, so nothing is left for profile_extra;
    // the whole profile is no longer stored (migration 0010).
    expect(row.raw_profile).toBeNull();
    expect(JSON.parse(row.profile_extra!)).toEqual({});
  });

  it('keeps in profile_extra what has no column or row, and the old whole profile is cleared when the row is rewritten', async () => {
    const mirror = await tempMirror();
    const { sqlite } = mirrorInternals(mirror);
    // A row as a mirror made before migration 0010 holds it: the whole profile in raw_profile.
    upsertProfiles(mirror, [profile('a.example')], { syncedAt: T1 });
    sqlite.prepare('UPDATE domains SET raw_profile = \'{"old":true}\', profile_extra = NULL').run();
    const odd = profile('a.example', {
      x_new_field: { a: 1 },
      operator: { name: 'Acme Gaming', x_operator_note: 'n' },
      meta: { served_from_cache: false, x_meta: 2 },
      licenses: [
        { ...licence(), x_licence_flag: true },
        { ...licence(), license_number: 'L-2' },
      ],
      payment_methods: [{ normalized_name: 'visa', category: 'card', x_fee: null }],
    } as unknown as Partial<DomainProfileInput>);
    upsertProfiles(mirror, [odd], { syncedAt: T2 });
    const row = sqlite
      .prepare(
        "SELECT raw_profile, profile_extra, operator_name FROM domains WHERE domain_normalized = 'a.example'",
      )
      .get() as { raw_profile: string | null; profile_extra: string; operator_name: string };
    expect(row.raw_profile).toBeNull();
    expect(row.operator_name).toBe('Acme Gaming');
    expect(JSON.parse(row.profile_extra)).toEqual({
      x_new_field: { a: 1 },
      operator: { x_operator_note: 'n' },
      meta: { x_meta: 2 },
      // Of a list, the items with a field their table has no column for: their key and that field.
      licenses: [{ jurisdiction: 'mga', license_number: 'MGA/B2C/100/2020', x_licence_flag: true }],
      payment_methods: [{ normalized_name: 'visa', x_fee: null }],
    });
  });

  it('stores as profile_hash the SHA-1 of the JSON of the profile without meta, as mirrors made before hold it', async () => {
    const mirror = await tempMirror();
    // Unknown fields before and after the sections, an integer-like key (JSON puts those first),
    // non-ASCII text and a field whose value JSON leaves out: the hash's text is exactly
    // JSON.stringify's, whatever the profile holds.
    const p = {
      zeta: 1,
      ...profile('a.example'),
      '7': 'seven',
      game_providers: [{ name: 'Ünïcode "quoted"' }],
      unknown_object: { nested: [1, null, true] },
      dropped: undefined,
    } as DomainProfileInput;
    upsertProfiles(mirror, [p], { syncedAt: T1 });
    const { meta, ...rest } = p;
    void meta;
    const expected = createHash('sha1').update(JSON.stringify(rest)).digest('base64');
    const stored = await mirror.db
      .selectFrom('domains')
      .select('profile_hash')
      .where('domain_normalized', '=', 'a.example')
      .executeTakeFirstOrThrow();
    expect(stored.profile_hash).toBe(expected);
    const section = await mirror.db
      .selectFrom('domain_sections')
      .select('data')
      .where('domain_normalized', '=', 'a.example')
      .where('section', '=', 'game_providers')
      .executeTakeFirstOrThrow();
    expect(JSON.parse(section.data!)).toEqual([{ name: 'Ünïcode "quoted"' }]);
  });

  it('only meta changed: no row rewritten', async () => {
    const mirror = await tempMirror();
    upsertProfiles(mirror, [profile('a.example')], { syncedAt: T1 });
    const before = await totalChanges(mirror);
    upsertProfiles(
      mirror,
      [profile('a.example', { meta: { freshness_age_seconds: 99999, observed_at: '2025-05-01T00:00:00Z' } })],
      { syncedAt: T2 },
    );
    expect(await totalChanges(mirror)).toBe(before);
  });

  it('the same profile with its keys in another order: only the hash is rewritten; a changed licence or column still rewrites the row', async () => {
    const mirror = await tempMirror();
    const { sqlite } = mirrorInternals(mirror);
    const domainRow = () =>
      sqlite.prepare("SELECT * FROM domains WHERE domain_normalized = 'a.example'").get() as Record<
        string,
        unknown
      >;
    upsertProfiles(mirror, [profile('a.example')], { syncedAt: T1 });
    const first = domainRow();
    // As an export row brings it: the same values, the keys in another order, no meta.
    const { meta, ...rest } = profile('a.example');
    void meta;
    const reordered = Object.fromEntries(Object.entries(rest).reverse()) as unknown as DomainProfileInput;
    reordered.operator = Object.fromEntries(Object.entries(rest.operator!).reverse());
    const before = await totalChanges(mirror);
    const second = upsertProfiles(mirror, [reordered], { syncedAt: T2 });
    expect(second).toMatchObject({
      domains: { inserted: 0, updated: 0, unchanged: 1 },
      licencesAdded: 0,
      licencesChanged: 0,
      paymentMethodsAdded: 0,
      paymentMethodsChanged: 0,
      sectionsWritten: 0,
    });
    // The domain row and the change counter's row: nothing else.
    expect((await totalChanges(mirror)) - before).toBe(2);
    // `reordered` has no meta: its hash is of its JSON as it is.
    const hash = createHash('sha1').update(JSON.stringify(reordered)).digest('base64');
    const afterSecond = domainRow();
    expect(afterSecond.profile_hash).toBe(hash);
    expect(afterSecond.profile_hash).not.toBe(first.profile_hash);
    expect(afterSecond.change_seq).toBeGreaterThan(first.change_seq as number);
    // Everything else as the first profile left it: its meta, its times.
    const unchangedColumns = { ...first, profile_hash: hash, change_seq: afterSecond.change_seq };
    expect(afterSecond).toEqual(unchangedColumns);

    // Again in the same order: the hash matches, nothing is written.
    const again = await totalChanges(mirror);
    upsertProfiles(mirror, [reordered], { syncedAt: T3 });
    expect(await totalChanges(mirror)).toBe(again);

    // A changed licence, the domain's columns the same, is a change of the profile: the row is
    // rewritten as for any change, its times moved on.
    const licenceChanged = {
      ...reordered,
      licenses: [{ ...licence(), status: 'suspended' }],
    } as DomainProfileInput;
    const third = upsertProfiles(mirror, [licenceChanged], { syncedAt: T3 });
    expect(third).toMatchObject({ domains: { inserted: 0, updated: 1, unchanged: 0 }, licencesChanged: 1 });
    expect(domainRow()).toMatchObject({ last_synced_at: T3, profile_synced_at: T3, observed_at: null });

    // So is a changed column, in either order.
    const T4 = '2025-04-04T00:00:00.000Z';
    const changed = { ...licenceChanged, brand: { slug: 'acme', name: 'Acme Two' } } as DomainProfileInput;
    const fourth = upsertProfiles(mirror, [changed], { syncedAt: T4 });
    expect(fourth.domains).toEqual({ inserted: 0, updated: 1, unchanged: 0 });
    expect(domainRow()).toMatchObject({ brand_name: 'Acme Two', last_synced_at: T4 });
  });

  it('a change of any one content column of the domain row, nothing else changed, is written', async () => {
    const changes: Array<[string, Partial<DomainProfileInput>, string, unknown]> = [
      ['domain', { domain: 'A.example' }, 'domain', 'A.example'],
      ['status', { status: 'failed' }, 'status', 'failed'],
      [
        'last_enriched_at',
        { last_enriched_at: '2025-03-02T10:00:00Z' },
        'last_enriched_at',
        '2025-03-02T10:00:00.000Z',
      ],
      [
        'operator.name',
        { operator: { ...profile('a.example').operator, name: 'Other' } },
        'operator_name',
        'Other',
      ],
      [
        'operator.legal_entity_name',
        { operator: { ...profile('a.example').operator, legal_entity_name: 'Other Ltd' } },
        'operator_legal_entity_name',
        'Other Ltd',
      ],
      [
        'operator.country_of_incorporation',
        { operator: { ...profile('a.example').operator, country_of_incorporation: 'CY' } },
        'operator_country',
        'CY',
      ],
      ['brand.name', { brand: { name: 'Other', slug: 'acme' } }, 'brand_name', 'Other'],
      ['brand.slug', { brand: { name: 'Acme', slug: 'other' } }, 'brand_slug', 'other'],
      ['an unknown field', { note: 'x' } as Partial<DomainProfileInput>, 'profile_extra', '{"note":"x"}'],
    ];
    for (const [what, change, column, stored] of changes) {
      const mirror = await tempMirror();
      upsertProfiles(mirror, [profile('a.example')], { syncedAt: T1 });
      const result = upsertProfiles(mirror, [profile('a.example', change)], { syncedAt: T2 });
      expect(result.domains, what).toEqual({ inserted: 0, updated: 1, unchanged: 0 });
      const row = mirrorInternals(mirror)
        .sqlite.prepare(
          `SELECT ${column} AS value, last_synced_at FROM domains WHERE domain_normalized = 'a.example'`,
        )
        .get() as { value: unknown; last_synced_at: string };
      expect(row, what).toEqual({ value: stored, last_synced_at: T2 });
    }
  });

  it('a row as a mirror before migration 0010 holds it is rewritten, whatever its columns hold', async () => {
    const mirror = await tempMirror();
    const { sqlite } = mirrorInternals(mirror);
    upsertProfiles(mirror, [profile('a.example')], { syncedAt: T1 });
    sqlite.prepare('UPDATE domains SET raw_profile = \'{"old":true}\'').run();
    const reordered = Object.fromEntries(
      Object.entries(profile('a.example')).reverse(),
    ) as unknown as DomainProfileInput;
    const result = upsertProfiles(mirror, [reordered], { syncedAt: T2 });
    expect(result.domains).toEqual({ inserted: 0, updated: 1, unchanged: 0 });
    const row = sqlite
      .prepare("SELECT raw_profile, last_synced_at FROM domains WHERE domain_normalized = 'a.example'")
      .get();
    expect(row).toEqual({ raw_profile: null, last_synced_at: T2 });
  });

  it('keeps history: removed payment method gets removed_at, comes back cleared; an absent section removes nothing', async () => {
    const mirror = await tempMirror();
    upsertProfiles(mirror, [profile('a.example')], { syncedAt: T1 });

    const r2 = upsertProfiles(mirror, [profile('a.example', { payment_methods: [paymentMethod()] })], {
      syncedAt: T2,
    });
    expect(r2.paymentMethodsRemoved).toBe(1);
    const removed = await mirror.db
      .selectFrom('payment_methods')
      .selectAll()
      .where('normalized_name', '=', 'bitcoin')
      .executeTakeFirstOrThrow();
    expect(removed.removed_at).toBe(T2);

    // Sections not requested: nothing is removed.
    const { licenses: _l, payment_methods: _p, ...bare } = profile('a.example');
    const r3 = upsertProfiles(mirror, [bare], { syncedAt: T3 });
    expect(r3.paymentMethodsRemoved + r3.licencesRemoved).toBe(0);
    const active = await mirror.db.selectFrom('licenses').select('removed_at').execute();
    expect(active).toEqual([{ removed_at: null }]);

    const r4 = upsertProfiles(mirror, [profile('a.example')], { syncedAt: T3 });
    expect(r4.paymentMethodsRestored).toBe(1);
    const back = await mirror.db
      .selectFrom('payment_methods')
      .selectAll()
      .where('normalized_name', '=', 'bitcoin')
      .executeTakeFirstOrThrow();
    expect(back.removed_at).toBeNull();
    expect(back.mirror_first_seen_at).toBe(T1);

    const log = await mirror.db
      .selectFrom('v_payment_method_changes')
      .select(['normalized_name', 'change', 'changed_at'])
      .where('normalized_name', '=', 'bitcoin')
      .orderBy('changed_at')
      .execute();
    expect(log.map((e) => e.change)).toEqual(['added', 'removed', 'restored']);
  });

  it('an empty licence list removes every licence; a changed status is logged', async () => {
    const mirror = await tempMirror();
    upsertProfiles(
      mirror,
      [
        profile('a.example', {
          licenses: [licence(), licence({ jurisdiction: 'ukgc', license_number: '000-1' })],
        }),
      ],
      { syncedAt: T1 },
    );
    const r2 = upsertProfiles(
      mirror,
      [
        profile('a.example', {
          licenses: [
            licence({ status: 'suspended' }),
            licence({ jurisdiction: 'ukgc', license_number: '000-1' }),
          ],
        }),
      ],
      { syncedAt: T2 },
    );
    expect(r2.licencesChanged).toBe(1);
    const r3 = upsertProfiles(mirror, [profile('a.example', { licenses: [] })], { syncedAt: T3 });
    expect(r3.licencesRemoved).toBe(2);
    const changes = await mirror.db
      .selectFrom('v_licence_changes')
      .selectAll()
      .where('jurisdiction', '=', 'mga')
      .orderBy('changed_at')
      .execute();
    expect(changes.map((c) => [c.change, c.old_status, c.new_status])).toEqual([
      ['added', null, 'active'],
      ['changed', 'active', 'suspended'],
      ['removed', 'suspended', 'suspended'],
    ]);
  });

  it('change_log: one row per real change, none for a date-only change, as the 0001 triggers wrote them', async () => {
    const mirror = await tempMirror();
    const pm = (overrides: Parameters<typeof paymentMethod>[0]) =>
      profile('a.example', { licenses: [licence()], payment_methods: [paymentMethod(overrides)] });
    upsertProfiles(mirror, [pm({ normalized_name: 'visa', category: 'card', confidence: 'high' })], {
      syncedAt: T1,
    });
    // Only last_confirmed_at moves: the row is rewritten, but the kept value did not change.
    const datesOnly = upsertProfiles(
      mirror,
      [pm({ normalized_name: 'visa', category: 'card', confidence: 'high', last_confirmed_at: T2 })],
      { syncedAt: T2 },
    );
    expect(datesOnly.paymentMethodsChanged).toBe(1);
    upsertProfiles(
      mirror,
      [pm({ normalized_name: 'visa', category: 'card', confidence: null, last_confirmed_at: T2 })],
      {
        syncedAt: T3,
      },
    );
    const rows = await mirror.db
      .selectFrom('change_log')
      .select(['at', 'table_name', 'domain_normalized', 'item_key', 'change', 'old_value', 'new_value'])
      .orderBy('id')
      .execute();
    expect(rows).toEqual([
      {
        at: T1,
        table_name: 'licenses',
        domain_normalized: 'a.example',
        item_key: `${licence().jurisdiction}:${licence().license_number}`,
        change: 'added',
        old_value: null,
        new_value: licence().status,
      },
      {
        at: T1,
        table_name: 'payment_methods',
        domain_normalized: 'a.example',
        item_key: 'visa',
        change: 'added',
        old_value: null,
        new_value: 'card/high',
      },
      {
        at: T3,
        table_name: 'payment_methods',
        domain_normalized: 'a.example',
        item_key: 'visa',
        change: 'changed',
        old_value: 'card/high',
        new_value: 'card/',
      },
    ]);
    // The triggers are gone (migration 0003), so nothing is logged twice. (The bookkeeping
    // tables have change_seq triggers since migration 0005; licences and payment methods none.)
    const triggers = await mirror.db
      .selectFrom('sqlite_schema' as never)
      .select('name' as never)
      .where('type' as never, '=', 'trigger' as never)
      .where('tbl_name' as never, 'in', ['licenses', 'payment_methods'] as never)
      .execute();
    expect(triggers).toEqual([]);
  });

  it('keeps company_name from the listing across profile upserts', async () => {
    const mirror = await tempMirror();
    upsertDomainSummaries(mirror, [summary('a.example', { company_name: 'Listed Co' })], { listedAt: T1 });
    upsertProfiles(mirror, [profile('a.example')], { syncedAt: T2 });
    upsertProfiles(
      mirror,
      [profile('a.example', { status: 'enriched', brand: { name: 'New', slug: 'new' } })],
      { syncedAt: T3 },
    );
    const row = await mirror.db.selectFrom('domains').selectAll().executeTakeFirstOrThrow();
    expect(row.company_name).toBe('Listed Co');
    expect(row.brand_name).toBe('New');
    expect(row.listing_last_enriched_at).toBe('2025-03-01T10:00:00.000Z');
  });

  it('normalises timestamps ("+00:00", no milliseconds) and keeps Unicode domains as given', async () => {
    const mirror = await tempMirror();
    const unicode = 'bücher-casino.de';
    upsertProfiles(
      mirror,
      [
        profile(unicode, {
          last_enriched_at: '2025-03-01T12:00:00+02:00',
          licenses: [licence({ first_seen_at: '2024-01-01T00:00:00+00:00' })],
        }),
      ],
      { syncedAt: '2025-04-01T00:00:00+00:00' },
    );
    const row = await mirror.db.selectFrom('domains').selectAll().executeTakeFirstOrThrow();
    expect(row.domain_normalized).toBe(unicode);
    expect(row.last_enriched_at).toBe('2025-03-01T10:00:00.000Z');
    expect(row.profile_synced_at).toBe(T1);
    const lic = await mirror.db.selectFrom('licenses').selectAll().executeTakeFirstOrThrow();
    expect(lic.first_seen_at).toBe('2024-01-01T00:00:00.000Z');
    expect(lic.domain_normalized).toBe(unicode);
  });

  it('stores a leap second (second 60, which ISO 8601 allows) as the last millisecond of its minute', async () => {
    const mirror = await tempMirror();
    // A listing page and a profile with leap seconds: neither stops the sync with ERR_MIRROR_INPUT.
    const listed = summary('leap.example', { last_enriched_at: '2016-12-31T23:59:60Z' });
    expect(classifySummaries(mirror, [listed]).new.map((s) => s.domain_normalized)).toEqual(['leap.example']);
    upsertDomainSummaries(mirror, [listed], { listedAt: T1 });
    upsertProfiles(
      mirror,
      [
        profile('leap.example', {
          last_enriched_at: '2016-12-31T23:59:60.250+00:00',
          licenses: [licence({ first_seen_at: '2017-01-01T00:59:60+01:00' })],
        }),
      ],
      { syncedAt: T1 },
    );
    const row = await mirror.db.selectFrom('domains').selectAll().executeTakeFirstOrThrow();
    expect(row.listing_last_enriched_at).toBe('2016-12-31T23:59:59.999Z');
    expect(row.last_enriched_at).toBe('2016-12-31T23:59:59.999Z');
    const lic = await mirror.db.selectFrom('licenses').selectAll().executeTakeFirstOrThrow();
    expect(lic.first_seen_at).toBe('2016-12-31T23:59:59.999Z');
    // Ordered with the rest of its minute and before the next one.
    expect(row.last_enriched_at! > '2016-12-31T23:59:59.998Z').toBe(true);
    expect(row.last_enriched_at! < '2017-01-01T00:00:00.000Z').toBe(true);
  });

  it('rejects a bad timestamp naming the field, and writes nothing of the batch', async () => {
    const mirror = await tempMirror();
    const bad = profile('b.example', {
      payment_methods: [paymentMethod({ last_confirmed_at: 'yesterday' })],
    });
    const before = await totalChanges(mirror);
    expect(() => upsertProfiles(mirror, [profile('a.example'), bad], { syncedAt: T1 })).toThrow(
      expect.objectContaining({
        code: 'ERR_MIRROR_INPUT',
        message: expect.stringContaining('profiles[1] (b.example).payment_methods[0].last_confirmed_at'),
      }),
    );
    expect(await mirror.db.selectFrom('domains').selectAll().execute()).toEqual([]);
    expect(await totalChanges(mirror)).toBe(before);
  });
});

describe('upsertDomainSummaries and classifySummaries', () => {
  it('counts inserted / updated / unchanged and never clobbers profile columns', async () => {
    const mirror = await tempMirror();
    upsertProfiles(mirror, [profile('a.example')], { syncedAt: T1 });
    const r = upsertDomainSummaries(mirror, [summary('a.example'), summary('b.example')], { listedAt: T2 });
    expect(r).toEqual({ inserted: 1, updated: 1, unchanged: 0 });
    const r2 = upsertDomainSummaries(mirror, [summary('a.example'), summary('b.example')], { listedAt: T3 });
    expect(r2).toEqual({ inserted: 0, updated: 0, unchanged: 2 });
    const a = await mirror.db
      .selectFrom('domains')
      .selectAll()
      .where('domain_normalized', '=', 'a.example')
      .executeTakeFirstOrThrow();
    expect(a).toMatchObject({
      operator_name: 'Acme Gaming',
      profile_synced_at: T1,
      last_listed_at: T3,
      company_name: 'Acme Gaming Ltd',
      first_synced_at: T1,
    });
  });

  it('classifies new, changed (different or no profile) and unchanged', async () => {
    const mirror = await tempMirror();
    upsertProfiles(mirror, [profile('same.example'), profile('moved.example')], { syncedAt: T1 });
    upsertDomainSummaries(mirror, [summary('listed-only.example')], { listedAt: T1 });
    const c = classifySummaries(mirror, [
      summary('same.example', { last_enriched_at: '2025-03-01T10:00:00+00:00' }),
      summary('moved.example', { last_enriched_at: '2025-03-09T10:00:00Z' }),
      summary('listed-only.example'),
      summary('fresh.example'),
    ]);
    expect(c.new.map((s) => s.domain_normalized)).toEqual(['fresh.example']);
    expect(c.changed.map((s) => s.domain_normalized).sort()).toEqual([
      'listed-only.example',
      'moved.example',
    ]);
    expect(c.unchanged.map((s) => s.domain_normalized)).toEqual(['same.example']);
  });
});

describe('markUnlisted', () => {
  it('marks domains not listed since the run started, and a later listing clears the mark', async () => {
    const mirror = await tempMirror();
    upsertDomainSummaries(mirror, [summary('a.example'), summary('b.example')], { listedAt: T1 });
    upsertDomainSummaries(mirror, [summary('a.example')], { listedAt: T2 });
    expect(markUnlisted(mirror, { jurisdiction: 'mga' }, { listedAt: T2, runStartedAt: T2 })).toEqual({
      marked: 0,
      skipped: 'filtered_listing',
    });
    expect(markUnlisted(mirror, undefined, { listedAt: T3, runStartedAt: T3 })).toEqual({
      marked: 0,
      skipped: 'empty_listing',
    });
    expect(markUnlisted(mirror, {}, { listedAt: T2, runStartedAt: T2 })).toEqual({ marked: 1 });
    const b = await mirror.db
      .selectFrom('domains')
      .select(['unlisted_at'])
      .where('domain_normalized', '=', 'b.example')
      .executeTakeFirstOrThrow();
    expect(b.unlisted_at).toBe(T2);
    const again = upsertDomainSummaries(mirror, [summary('b.example')], { listedAt: T3 });
    expect(again.updated).toBe(1);
    const b2 = await mirror.db
      .selectFrom('domains')
      .select(['unlisted_at'])
      .where('domain_normalized', '=', 'b.example')
      .executeTakeFirstOrThrow();
    expect(b2.unlisted_at).toBeNull();
  });
});
