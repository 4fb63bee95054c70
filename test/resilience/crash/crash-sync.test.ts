import { expect } from 'vitest';
import { diffMirrorWithTruth } from '../../helpers/mirror-truth.js';
import { describeRun } from '../../helpers/cli.js';
import { describeCrashMatrix } from './matrix.js';
import type { CrashScenario } from './matrix.js';
import { diffMirrors, indexState } from './mirror-checks.js';
import { CATALOGUE_TABLES, SYNC_STATE_TABLE } from './tables.js';

/** A first full sync of 400 domains; 15 ms of latency per request keeps it going about a second. */
const SYNC: CrashScenario = {
  pipeline: 'sync',
  args: ['sync'],
  sim: { domains: 400 },
  faults: [{ kind: 'latency', latencyMs: 15 }],
  triggers: ['request', 'request', 'time'],
  budget: 0,
  verify: ({ trial, baseline, final, where }) => {
    expect(final.code, `${where}: ${describeRun(final)}`).toBe(0);
    expect(diffMirrorWithTruth(trial.dbPath, trial.sim), where).toEqual([]);
    expect(
      diffMirrors(trial.dbPath, baseline.dbPath, [...CATALOGUE_TABLES, SYNC_STATE_TABLE]),
      where,
    ).toEqual([]);
    // A first sync killed while its indexes were set aside: the next run built every one of them.
    expect(indexState(trial.dbPath), where).toEqual(indexState(baseline.dbPath));
    expect(indexState(baseline.dbPath).setAside).toEqual([]);
    return { recovered: true };
  },
};

describeCrashMatrix(SYNC, 'the mirror equals the fault-free one');
