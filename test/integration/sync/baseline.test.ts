import { describe, expect, it } from 'vitest';
import { syncPipeline } from '../../../pipelines/sync.js';
import { finishBaseline, openBaselineIfEmpty } from '../../../src/mirror/store/baseline.js';
import { upsertProfiles } from '../../../src/mirror/store/profiles.js';
import type { RunningSimulator } from '../../../src/simulator/index.js';
import { diffMirrorWithTruth } from '../../helpers/mirror-truth.js';
import { queryMirror } from '../../helpers/mirror.js';
import { startTestSimulator, whileKeyRefusedFromListPage } from '../../helpers/start-simulator.js';
import { openTestContext } from '../../helpers/test-context.js';
import { licence, profile } from '../mirror/builders.js';

/*
 * The first sync of an empty mirror is its baseline (src/mirror/store/baseline.ts): the licences
 * and payment methods it finds get no `added` change_log rows; what changes after it is logged.
 * Read back from the mirror file independently of the store functions.
 */

interface Counts {
  licences: number;
  methods: number;
  added: number;
  logged: number;
}

function counts(path: string, domain?: string): Counts {
  // Every row, or one domain's: the same filter on each table.
  const filter = domain === undefined ? '1 = 1' : 'domain_normalized = ?';
  const args = domain === undefined ? [] : [domain];
  const one = (from: string, extra = '') =>
    queryMirror<{ n: number }>(path, `SELECT count(*) AS n FROM ${from} WHERE ${filter}${extra}`, ...args)[0]!
      .n;
  return {
    licences: one('licenses'),
    methods: one('payment_methods'),
    added: one('change_log', " AND change = 'added'"),
    logged: one('change_log'),
  };
}

function baselineRow(path: string): { finished_at: string | null; pipeline_run_id: number | null }[] {
  return queryMirror(path, 'SELECT pipeline_run_id, finished_at FROM mirror_baseline');
}

/** A domain the simulator adds, with at least one licence and one payment method. */
function addDomainWithChildren(sim: RunningSimulator): string {
  for (let i = 0; i < 200; i++) {
    const domain = sim.control.mutate.addDomain();
    const p = sim.control.truth.profile(domain);
    if ((p?.licenses.length ?? 0) > 0 && (p?.payment_methods.length ?? 0) > 0) return domain;
  }
  throw new Error('the simulator added no domain with a licence and a payment method');
}

