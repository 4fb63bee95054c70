import { expect } from 'vitest';
import { diffMirrorWithTruth } from '../../helpers/mirror-truth.js';
import { describeRun } from '../../helpers/cli.js';
import { describeCrashMatrix } from './matrix.js';
import type { CrashScenario } from './matrix.js';
import { diffMirrors, diffSnapshots, snapshotLayout } from './mirror-checks.js';
import { CATALOGUE_TABLES, SYNC_STATE_TABLE } from './tables.js';

/**
 * `run nightly` (sync, then snapshot: the default pipeline) from an empty mirror of a
 * 400-domain catalogue, 15 ms of latency per request. Kills land in either step.
 */
const NIGHTLY: CrashScenario = {
  pipeline: 'run nightly',
  args: ['run', 'nightly'],
  sim: { domains: 400 },
  faults: [{ kind: 'latency', latencyMs: 15 }],
  triggers: ['request', 'time', 'time', 'file'],
  budget: 0,
  verify: async ({ trial, baseline, final, where }) => {
    expect(final.code, `${where}: ${describeRun(final)}`).toBe(0);
    expect(diffMirrorWithTruth(trial.dbPath, trial.sim), where).toEqual([]);
    expect(
      diffMirrors(trial.dbPath, baseline.dbPath, [...CATALOGUE_TABLES, SYNC_STATE_TABLE]),
      where,
    ).toEqual([]);
    // The snapshot, minus the same bookkeeping columns; `pipeline_runs` is bookkeeping.
    const specs = [...CATALOGUE_TABLES.filter((s) => s.table !== 'change_log'), { table: 'enrichment_runs' }];
    expect(await diffSnapshots(trial.snapshotsDir, baseline.snapshotsDir, specs), where).toEqual([]);
    expect(await snapshotLayout(trial.snapshotsDir), where).toEqual(
      await snapshotLayout(baseline.snapshotsDir),
    );
    return { recovered: true };
  },
};

describeCrashMatrix(NIGHTLY, 'mirror and snapshot equal the fault-free ones');
