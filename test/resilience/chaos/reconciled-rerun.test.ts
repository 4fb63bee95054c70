import { describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { startTestSimulator } from '../../helpers/start-simulator.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { writeTestConfig } from '../../helpers/test-context.js';

/*
 * Regression test for a bug found while building the chaos soak, fixed in
 * src/mirror/store/enrich-plan.ts (a reconciled-billed domain stays blocked for
 * enrich.failureBackoff). Before the fix: when the answer of a
 * billed POST /enrichments is lost, the invocation reconciles it from the account as
 * `reconciled_billed`, and that frees the domain at once. The next `enrich`, run right away
 * (as cron or an operator would after exit 1), still finds the domain stale in the mirror and
 * POSTs for it again while the first run is still pending: the service starts and bills a
 * second run. docs/contract.md "Promises": never pay twice for the same enrichment because of a
 * retry, a crash or a restart.
 */
describe('chaos: a lost, billed enrichment answer', () => {
  it('is not paid for again by the next invocation while its run is pending', async () => {
    // Time scale 0.2: runs take 6–24 s, so the run is surely pending when the second
    // invocation starts.
    const sim = await startTestSimulator({ domains: 30, seed: 3, timeScale: 0.2, runFailureRate: 0 });
    const dir = await tempDir('domain-sync-chaos-');
    const { path: configPath } = await writeTestConfig(dir, { api: { pollIntervalMs: 20 } });
    const env = { DOMAIN_SYNC_API_KEY: sim.apiKey, DOMAIN_SYNC_BASE_URL: sim.baseUrl };
    const cli = (...args: string[]) => runCli([...args, '--json', '--config', configPath], { env, cwd: dir });

    expect((await cli('sync')).code).toBe(0);
    sim.control.setFaults([
      { kind: 'reset', method: 'POST', path: '/enrichments', afterProcessing: true, times: 1 },
    ]);
    const first = await cli('enrich', '--budget', '10', '--wait', '1s');
    const reconciliation = (
      JSON.parse(first.stdout) as { stats: { reconciliation: { explanation: string } } }
    ).stats.reconciliation;
    expect(reconciliation.explanation).toBe('unknown_posts_billed');
    const [lost] = sim.control.usage().filter((u) => u.endpoint === 'POST /enrichments');
    expect(lost).toMatchObject({ status: 0, credits: 10 });
    expect(sim.control.truth.run(lost!.runId!)).toMatchObject({ status: 'pending' });

    await cli('enrich', '--budget', '10', '--wait', '1s');
    const billedForLost = sim.control
      .usage()
      .filter((u) => u.endpoint === 'POST /enrichments' && u.domain === lost!.domain && u.credits > 0);
    expect(billedForLost.map((u) => u.runId)).toEqual([lost!.runId]);
  });
});