describe('the mirror baseline', () => {
  it('a first sync logs no additions; the next sync logs what changed, a new domain as added', async () => {
    const sim = await startTestSimulator({ domains: 600, seed: 31 });
    const ctx = await openTestContext(sim);

    const first = await syncPipeline(ctx);
    expect(first.status).toBe('done');
    expect(first.stats.baseline).toBe(true);
    expect(diffMirrorWithTruth(ctx.mirror.path, sim)).toEqual([]);
    const loaded = counts(ctx.mirror.path);
    expect(loaded.licences).toBeGreaterThan(0);
    expect(loaded.methods).toBeGreaterThan(0);
    expect(loaded.logged).toBe(0);
    const finishedRow = baselineRow(ctx.mirror.path);
    expect(finishedRow).toEqual([{ pipeline_run_id: first.runId, finished_at: expect.any(String) }]);

    // The catalogue changes: a new domain, a licence's status.
    const added = addDomainWithChildren(sim);
    const changedDomain = sim.control.truth
      .listDomains()
      .find((d) => d !== added && (sim.control.truth.profile(d)?.licenses.length ?? 0) > 0)!;
    const licence = sim.control.truth.profile(changedDomain)!.licenses[0]!;
    const next = licence.status === 'active' ? 'suspended' : 'active';
    sim.control.mutate.setLicenceStatus(changedDomain, licence.license_number, next);

    const second = await syncPipeline(ctx);
    expect(second.status).toBe('done');
    expect(second.stats.baseline).toBe(false);
    expect(diffMirrorWithTruth(ctx.mirror.path, sim)).toEqual([]);
    const ofAdded = counts(ctx.mirror.path, added);
    expect(ofAdded.added).toBe(ofAdded.licences + ofAdded.methods);
    expect(counts(ctx.mirror.path).added).toBe(ofAdded.added);
    expect(
      queryMirror(
        ctx.mirror.path,
        `SELECT domain_normalized, change, old_value, new_value FROM change_log WHERE change <> 'added'`,
      ),
    ).toEqual([
      {
        domain_normalized: changedDomain,
        change: 'changed',
        old_value: expect.stringContaining(licence.status) as unknown,
        new_value: expect.stringContaining(next) as unknown,
      },
    ]);
    // Finished once: the second run did not touch it.
    expect(baselineRow(ctx.mirror.path)).toEqual(finishedRow);
  });

  it('a first sync the service stops keeps the baseline open; the run that finishes it logs no additions either', async () => {
    const sim = await startTestSimulator({ domains: 1200, seed: 32 });
    const ctx = await openTestContext(sim);
    const stopped = await whileKeyRefusedFromListPage(sim, 3, () => syncPipeline(ctx, { perPage: 100 }));
    expect(stopped.status).toBe('stopped_by_service');
    expect(stopped.stats.baseline).toBe(true);
    expect(counts(ctx.mirror.path).licences).toBeGreaterThan(0);
    expect(baselineRow(ctx.mirror.path)).toEqual([{ pipeline_run_id: stopped.runId, finished_at: null }]);

    // The mirror has domains now, but the baseline is still open: the resumed load is part of it.
    const resumed = await syncPipeline(ctx, { perPage: 100 });
    expect(resumed.status).toBe('done');
    expect(resumed.stats.baseline).toBe(true);
    expect(resumed.stats.indexesDeferred).toBe(0);
    expect(diffMirrorWithTruth(ctx.mirror.path, sim)).toEqual([]);
    expect(counts(ctx.mirror.path).logged).toBe(0);
    expect(baselineRow(ctx.mirror.path)[0]!.finished_at).toEqual(expect.any(String));
  });

  it('a --no-profiles first sync leaves the baseline to the sync that fetches the profiles', async () => {
    const sim = await startTestSimulator({ domains: 300, seed: 33 });
    const ctx = await openTestContext(sim);
    const listing = await syncPipeline(ctx, { profiles: false });
    expect(listing.status).toBe('done');
    expect(listing.stats.baseline).toBe(true);
    expect(baselineRow(ctx.mirror.path)[0]!.finished_at).toBeNull();

    const full = await syncPipeline(ctx);
    expect(full.status).toBe('done');
    expect(full.stats.baseline).toBe(true);
    expect(full.stats.profilesFetched).toBe(300);
    const after = counts(ctx.mirror.path);
    expect(after.licences).toBeGreaterThan(0);
    expect(after.logged).toBe(0);
    expect(baselineRow(ctx.mirror.path)[0]!.finished_at).toEqual(expect.any(String));
  });

  it("while the baseline is open only a domain's first profile goes unlogged; a later one logs its additions", async () => {
    const sim = await startTestSimulator({ domains: 10, seed: 35 });
    const ctx = await openTestContext(sim);
    const at = '2025-04-01T00:00:00.000Z';
    expect(openBaselineIfEmpty(ctx.mirror, at, 1)).toBe(true);
    upsertProfiles(ctx.mirror, [profile('a.example'), profile('b.example')], { syncedAt: at });
    expect(counts(ctx.mirror.path).logged).toBe(0);
    // The same domain again (an enrich during the baseline, say) with a licence more.
    const more = profile('a.example', {
      licenses: [licence(), licence({ jurisdiction: 'ukgc', license_number: 'UK-1' })],
    });
    upsertProfiles(ctx.mirror, [more], { syncedAt: '2025-04-02T00:00:00.000Z' });
    expect(
      queryMirror(ctx.mirror.path, 'SELECT domain_normalized, item_key, change FROM change_log'),
    ).toEqual([{ domain_normalized: 'a.example', item_key: 'ukgc:UK-1', change: 'added' }]);
    // Opened once: a mirror with domains (or a finished baseline) never opens it again.
    expect(finishBaseline(ctx.mirror, '2025-04-03T00:00:00.000Z')).toBe(true);
    expect(openBaselineIfEmpty(ctx.mirror, at, 2)).toBe(false);
    upsertProfiles(ctx.mirror, [profile('c.example')], { syncedAt: '2025-04-03T00:00:00.000Z' });
    expect(counts(ctx.mirror.path, 'c.example').added).toBe(3);
  });

  it('a mirror that had domains before its first sync opens no baseline and logs every addition', async () => {
    const sim = await startTestSimulator({ domains: 200, seed: 34 });
    const ctx = await openTestContext(sim);
    // Written another way first (as an export's load or an older version would have).
    upsertProfiles(ctx.mirror, [profile('written-before.example')], { syncedAt: '2025-04-01T00:00:00.000Z' });
    const run = await syncPipeline(ctx);
    expect(run.status).toBe('done');
    expect(run.stats.baseline).toBe(false);
    expect(baselineRow(ctx.mirror.path)).toEqual([]);
    const all = counts(ctx.mirror.path);
    expect(all.licences).toBeGreaterThan(0);
    expect(all.added).toBe(all.licences + all.methods);
  });
});
