import { describe, expect, it } from 'vitest';
import { mirrorInternals } from '../../../src/mirror/database.js';
import type { Mirror } from '../../../src/mirror/database.js';
import {
  BULK_LOADED_TABLES,
  DEFERRED_DOMAIN_INDEXES,
  buildDeferredIndexes,
  deferIndexesForBulkLoad,
  deferredIndexNames,
} from '../../../src/mirror/store/deferred-indexes.js';
import { openBaselineIfFirstLoad } from '../../../src/mirror/store/baseline.js';
import { countDomainsNotInMirror, upsertDomainSummaries } from '../../../src/mirror/store/domains.js';
import { markExportLoaded, upsertExport } from '../../../src/mirror/store/exports.js';
import { upsertProfiles } from '../../../src/mirror/store/profiles.js';
import { listProfilesDue } from '../../../src/mirror/store/profiles-due.js';
import { freshness, mirrorCounts } from '../../../src/mirror/store/status.js';
import { freshnessHistogram, overviewCounts } from '../../../src/mirror/store/ui-overview.js';
import { searchDomains } from '../../../src/mirror/store/ui-domains.js';
import { listChanges } from '../../../src/mirror/store/ui-changes.js';
import { mirrorIndexes, type MirrorIndex } from '../../helpers/mirror.js';
import { profile } from './builders.js';
import { tempMirror } from './helpers.js';

const T1 = '2025-04-01T00:00:00.000Z';

/** Every index of the mirror, read independently of the connection under test. */
const indexes = (mirror: Mirror): MirrorIndex[] => mirrorIndexes(mirror.path);

function queryPlan(mirror: Mirror, query: string): string {
  return (
    mirrorInternals(mirror).sqlite.prepare(`EXPLAIN QUERY PLAN ${query}`).all() as Array<{ detail: string }>
  )
    .map((row) => row.detail)
    .join('; ');
}

