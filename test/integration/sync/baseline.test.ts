import { describe, expect, it } from 'vitest';
import { syncPipeline } from '../../../pipelines/sync.js';
import { enrichPipeline } from '../../../pipelines/enrich/index.js';
import { finishBaseline, mirrorLoaded, openBaselineIfFirstLoad } from '../../../src/mirror/store/baseline.js';
import { upsertDomainSummaries } from '../../../src/mirror/store/domains.js';
import { markExportLoaded, upsertExport } from '../../../src/mirror/store/exports.js';
import { upsertProfiles } from '../../../src/mirror/store/profiles.js';
import {
  addDomainWithChildren,
  baselineRows,
  baselineFinishedBy,
  changeALicenceStatus,
  changeCounts as counts,
  changesOtherThanAdded,
} from '../../helpers/change-log.js';
import { diffMirrorWithTruth } from '../../helpers/mirror-truth.js';
import { queryMirror } from '../../helpers/mirror.js';
import { startTestSimulator, whileKeyRefusedFromListPage } from '../../helpers/start-simulator.js';
import { openTestContext } from '../../helpers/test-context.js';
import { FAST_ENRICH_CONFIG } from '../enrich/helpers.js';
import { licence, profile } from '../mirror/builders.js';

/*
 * The first sync of an empty mirror is its baseline (src/mirror/store/baseline.ts): the licences
 * and payment methods it finds get no `added` change_log rows; what changes after it is logged.
 * Read back from the mirror file independently of the store functions.
 */

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
    const finishedRow = baselineRows(ctx.mirror.path);
    expect(finishedRow).toEqual(baselineFinishedBy(first.runId));

    // The catalogue changes: a new domain, a licence's status.
    const added = addDomainWithChildren(sim);
    const changed = changeALicenceStatus(sim, added);

    const second = await syncPipeline(ctx);
    expect(second.status).toBe('done');
    expect(second.stats.baseline).toBe(false);
    expect(diffMirrorWithTruth(ctx.mirror.path, sim)).toEqual([]);
    const ofAdded = counts(ctx.mirror.path, added);
    expect(ofAdded.added).toBe(ofAdded.licences + ofAdded.methods);
    expect(counts(ctx.mirror.path).added).toBe(ofAdded.added);
    expect(changesOtherThanAdded(ctx.mirror.path)).toEqual([
      {
        domain_normalized: changed.domain,
        change: 'changed',
        old_value: expect.stringContaining(changed.before) as unknown,
        new_value: expect.stringContaining(changed.after) as unknown,
      },
    ]);
    // Finished once: the second run did not touch it.
    expect(baselineRows(ctx.mirror.path)).toEqual(finishedRow);
  });

  it('a first sync the service stops keeps the baseline open; the run that finishes it logs no additions either', async () => {
    const sim = await startTestSimulator({ domains: 1200, seed: 32 });
    const ctx = await openTestContext(sim);
    const stopped = await whileKeyRefusedFromListPage(sim, 3, () => syncPipeline(ctx, { perPage: 100 }));
    expect(stopped.status).toBe('stopped_by_service');
    expect(stopped.stats.baseline).toBe(true);
    expect(counts(ctx.mirror.path).licences).toBeGreaterThan(0);
    expect(baselineRows(ctx.mirror.path)).toEqual([{ pipeline_run_id: stopped.runId, finished_at: null }]);

    // The mirror has domains now, but the baseline is still open: the resumed load is part of it.
    const resumed = await syncPipeline(ctx, { perPage: 100 });
    expect(resumed.status).toBe('done');
    expect(resumed.stats.baseline).toBe(true);
    expect(resumed.stats.indexesDeferred).toBe(0);
    expect(diffMirrorWithTruth(ctx.mirror.path, sim)).toEqual([]);
    expect(counts(ctx.mirror.path).logged).toBe(0);
    expect(baselineRows(ctx.mirror.path)[0]!.finished_at).toEqual(expect.any(String));
  });

  it('a --no-profiles first sync leaves the baseline to the sync that fetches the profiles', async () => {
    const sim = await startTestSimulator({ domains: 300, seed: 33 });
    const ctx = await openTestContext(sim);
    const listing = await syncPipeline(ctx, { profiles: false });
    expect(listing.status).toBe('done');
    expect(listing.stats.baseline).toBe(true);
    expect(baselineRows(ctx.mirror.path)[0]!.finished_at).toBeNull();

    const full = await syncPipeline(ctx);
    expect(full.status).toBe('done');
    expect(full.stats.baseline).toBe(true);
    expect(full.stats.profilesFetched).toBe(300);
    const after = counts(ctx.mirror.path);
    expect(after.licences).toBeGreaterThan(0);
    expect(after.logged).toBe(0);
    expect(baselineRows(ctx.mirror.path)[0]!.finished_at).toEqual(expect.any(String));
  });

  it('a first sync that lists no domain leaves the baseline open for the sync that brings the catalogue', async () => {
    const sim = await startTestSimulator({ domains: 200, seed: 36 });
    const ctx = await openTestContext(sim);
    expect(sim.control.truth.listDomains({ geo: 'nowhere' })).toEqual([]);
    const empty = await syncPipeline(ctx, { filters: { geo: 'nowhere' } });
    expect(empty.status).toBe('done');
    expect(empty.stats.listed).toBe(0);
    expect(empty.stats.baseline).toBe(true);
    expect(baselineRows(ctx.mirror.path)).toEqual([{ pipeline_run_id: empty.runId, finished_at: null }]);

    const full = await syncPipeline(ctx);
    expect(full.status).toBe('done');
    expect(full.stats.baseline).toBe(true);
    expect(full.stats.profilesFetched).toBe(200);
    expect(counts(ctx.mirror.path).licences).toBeGreaterThan(0);
    expect(counts(ctx.mirror.path).logged).toBe(0);
    expect(baselineRows(ctx.mirror.path)).toEqual(baselineFinishedBy(empty.runId));
  });

  it("while the baseline is open only a domain's first profile goes unlogged; a later one logs its additions", async () => {
    const sim = await startTestSimulator({ domains: 10, seed: 35 });
    const ctx = await openTestContext(sim);
    const at = '2025-04-01T00:00:00.000Z';
    expect(openBaselineIfFirstLoad(ctx.mirror, at, 1)).toBe(true);
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
    expect(openBaselineIfFirstLoad(ctx.mirror, at, 2)).toBe(false);
    upsertProfiles(ctx.mirror, [profile('c.example')], { syncedAt: '2025-04-03T00:00:00.000Z' });
    expect(counts(ctx.mirror.path, 'c.example').added).toBe(3);
  });

  it('a mirror a sync or an export had loaded before the baseline existed opens none and logs every addition', async () => {
    const sim = await startTestSimulator({ domains: 200, seed: 34 });
    const listed = await openTestContext(sim);
    // As a sync of a version before migration 0007 left it: a listed domain, no mirror_baseline row.
    upsertDomainSummaries(
      listed.mirror,
      [{ domain_normalized: 'listed-before.example', company_name: 'Before Ltd' }],
      {
        listedAt: '2025-04-01T00:00:00.000Z',
      },
    );
    const run = await syncPipeline(listed);
    expect(run.status).toBe('done');
    expect(run.stats.baseline).toBe(false);
    expect(run.stats.indexesDeferred).toBe(0);
    expect(baselineRows(listed.mirror.path)).toEqual([]);
    const all = counts(listed.mirror.path);
    expect(all.licences).toBeGreaterThan(0);
    expect(all.added).toBe(all.licences + all.methods);

    // As an export's load of such a version left it: a domain written without a listing, the
    // export recorded as loaded.
    const exported = await openTestContext(sim);
    const at = '2025-04-01T00:00:00.000Z';
    upsertProfiles(exported.mirror, [profile('exported-before.example')], { syncedAt: at });
    upsertExport(exported.mirror, { id: 7, status: 'completed' }, { at });
    markExportLoaded(exported.mirror, 7, { loadedAt: at, rowsLoaded: 1 });
    expect(mirrorLoaded(exported.mirror)).toBe(true);
    const after = await syncPipeline(exported);
    expect(after.stats.baseline).toBe(false);
    expect(after.stats.indexesDeferred).toBe(0);
    const logged = counts(exported.mirror.path);
    expect(logged.added).toBe(logged.licences + logged.methods);
  });

  it('a mirror holding only a domain enrich wrote is still loaded by its first sync as its baseline', async () => {
    const sim = await startTestSimulator({ domains: 120, seed: 36, timeScale: 0.01, runFailureRate: 0 });
    const ctx = await openTestContext(sim, { config: FAST_ENRICH_CONFIG });
    // `enrich --domain D` before any sync: D's profile is written, with its additions logged.
    const domain = sim.control.truth.listDomains()[0]!;
    const enriched = await enrichPipeline(ctx, { domains: [domain], requestedOnly: true, budget: 10 });
    expect(enriched.stats.completed).toBe(1);
    expect(queryMirror(ctx.mirror.path, 'SELECT domain_normalized FROM domains')).toEqual([
      { domain_normalized: domain },
    ]);
    const before = counts(ctx.mirror.path, domain);
    expect(before.licences + before.methods).toBeGreaterThan(0);
    expect(before.added).toBe(before.licences + before.methods);
    expect(mirrorLoaded(ctx.mirror)).toBe(false);

    const first = await syncPipeline(ctx);
    expect(first.status).toBe('done');
    expect(first.stats.baseline).toBe(true);
    expect(first.stats.indexesDeferred).toBe(16);
    expect(baselineRows(ctx.mirror.path)).toEqual(baselineFinishedBy(first.runId));
    expect(diffMirrorWithTruth(ctx.mirror.path, sim)).toEqual([]);
    // The sync logged nothing: the enriched domain is unchanged, the others are the baseline.
    const all = counts(ctx.mirror.path);
    expect(all.licences).toBeGreaterThan(before.licences);
    expect(all.logged).toBe(before.logged);
    expect(counts(ctx.mirror.path, domain)).toEqual(before);
    expect(mirrorLoaded(ctx.mirror)).toBe(true);
  });
});
