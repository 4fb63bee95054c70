import { describe, expect, it } from 'vitest';
import { exportPipeline } from '../../../pipelines/export/index.js';
import type { ExportOptions } from '../../../pipelines/export/index.js';
import { syncPipeline } from '../../../pipelines/sync.js';
import { baselineLoadName, readBaseline } from '../../../src/mirror/store/baseline.js';
import type { OwnedRunContext } from '../../../src/runtime/run-context.js';
import type { Progress } from '../../../src/runtime/progress.js';
import { noopProgress } from '../../../src/runtime/progress.js';
import type { RunningSimulator } from '../../../src/simulator/index.js';
import {
  addDomainWithChildren,
  baselineRows,
  baselineFinishedBy,
  changeALicenceStatus,
  changeCounts as counts,
  changesOtherThanAdded,
} from '../../helpers/change-log.js';
import { runCli } from '../../helpers/cli.js';
import { freshMirrorIndexes } from '../../helpers/fresh-mirror.js';
import { mirrorIndexes, queryMirror, type MirrorIndex } from '../../helpers/mirror.js';
import { diffMirrorWithTruth } from '../../helpers/mirror-truth.js';
import { startTestSimulator } from '../../helpers/start-simulator.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { openTestContext, writeTestConfig } from './helpers.js';

/*
 * An export loaded into an empty mirror is the mirror's first load, as a first sync is
 * (pipelines/first-load.ts): its licences and payment methods get no `added` change_log rows (the
 * baseline, src/mirror/store/baseline.ts), and the child tables' indexes are built after its rows
 * (src/mirror/store/deferred-indexes.ts). Read back from the mirror file independently of the
 * store functions.
 */

/** No client-side rate limit to speak of: the syncs below fetch hundreds of profiles. */
const EXTRA = { api: { requestsPerSecond: 100_000 } };

/** Opens a context on the mirror in `dir`, runs `body` with it, and closes it. */
async function withContext<T>(
  sim: RunningSimulator,
  dir: string,
  body: (ctx: OwnedRunContext) => Promise<T>,
  options: { progress?: Progress; signal?: AbortSignal } = {},
): Promise<T> {
  const ctx = await openTestContext(sim, dir, { extra: EXTRA, ...options });
  try {
    return await body(ctx);
  } finally {
    await ctx.close();
  }
}

/** Runs an export into the mirror in `dir`. */
function run(
  sim: RunningSimulator,
  dir: string,
  options: ExportOptions,
  contextOptions: { progress?: Progress; signal?: AbortSignal } = {},
) {
  return withContext(sim, dir, (ctx) => exportPipeline(ctx, options), contextOptions);
}

/** Every index of the mirror at `path` is there, and none is still set aside. */
function expectIndexesBuilt(path: string, fresh: MirrorIndex[]): void {
  expect(mirrorIndexes(path)).toEqual(fresh);
  expect(queryMirror(path, 'SELECT * FROM deferred_indexes')).toEqual([]);
}

/**
 * Indexes a load into an empty mirror sets aside: every secondary index of the licence,
 * payment-method and change_log tables, and five of the domain indexes.
 */
const SET_ASIDE = 16;

