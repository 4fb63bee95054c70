import { expect } from 'vitest';
import { diffMirrorWithTruth } from '../../helpers/mirror-truth.js';
import { describeRun } from '../../helpers/cli.js';
import { creditFigures, describeCrashMatrix, runPipelineChild } from './matrix.js';
import type { CrashScenario, Workspace } from './matrix.js';
import { diffRowSets } from './mirror-checks.js';
import { queryMirror } from '../../helpers/mirror.js';

const BUDGET = 300;
const DOMAINS = 30;

/** Domains billed for an enrichment (net of refunds) by the workspace's simulator. */
function billedDomains(ws: Workspace): string[] {
  return ws.sim.control
    .usage()
    .filter((u) => u.endpoint === 'POST /enrichments' && u.credits - (u.refundedCredits ?? 0) > 0)
    .map((u) => u.domain ?? '?')
    .sort();
}

/** Enrichment runs as compared with the fault-free ones: ids and times differ by run, not these. */
function runRows(ws: Workspace): string[] {
  return queryMirror<Record<string, unknown>>(
    ws.dbPath,
    'SELECT domain, status, strategy, credits, result_domain_normalized, result_status FROM enrichment_runs',
  )
    .map((r) => JSON.stringify(r))
    .sort();
}

function openIntents(ws: Workspace): Array<{ domain: string; status: string }> {
  return queryMirror(
    ws.dbPath,
    "SELECT domain, status FROM enrichment_intents WHERE status IN ('intended', 'unknown')",
  );
}

/**
 * `enrich` of every stale domain of a synced 30-domain mirror (about 28; runs of 150–600 ms at
 * time scale 0.005, six in flight), under a budget that covers them all, so the fault-free result
 * is "each stale domain enriched once" and a crash must neither lose one nor pay one twice.
 * Run failures are off: whether a run fails is drawn per run id, and ids differ after a crash.
 */
const ENRICH: CrashScenario = {
  pipeline: 'enrich',
  args: ['enrich', '--budget', String(BUDGET), '--stale-after', '30d', '--concurrency', '6'],
  sim: { domains: DOMAINS, timeScale: 0.005, runFailureRate: 0 },
  faults: [{ kind: 'latency', latencyMs: 15 }],
  config: { api: { pollIntervalMs: 20 }, enrich: { maxPollIntervalMs: 100 } },
  triggers: ['request', 'request', 'time'],
  budget: BUDGET,
  prepare: async (ws) => {
    const synced = await runPipelineChild({ ...ENRICH, args: ['sync'] }, ws);
    if (synced.code !== 0) throw new Error(`template sync failed: ${describeRun(synced)}`);
  },
  // docs/enrich.md "Bookkeeping and resumption": an intent left by a process killed mid-POST
  // blocks its domain until 10 minutes have passed; the next invocation after that resolves it.
  needsLaterRun: (ws) => openIntents(ws).length > 0,
  verify: ({ trial, baseline, final, where }) => {
    expect(final.code, `${where}: ${describeRun(final)}`).toBe(0);
    const expected = billedDomains(baseline);
    expect(expected.length, 'the fault-free run enriched something').toBeGreaterThan(0);
    // The same domains enriched, each paid once (credit figures are checked by the matrix too).
    expect(billedDomains(trial), where).toEqual(expected);
    expect(openIntents(trial), where).toEqual([]);
    expect(
      queryMirror(trial.dbPath, "SELECT id FROM enrichment_runs WHERE status <> 'completed'"),
      where,
    ).toEqual([]);
    // Every domain's row equals the service's truth (freshly enriched ones included).
    expect(diffMirrorWithTruth(trial.dbPath, trial.sim), where).toEqual([]);
    // Each enrichment is recorded as its run, or, when the process died inside the POST (the run
    // id never reached the mirror), as an intent resolved `enriched_unattributed`.
    const unattributed = queryMirror<{ domain: string }>(
      trial.dbPath,
      "SELECT domain FROM enrichment_intents WHERE status = 'enriched_unattributed'",
    ).map((r) => r.domain);
    const withRun = queryMirror<{ domain: string }>(trial.dbPath, 'SELECT domain FROM enrichment_runs').map(
      (r) => r.domain,
    );
    expect([...withRun, ...unattributed].sort(), where).toEqual(expected);
    const baselineRuns = runRows(baseline).filter((r) => !unattributed.includes(JSON.parse(r).domain));
    expect(diffRowSets('enrichment_runs', runRows(trial), baselineRuns, 5), where).toEqual([]);
    for (const { id } of queryMirror<{ id: number }>(trial.dbPath, 'SELECT id FROM enrichment_runs')) {
      const truth = trial.sim.control.truth.run(id) as { status?: string } | undefined;
      expect(truth?.status, `${where}: run ${id}`).toBe('completed');
    }
    // The ledger holds every credit the service billed, except the unattributed enrichments,
    // whose billing the product reports as unknown instead of guessing.
    const ledger = queryMirror<{ n: number | null }>(
      trial.dbPath,
      'SELECT sum(credits) AS n FROM credit_ledger',
    )[0]!.n;
    expect((ledger ?? 0) + 10 * unattributed.length, where).toBe(
      creditFigures(trial.sim.control.usage()).spent,
    );
    return {
      recovered: true,
      notes: { 'enrichments recorded as enriched_unattributed': unattributed.length },
    };
  },
};

describeCrashMatrix(ENRICH, 'each stale domain enriched and paid once');