describe('indexes set aside for a first load', () => {
  it('sets aside exactly the secondary, non-unique indexes of the loaded tables of an empty mirror, and builds them again as they were', async () => {
    const mirror = await tempMirror();
    const before = indexes(mirror);
    const expected = before
      .filter(
        (i) =>
          (BULK_LOADED_TABLES as readonly string[]).includes(i.tbl_name) ||
          (DEFERRED_DOMAIN_INDEXES as readonly string[]).includes(i.name),
      )
      .filter((i) => i.sql !== null && /^CREATE INDEX/.test(i.sql))
      .map((i) => i.name);
    // The loaded tables have secondary indexes, and the five domain indexes exist; the other
    // domain indexes and those of the other tables stay.
    expect(expected).toContain('payment_methods_current_by_category');
    expect(expected).toContain('change_log_at');
    expect(expected).toContain('licenses_current_by_jurisdiction');
    for (const name of DEFERRED_DOMAIN_INDEXES) expect(expected).toContain(name);

    const deferred = deferIndexesForBulkLoad(mirror, T1);
    expect(deferred.sort()).toEqual(expected.sort());
    expect(deferredIndexNames(mirror)).toEqual([...expected].sort());
    const during = indexes(mirror).map((i) => i.name);
    for (const name of expected) expect(during).not.toContain(name);
    // Primary keys, unique constraints and the other tables' indexes (domains' too) are untouched.
    expect(during).toContain('sqlite_autoindex_licenses_1');
    expect(during).toContain('credit_ledger_at');
    for (const name of ['domains_last_listed_at', 'domains_profile_due', 'domains_unlisted_at'])
      expect(during).toContain(name);
    expect(queryPlan(mirror, "SELECT domain_normalized FROM change_log WHERE at > 'x'")).toMatch(/SCAN/);

    // The load itself works without them (the upserts' conflict targets are the unique keys).
    upsertProfiles(mirror, [profile('a.example'), profile('b.example')], { syncedAt: T1 });
    // So do the readers that may run meanwhile (the sync's own list of due profiles, `status`,
    // the dashboard), some of which name their index (INDEXED BY), and they answer the same as
    // with every index in place.
    const reads = () => ({
      due: listProfilesDue(mirror),
      counts: mirrorCounts(mirror),
      freshness: freshness(mirror),
      overview: overviewCounts(mirror),
      histogram: freshnessHistogram(mirror, Date.parse('2025-04-02T00:00:00Z')),
      search: searchDomains(mirror, { text: 'a.ex', limit: 10 }).map((row) => row.domain_normalized),
      byJurisdiction: searchDomains(mirror, { text: 'b.', jurisdiction: 'mga', limit: 10 }).map(
        (row) => row.domain_normalized,
      ),
      byCategory: searchDomains(mirror, { category: 'crypto', limit: 10 }).map(
        (row) => row.domain_normalized,
      ),
      changes: listChanges(mirror, { limit: 100 }).length,
      licenceChanges: listChanges(mirror, { jurisdiction: 'mga', limit: 100 }).length,
      paymentChanges: listChanges(mirror, { category: 'crypto', limit: 100 }).length,
    });
    const whileSetAside = reads();
    expect(whileSetAside.search).toEqual(['a.example']);
    expect(whileSetAside.byJurisdiction).toEqual(['b.example']);
    expect(whileSetAside.byCategory).toEqual(['a.example', 'b.example']);
    expect(whileSetAside.licenceChanges).toBe(2);
    expect(whileSetAside.paymentChanges).toBe(2);
    expect(whileSetAside.counts.domains).toMatchObject({ total: 2, withProfile: 2 });

    const built: string[] = [];
    const result = await buildDeferredIndexes(mirror, (name) => built.push(name));
    expect(result.names.sort()).toEqual([...expected].sort());
    expect(built.sort()).toEqual([...expected].sort());
    expect(indexes(mirror)).toEqual(before);
    expect(deferredIndexNames(mirror)).toEqual([]);
    expect(reads()).toEqual(whileSetAside);
    expect(queryPlan(mirror, "SELECT domain_normalized FROM change_log WHERE at > 'x'")).toMatch(
      /USING (COVERING )?INDEX change_log_at/,
    );
    // The connection's temp store is as it was (memory, openMirror's choice).
    expect(mirrorInternals(mirror).sqlite.pragma('temp_store', { simple: true })).toBe(2);

    // Nothing left: a second build does nothing.
    expect((await buildDeferredIndexes(mirror)).names).toEqual([]);
  });

  it('sets nothing aside in a mirror a sync or an export loaded, nor when a first load resumes', async () => {
    const listed = await tempMirror();
    upsertDomainSummaries(listed, [{ domain_normalized: 'a.example' }], { listedAt: T1 });
    const exported = await tempMirror();
    upsertProfiles(exported, [profile('a.example')], { syncedAt: T1 });
    upsertExport(exported, { id: 1, status: 'completed' }, { at: T1 });
    markExportLoaded(exported, 1, { loadedAt: T1, rowsLoaded: 1 });
    const resumed = await tempMirror();
    expect(openBaselineIfFirstLoad(resumed, T1, 1)).toBe(true);
    upsertProfiles(resumed, [profile('a.example')], { syncedAt: T1 });
    for (const mirror of [listed, exported, resumed]) {
      const before = indexes(mirror);
      expect(deferIndexesForBulkLoad(mirror, T1)).toEqual([]);
      expect(indexes(mirror)).toEqual(before);
      expect(deferredIndexNames(mirror)).toEqual([]);
    }
  });

  it('sets them aside in a loaded mirror when the load brings at least as many new domains as it holds', async () => {
    const mirror = await tempMirror();
    upsertDomainSummaries(mirror, [{ domain_normalized: 'a.example' }, { domain_normalized: 'b.example' }], {
      listedAt: T1,
    });
    const before = indexes(mirror);
    // Fewer new domains than the mirror holds, or no count: the indexes stay.
    expect(deferIndexesForBulkLoad(mirror, T1, { newDomains: 1 })).toEqual([]);
    expect(deferIndexesForBulkLoad(mirror, T1, {})).toEqual([]);
    expect(indexes(mirror)).toEqual(before);
    // As many as it holds: set aside, the same ones as for a first load, and built again as they were.
    const deferred = deferIndexesForBulkLoad(mirror, T1, { newDomains: 2 });
    expect(deferred.length).toBeGreaterThan(0);
    expect(deferred).toContain('change_log_at');
    for (const name of DEFERRED_DOMAIN_INDEXES) expect(deferred).toContain(name);
    expect(deferredIndexNames(mirror)).toEqual([...deferred].sort());
    await buildDeferredIndexes(mirror);
    expect(indexes(mirror)).toEqual(before);
  });

  it('counts the keys the mirror holds no row for', async () => {
    const mirror = await tempMirror();
    upsertDomainSummaries(mirror, [{ domain_normalized: 'a.example' }], { listedAt: T1 });
    expect(countDomainsNotInMirror(mirror, [])).toBe(0);
    expect(countDomainsNotInMirror(mirror, ['a.example', 'b.example', 'c.example', 'b.example'])).toBe(3);
    expect(countDomainsNotInMirror(mirror, ['a.example'])).toBe(0);
  });

  it('sets them aside in a mirror holding only domains enrich wrote (no listing, no export)', async () => {
    const mirror = await tempMirror();
    upsertProfiles(mirror, [profile('a.example')], { syncedAt: T1 });
    const deferred = deferIndexesForBulkLoad(mirror, T1);
    expect(deferred.length).toBeGreaterThan(0);
    expect(deferredIndexNames(mirror)).toEqual([...deferred].sort());
  });

  it('an index that cannot be built is an error naming it, and its definition stays for the next try', async () => {
    const mirror = await tempMirror();
    deferIndexesForBulkLoad(mirror, T1);
    const { sqlite } = mirrorInternals(mirror);
    sqlite
      .prepare('INSERT INTO deferred_indexes (name, table_name, sql, deferred_at) VALUES (?, ?, ?, ?)')
      .run('aaa_broken', 'licenses', 'CREATE INDEX aaa_broken ON licenses (no_such_column)', T1);
    await expect(buildDeferredIndexes(mirror)).rejects.toMatchObject({
      code: 'ERR_MIRROR_WRITE',
      message: expect.stringMatching(/could not build index aaa_broken of licenses.*no_such_column/),
    });
    // Sorted by name, the broken one came first: nothing after it was built or forgotten.
    expect(deferredIndexNames(mirror)).toContain('aaa_broken');
    expect(deferredIndexNames(mirror)).toContain('change_log_at');
    expect(mirrorInternals(mirror).sqlite.pragma('temp_store', { simple: true })).toBe(2);
  });
});