describe('an export loaded into an empty mirror', () => {
  it('is the baseline: no additions logged, indexes built after; a sync after it logs what changed', async () => {
    const sim = await startTestSimulator({ domains: 300, timeScale: 0.01, seed: 41 });
    const dir = await tempDir('domain-sync-export-baseline-');
    const fresh = await freshMirrorIndexes();

    const loaded = await run(sim, dir, { format: 'json' });
    expect(loaded.error).toBeUndefined();
    expect(loaded.status).toBe('done');
    expect(loaded.stats.rowsLoaded).toBe(300);
    expect(loaded.stats.baseline).toBe(true);
    expect(loaded.stats.indexesDeferred).toBe(SET_ASIDE);
    const path = `${dir}/mirror.sqlite`;
    expect(diffMirrorWithTruth(path, sim)).toEqual([]);
    const after = counts(path);
    expect(after.licences).toBeGreaterThan(0);
    expect(after.methods).toBeGreaterThan(0);
    expect(after.logged).toBe(0);
    expectIndexesBuilt(path, fresh);
    const finished = baselineRows(path);
    expect(finished).toEqual(baselineFinishedBy(loaded.runId));
    await withContext(sim, dir, (ctx) => {
      const baseline = readBaseline(ctx.mirror)!;
      expect(baseline.pipeline).toBe('export');
      expect(baselineLoadName(baseline)).toBe("the mirror's first export load");
      return Promise.resolve();
    });

    // The catalogue changes: a new domain, a licence's status. A sync after the load logs both.
    const added = addDomainWithChildren(sim);
    const changed = changeALicenceStatus(sim, added);
    const synced = await withContext(sim, dir, (ctx) => syncPipeline(ctx));
    expect(synced.status).toBe('done');
    expect(synced.stats.baseline).toBe(false);
    expect(synced.stats.indexesDeferred).toBe(0);
    expect(diffMirrorWithTruth(path, sim)).toEqual([]);
    const ofAdded = counts(path, added);
    expect(ofAdded.added).toBe(ofAdded.licences + ofAdded.methods);
    expect(counts(path).added).toBe(ofAdded.added);
    expect(changesOtherThanAdded(path)).toEqual([
      {
        domain_normalized: changed.domain,
        change: 'changed',
        old_value: expect.stringContaining(changed.before) as unknown,
        new_value: expect.stringContaining(changed.after) as unknown,
      },
    ]);
    expect(baselineRows(path)).toEqual(finished);
  });

  it('stopped part-way, keeps the baseline open with its indexes built; the next run removes the rows of the file it did not read to the end, loads it again and finishes the baseline', async () => {
    const sim = await startTestSimulator({ domains: 600, timeScale: 0.01, seed: 42 });
    const dir = await tempDir('domain-sync-export-baseline-stop-');
    const path = `${dir}/mirror.sqlite`;
    const fresh = await freshMirrorIndexes();
    // Stopped (as by Ctrl-C) once the load has written its first batches.
    const stop = new AbortController();
    let batches = 0;
    const stopAfterTwoBatches: Progress = {
      task(label, total, unit) {
        if (!label.startsWith('load export')) return noopProgress.task(label, total, unit);
        return {
          setTotal() {},
          increment() {
            batches += 1;
            if (batches === 2) stop.abort();
          },
          done() {},
        };
      },
      stop() {},
    };
    const stopped = await run(
      sim,
      dir,
      { format: 'csv', batchSize: 100 },
      { progress: stopAfterTwoBatches, signal: stop.signal },
    );
    expect(stopped.status).toBe('interrupted');
    expect(stopped.stats.baseline).toBe(true);
    expect(stopped.stats.indexesDeferred).toBe(SET_ASIDE);
    const [part] = queryMirror<{ n: number }>(path, 'SELECT count(*) AS n FROM domains');
    expect(part!.n).toBe(200);
    expect(counts(path).licences).toBeGreaterThan(0);
    expect(counts(path).logged).toBe(0);
    expectIndexesBuilt(path, fresh);
    expect(baselineRows(path)).toEqual([{ pipeline_run_id: stopped.runId, finished_at: null }]);
    // Loaded in one read (the mirror was empty), so its rows stay recorded as unchecked.
    expect(stopped.stats.onePass).toBe(true);
    expect(queryMirror(path, 'SELECT export_id FROM mirror_unchecked_load')).toEqual([
      { export_id: stopped.stats.exportId },
    ]);

    // The next run removes those rows before anything else, and the resumed load, into an empty
    // mirror again, is a one-pass first load again, still within the same open baseline.
    const resumed = await run(sim, dir, { format: 'csv', batchSize: 100 });
    expect(resumed.status).toBe('done');
    expect(resumed.stats.mode).toBe('resumed');
    expect(resumed.stats.exportId).toBe(stopped.stats.exportId);
    expect(resumed.stats.baseline).toBe(true);
    expect(resumed.stats.onePass).toBe(true);
    expect(resumed.stats.indexesDeferred).toBe(SET_ASIDE);
    expect(resumed.stats.rowsLoaded).toBe(600);
    expect(queryMirror(path, 'SELECT * FROM mirror_unchecked_load')).toEqual([]);
    expect(diffMirrorWithTruth(path, sim)).toEqual([]);
    expect(counts(path).logged).toBe(0);
    expect(baselineRows(path)).toEqual(baselineFinishedBy(stopped.runId));
  });

  it('that matched no domain leaves the mirror empty and its first load to the sync after it', async () => {
    const sim = await startTestSimulator({ domains: 200, timeScale: 0.01, seed: 45 });
    const dir = await tempDir('domain-sync-export-baseline-empty-');
    const path = `${dir}/mirror.sqlite`;
    expect(sim.control.truth.listDomains({ geo: 'nowhere' })).toEqual([]);
    const none = await run(sim, dir, { filters: { geo: 'nowhere' }, format: 'json' });
    expect(none.status).toBe('done');
    expect(none.stats.rowsLoaded).toBe(0);
    expect(none.stats.baseline).toBe(false);
    expect(none.stats.indexesDeferred).toBe(0);
    expect(baselineRows(path)).toEqual([]);

    const synced = await withContext(sim, dir, (ctx) => syncPipeline(ctx));
    expect(synced.status).toBe('done');
    expect(synced.stats.baseline).toBe(true);
    expect(counts(path).licences).toBeGreaterThan(0);
    expect(counts(path).logged).toBe(0);
    expect(baselineRows(path)).toEqual(baselineFinishedBy(synced.runId));
  });

  it('into a mirror a sync loaded first, logs the domains it brings as added, as before, and leaves the rows it holds already as they were', async () => {
    const sim = await startTestSimulator({ domains: 300, timeScale: 0.01, seed: 43 });
    const dir = await tempDir('domain-sync-export-baseline-after-sync-');
    const path = `${dir}/mirror.sqlite`;
    const synced = await withContext(sim, dir, (ctx) => syncPipeline(ctx));
    expect(synced.stats.baseline).toBe(true);
    const finished = baselineRows(path);
    expect(finished[0]!.finished_at).toEqual(expect.any(String));

    // The domain rows as the sync wrote them: an export row holds the same content with its keys
    // in another order and without meta, which rewrites only each row's hash.
    const rowsOf = () =>
      queryMirror(
        path,
        `SELECT domain_normalized, domain, status, last_enriched_at, operator_name, brand_slug,
                observed_at, freshness_age_seconds, profile_extra, profile_synced_at, last_synced_at
         FROM domains ORDER BY domain_normalized`,
      );
    const synchedRows = rowsOf();
    expect(synchedRows.every((row) => row.observed_at !== null)).toBe(true);
    const added = addDomainWithChildren(sim);
    const loaded = await run(sim, dir, { format: 'json' });
    expect(loaded.status).toBe('done');
    expect(loaded.stats.baseline).toBe(false);
    const synchedKeys = new Set(synchedRows.map((row) => row.domain_normalized));
    expect(rowsOf().filter((row) => synchedKeys.has(row.domain_normalized))).toEqual(synchedRows);
    expect(loaded.stats.indexesDeferred).toBe(0);
    expect(diffMirrorWithTruth(path, sim)).toEqual([]);
    const ofAdded = counts(path, added);
    expect(ofAdded.licences + ofAdded.methods).toBeGreaterThan(0);
    expect(ofAdded.added).toBe(ofAdded.licences + ofAdded.methods);
    expect(counts(path).logged).toBe(ofAdded.added);
    expect(baselineRows(path)).toEqual(finished);
  });

  it('into a mirror a filtered sync filled, sets the indexes aside when it brings at least as many new domains, logs them as added and builds the indexes after', async () => {
    const sim = await startTestSimulator({ domains: 300, timeScale: 0.01, seed: 45 });
    const dir = await tempDir('domain-sync-export-bulk-after-filtered-sync-');
    const path = `${dir}/mirror.sqlite`;
    const fresh = await freshMirrorIndexes();
    const synced = await withContext(sim, dir, (ctx) =>
      syncPipeline(ctx, { filters: { jurisdiction: 'anjouan' } }),
    );
    expect(synced.status).toBe('done');
    const held = queryMirror<{ domain_normalized: string }>(
      path,
      'SELECT domain_normalized FROM domains',
    ).map((row) => row.domain_normalized);
    // The load must bring more new domains than the mirror holds for this test to mean anything.
    expect(held.length).toBeGreaterThan(0);
    expect(held.length).toBeLessThan(150);
    const logged = counts(path).logged;

    const loaded = await run(sim, dir, { format: 'json' });
    expect(loaded.status).toBe('done');
    expect(loaded.stats.onePass).toBe(false);
    expect(loaded.stats.baseline).toBe(false);
    expect(loaded.stats.indexesDeferred).toBe(SET_ASIDE);
    expectIndexesBuilt(path, fresh);
    expect(diffMirrorWithTruth(path, sim)).toEqual([]);
    // Each licence and payment method of a domain the sync had not brought is logged as added.
    const all = counts(path);
    const ofHeld = held.reduce((sum, domain) => {
      const c = counts(path, domain);
      return sum + c.licences + c.methods;
    }, 0);
    expect(all.licences + all.methods - ofHeld).toBeGreaterThan(0);
    expect(all.added - logged).toBe(all.licences + all.methods - ofHeld);
    expect(all.logged - logged).toBe(all.added - logged);
  });

  it('through the CLI, says it was the baseline and built the indexes it set aside', async () => {
    const sim = await startTestSimulator({ domains: 120, timeScale: 0.01, seed: 44 });
    const dir = await tempDir('domain-sync-export-baseline-cli-');
    const configPath = writeTestConfig(dir, EXTRA);
    const env = { DOMAIN_SYNC_API_KEY: sim.apiKey, DOMAIN_SYNC_BASE_URL: sim.baseUrl };
    const human = await runCli(['export', '--format', 'json', '--config', configPath], { cwd: dir, env });
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain('  loaded 120 rows into the mirror');
    expect(human.stdout).toContain(
      `  first load: rows loaded first, then built ${SET_ASIDE} indexes of licences, payment methods, change_log and domains`,
    );
    expect(human.stdout).toContain(
      "  the mirror's baseline: change_log records changes from this load on, not the licences and payment methods it loaded",
    );
    const status = await runCli(['status', '--config', configPath], { cwd: dir, env });
    expect(status.code, status.stderr).toBe(0);
    const [run] = queryMirror<{ started_at: string }>(
      `${dir}/mirror.sqlite`,
      "SELECT b.started_at FROM mirror_baseline b JOIN pipeline_runs r ON r.id = b.pipeline_run_id WHERE r.pipeline = 'export'",
    );
    expect(status.stdout).toContain(
      `change_log       changes since the mirror's first export load (${run!.started_at}), the baseline`,
    );
  });
});
