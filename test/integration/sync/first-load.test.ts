import { describe, expect, it } from 'vitest';
import { syncPipeline } from '../../../pipelines/sync.js';
import { openBaselineIfFirstLoad } from '../../../src/mirror/store/baseline.js';
import { deferIndexesForBulkLoad } from '../../../src/mirror/store/deferred-indexes.js';
import { upsertDomainSummaries } from '../../../src/mirror/store/domains.js';
import { upsertProfiles } from '../../../src/mirror/store/profiles.js';
import { diffMirrorWithTruth } from '../../helpers/mirror-truth.js';
import { freshMirrorIndexes } from '../../helpers/fresh-mirror.js';
import { mirrorIndexes, queryMirror } from '../../helpers/mirror.js';
import { startTestSimulator, whileKeyRefusedFromListPage } from '../../helpers/start-simulator.js';
import { openTestContext } from '../../helpers/test-context.js';
import { profile } from '../mirror/builders.js';

/*
 * A first sync into an empty mirror writes the rows first and builds the secondary indexes of the
 * tables it fills at the end (src/mirror/store/deferred-indexes.ts). Read back independently.
 */

describe.each(['thread', 'inline'] as const)(
  'a first sync into an empty mirror (%s writer)',
  (profileWriter) => {
    it('loads the rows, then builds every index the mirror has; later syncs keep them', async () => {
      const sim = await startTestSimulator({ domains: 1500, seed: 11 });
      const ctx = await openTestContext(sim, { profileWriter });
      const expected = await freshMirrorIndexes();

      const first = await syncPipeline(ctx);
      expect(first.status).toBe('done');
      expect(first.stats.profilesFetched).toBe(1500);
      expect(first.stats.indexesDeferred).toBe(16);
      expect(diffMirrorWithTruth(ctx.mirror.path, sim)).toEqual([]);
      expect(mirrorIndexes(ctx.mirror.path)).toEqual(expected);
      expect(queryMirror(ctx.mirror.path, 'SELECT * FROM deferred_indexes')).toEqual([]);
      const messages = ctx.memoryLogger.events.map((e) => e.msg);
      const building = messages.indexOf('building the mirror indexes set aside during the load');
      expect(building).toBeGreaterThan(-1);
      expect(ctx.memoryLogger.events[building]!.fields).toMatchObject({
        indexes: first.stats.indexesDeferred,
      });
      const built = messages.indexOf('mirror indexes built');
      // Announced before the builds, reported after them.
      expect(built).toBeGreaterThan(building);
      expect(ctx.memoryLogger.events[built]!.fields).toMatchObject({ indexes: first.stats.indexesDeferred });
      // The run's stats as stored say so too.
      const stored = queryMirror<{ stats: string }>(
        ctx.mirror.path,
        'SELECT stats FROM pipeline_runs WHERE id = ?',
        first.runId,
      );
      expect(JSON.parse(stored[0]!.stats)).toMatchObject({ indexesDeferred: first.stats.indexesDeferred });

      const second = await syncPipeline(ctx, { full: true });
      expect(second.status).toBe('done');
      expect(second.stats.indexesDeferred).toBe(0);
      expect(mirrorIndexes(ctx.mirror.path)).toEqual(expected);
    });

    it('a first sync the service stops still builds the indexes before it returns', async () => {
      const sim = await startTestSimulator({ domains: 1200, seed: 12 });
      const ctx = await openTestContext(sim, { profileWriter });
      const expected = await freshMirrorIndexes();
      // From the third listing page on, the service refuses the key: the run stops part-way.
      const run = await whileKeyRefusedFromListPage(sim, 3, () => syncPipeline(ctx, { perPage: 100 }));
      expect(run.status).toBe('stopped_by_service');
      expect(run.stats.indexesDeferred).toBeGreaterThan(0);
      expect(
        queryMirror<{ n: number }>(ctx.mirror.path, 'SELECT count(*) AS n FROM domains')[0]!.n,
      ).toBeGreaterThan(0);
      expect(mirrorIndexes(ctx.mirror.path)).toEqual(expected);
      expect(queryMirror(ctx.mirror.path, 'SELECT * FROM deferred_indexes')).toEqual([]);
    });
  },
);

describe('indexes a killed first sync left set aside', () => {
  it('are built by the next run before its own work, with a warning', async () => {
    const sim = await startTestSimulator({ domains: 300, seed: 13 });
    const ctx = await openTestContext(sim);
    const expected = await freshMirrorIndexes();
    // What a first sync killed part-way leaves: indexes set aside, its baseline open, some
    // domains listed and written.
    const at = '2025-04-01T00:00:00.000Z';
    const deferred = deferIndexesForBulkLoad(ctx.mirror, at);
    expect(deferred.length).toBeGreaterThan(0);
    expect(openBaselineIfFirstLoad(ctx.mirror, at, 1)).toBe(true);
    upsertDomainSummaries(ctx.mirror, [{ domain_normalized: 'left-behind.example' }], { listedAt: at });
    upsertProfiles(ctx.mirror, [profile('left-behind.example')], { syncedAt: at });
    expect(mirrorIndexes(ctx.mirror.path)).not.toEqual(expected);

    const run = await syncPipeline(ctx);
    expect(run.status).toBe('done');
    expect(run.stats.indexesDeferred).toBe(0); // a load resumed: nothing set aside again
    expect(mirrorIndexes(ctx.mirror.path)).toEqual(expected);
    expect(queryMirror(ctx.mirror.path, 'SELECT * FROM deferred_indexes')).toEqual([]);
    const warnings = ctx.memoryLogger.events.filter((e) => e.level === 'warn' && /set aside/.test(e.msg));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.fields).toMatchObject({ indexes: deferred.length });
  });
});
