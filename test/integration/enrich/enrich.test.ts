import { describe, expect, it } from 'vitest';
import { enrichPipeline } from '../../../pipelines/enrich/index.js';
import { runCli, startCli } from '../../helpers/cli.js';
import { queryMirror } from '../../helpers/mirror.js';
import {
  billedPostsPerDomain,
  enrichmentPosts,
  HookLogger,
  mirrorNumber,
  netEnrichmentCredits,
  postsPerDomain,
  syncedSetup,
} from './helpers.js';

const env = (sim: { apiKey: string }) => ({ DOMAIN_SYNC_API_KEY: sim.apiKey });

function cliArgs(
  setup: { sim: { baseUrl: string }; configPath: string; dbPath: string },
  ...rest: string[]
): string[] {
  return [
    'enrich',
    '--json',
    '--config',
    setup.configPath,
    '--db',
    setup.dbPath,
    '--base-url',
    setup.sim.baseUrl,
    ...rest,
  ];
}

describe('enrich against the simulator', () => {
  it('30 stale domains, 5 cached, --budget 100: ≤ 100 credits billed, nobody twice, cached free, mirror and ledger agree', async () => {
    const setup = await syncedSetup({ domains: 30, seed: 11, cacheWindowMs: 3_600_000 }, { cachedCount: 5 });
    const { sim, dbPath } = setup;
    const run = await runCli(
      cliArgs(setup, '--budget', '100', '--stale-after', '1ms', '--concurrency', '4'),
      {
        env: env(sim),
      },
    );
    const summary = JSON.parse(run.stdout) as {
      status: string;
      runId: number;
      stats: {
        started: number;
        cached: number;
        completed: number;
        notTried: number;
        creditsSpent: number;
        reconciliation: { difference: number };
      };
    };
    expect(run.code).toBe(0);
    expect(summary.status).toBe('budget_reached');

    const posts = enrichmentPosts(sim);
    const billed = posts.reduce((s, u) => s + u.credits, 0);
    expect(billed).toBeLessThanOrEqual(100);
    expect(billed).toBe(100);
    for (const [domain, count] of billedPostsPerDomain(sim)) expect(count, domain).toBe(1);
    for (const [domain, count] of postsPerDomain(sim)) expect(count, domain).toBe(1);
    for (const domain of setup.cachedDomains) {
      const post = posts.find((u) => u.domain === domain);
      expect(post, domain).toBeDefined();
      expect(post!.credits).toBe(0);
    }
    expect(summary.stats.cached).toBeGreaterThanOrEqual(5);
    expect(summary.stats.started).toBe(10);
    expect(summary.stats.notTried).toBe(30 - summary.stats.started - summary.stats.cached);

    // Completed runs: the mirror holds the service's fresh profile.
    const runs = queryMirror<{
      id: number;
      domain: string;
      status: string;
      credits: number;
      pipeline_run_id: number;
    }>(dbPath, 'SELECT id, domain, status, credits, pipeline_run_id FROM enrichment_runs ORDER BY id');
    expect(runs).toHaveLength(10);
    for (const r of runs) {
      expect(r.status).toBe('completed');
      expect(r.pipeline_run_id).toBe(summary.runId);
      const truth = sim.control.truth.profile(r.domain)!;
      const mirrored = queryMirror<{ last_enriched_at: string }>(
        dbPath,
        'SELECT last_enriched_at FROM domains WHERE domain_normalized = ?',
        r.domain,
      )[0]!;
      expect(mirrored.last_enriched_at).toBe(truth.last_enriched_at);
      expect((sim.control.truth.run(r.id) as { domain?: string } | undefined)?.domain).toBe(r.domain);
    }

    // Run table, ledger and simulator agree to the credit; ledger rows carry the pipeline run.
    const runCredits = mirrorNumber(dbPath, 'SELECT sum(credits) AS n FROM enrichment_runs');
    const ledger = mirrorNumber(
      dbPath,
      "SELECT sum(credits) AS n FROM credit_ledger WHERE operation LIKE 'enrichment%'",
    );
    expect(runCredits).toBe(netEnrichmentCredits(sim));
    expect(ledger).toBe(netEnrichmentCredits(sim));
    expect(
      mirrorNumber(
        dbPath,
        'SELECT count(*) AS n FROM credit_ledger WHERE pipeline_run_id IS NOT ?',
        summary.runId,
      ),
    ).toBe(0);
    expect(
      mirrorNumber(
        dbPath,
        "SELECT count(*) AS n FROM credit_ledger WHERE operation = 'enrichment_cached' AND credits = 0",
      ),
    ).toBe(summary.stats.cached);
    expect(
      mirrorNumber(dbPath, 'SELECT credits_spent AS n FROM pipeline_runs WHERE id = ?', summary.runId),
    ).toBe(100);
    expect(summary.stats.reconciliation.difference).toBe(0);
  });

  it.each([1, 4, 16])(
    'budget arithmetic holds with concurrency %i (in-flight reservations counted)',
    async (concurrency) => {
      const { sim, ctx, cachedDomains } = await syncedSetup(
        { domains: 40, seed: 5, cacheWindowMs: 3_600_000 },
        { cachedCount: 3 },
      );
      const result = await enrichPipeline(ctx, { budget: 50, staleAfterMs: 1, concurrency });
      expect(result.status).toBe('budget_reached');
      const posts = enrichmentPosts(sim);
      expect(posts.reduce((s, u) => s + u.credits, 0)).toBe(50);
      expect(posts.filter((u) => u.status === 202)).toHaveLength(5);
      for (const [domain, count] of postsPerDomain(sim)) expect(count, domain).toBe(1);
      for (const domain of cachedDomains) expect(posts.find((u) => u.domain === domain)?.credits).toBe(0);
      expect(result.creditsSpent).toBe(50);
      expect(result.stats.completed).toBe(5);
      expect(mirrorNumber(ctx.mirror.path, 'SELECT sum(credits) AS n FROM credit_ledger')).toBe(50);
    },
  );

  it('kill -9 while runs are pending, run again: resumed and completed, nobody billed twice, nothing lost', async () => {
    // Time scale 0.2: runs take 6–24 s, so the kill surely lands while they are pending.
    // The killed process cannot release the mirror lock; the next enrich takes it over at once
    // (default lease, no wait), since the holder's pid is gone from this host.
    const setup = await syncedSetup(
      { domains: 20, seed: 9, timeScale: 0.2 },
      { config: { lock: { lease: '60s', wait: '0s' } } },
    );
    const { sim, dbPath } = setup;
    const first = startCli(
      cliArgs(setup, '--budget', '50', '--stale-after', '1ms', '--concurrency', '5', '--log-level', 'info'),
      {
        env: env(sim),
      },
    );
    // Five 202s recorded, then the process dies without any chance to clean up.
    for (;;) {
      const pending = mirrorNumber(
        dbPath,
        "SELECT count(*) AS n FROM enrichment_runs WHERE status = 'pending'",
      );
      if (pending >= 5) break;
      if (first.child.exitCode !== null) throw new Error(`enrich exited early: ${first.stderr()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    first.kill();
    await first.exited;
    const pendingIds = queryMirror<{ id: number; domain: string }>(
      dbPath,
      "SELECT id, domain FROM enrichment_runs WHERE status = 'pending'",
    );
    expect(pendingIds).toHaveLength(5);
    // Let the service finish them while nobody is watching.
    sim.control.advanceClock(130_000);

    // New runs of the second invocation take 6–24 s: they are left pending after a short wait.
    const second = await runCli(
      cliArgs(setup, '--budget', '50', '--stale-after', '1ms', '--concurrency', '5', '--wait', '2s'),
      {
        env: env(sim),
      },
    );
    const summary = JSON.parse(second.stdout) as {
      stats: { resumed: number; completed: number; started: number };
      failures: unknown[];
    };
    expect(summary.failures).toEqual([]);
    expect(second.code, second.stdout).toBe(0);
    expect(summary.stats.resumed).toBe(5);
    for (const { id, domain } of pendingIds) {
      const row = queryMirror<{ status: string }>(
        dbPath,
        'SELECT status FROM enrichment_runs WHERE id = ?',
        id,
      )[0]!;
      expect(row.status).toBe('completed');
      const mirrored = queryMirror<{ last_enriched_at: string }>(
        dbPath,
        'SELECT last_enriched_at FROM domains WHERE domain_normalized = ?',
        domain,
      )[0]!;
      expect(mirrored.last_enriched_at).toBe(sim.control.truth.profile(domain)!.last_enriched_at);
    }
    for (const [domain, count] of billedPostsPerDomain(sim)) expect(count, domain).toBe(1);
    // Every credit the service billed is in the ledger, across both invocations.
    expect(mirrorNumber(dbPath, 'SELECT sum(credits) AS n FROM credit_ledger')).toBe(
      netEnrichmentCredits(sim),
    );
    expect(mirrorNumber(dbPath, 'SELECT sum(credits) AS n FROM enrichment_runs')).toBe(
      netEnrichmentCredits(sim),
    );
  });

  it('an account with 25 credits: stops before a third paid start, exit 3 with the figures, the two runs complete', async () => {
    const setup = await syncedSetup({ domains: 20, seed: 4, credits: 25 });
    const { sim, dbPath } = setup;
    const run = await runCli(
      cliArgs(setup, '--budget', '100', '--stale-after', '1ms', '--concurrency', '4'),
      { env: env(sim) },
    );
    expect(run.code).toBe(3);
    const summary = JSON.parse(run.stdout) as { status: string; error: { code: string; message: string } };
    expect(summary.status).toBe('stopped_by_service');
    expect(summary.error.message).toMatch(/granted 25, used \d+, reserved \d+/);
    const posts = enrichmentPosts(sim);
    expect(posts.reduce((s, u) => s + u.credits, 0)).toBe(20);
    // Either refused by GET /account before sending, or by the service with 429: never billed.
    expect(posts.filter((u) => u.status === 202)).toHaveLength(2);
    expect(mirrorNumber(dbPath, "SELECT count(*) AS n FROM enrichment_runs WHERE status = 'completed'")).toBe(
      2,
    );
    expect(mirrorNumber(dbPath, 'SELECT sum(credits) AS n FROM credit_ledger')).toBe(20);
  });

  it('a 429 quota_exceeded on the third start stops new starts, keeps the two runs, and reports granted/used/reserved', async () => {
    let starts = 0;
    const setup = await syncedSetup({ domains: 20, seed: 4, credits: 1000 });
    const { sim, ctx } = setup;
    // Another client drains the account right after our second start: the start-of-run
    // GET /account said 1000, so only the service can stop the third POST.
    const logger = new HookLogger((msg) => {
      if (msg === 'enrichment started' && ++starts === 2) sim.control.setCredits(25);
    });
    const result = await enrichPipeline({ ...ctx, logger }, { budget: 100, staleAfterMs: 1, concurrency: 1 });
    expect(result.status).toBe('stopped_by_service');
    expect(result.error?.code).toBe('ERR_QUOTA_EXCEEDED');
    expect(result.error?.message).toMatch(/granted 25, used \d+, reserved \d+/);
    const posts = enrichmentPosts(sim);
    expect(posts.filter((u) => u.status === 429)).toHaveLength(1);
    expect(posts.filter((u) => u.status === 202)).toHaveLength(2);
    expect(result.stats.completed).toBe(2);
    expect(mirrorNumber(ctx.mirror.path, 'SELECT sum(credits) AS n FROM credit_ledger')).toBe(20);
  });

  it('ambiguous POSTs (billed, then the answer lost) are never re-sent, and reconciliation finds the credits', async () => {
    const { sim, ctx } = await syncedSetup({ domains: 20, seed: 8 });
    sim.control.setFaults([
      { method: 'POST', path: '/enrichments', kind: 'reset', afterProcessing: true, times: 1 },
      { method: 'POST', path: '/enrichments', kind: 'status', status: 503, afterProcessing: true, times: 1 },
    ]);
    const result = await enrichPipeline(ctx, { budget: 60, staleAfterMs: 1, concurrency: 2 });
    expect(result.stats.unknown).toBe(2);
    for (const [domain, count] of postsPerDomain(sim)) expect(count, domain).toBe(1);
    const billed = enrichmentPosts(sim).reduce((s, u) => s + u.credits, 0);
    // The two lost answers kept their reservations: at most 60 in all.
    expect(billed).toBe(60);
    expect(result.stats.reconciliation).toMatchObject({
      explanation: 'unknown_posts_billed',
      accountDelta: 60,
      believedSpent: 40,
    });
    expect(mirrorNumber(ctx.mirror.path, 'SELECT sum(credits) AS n FROM credit_ledger')).toBe(
      netEnrichmentCredits(sim),
    );
    expect(result.status).toBe('budget_reached');

    // The next invocation never POSTs for those domains while their outcome is unresolved…
    const unknownDomains = queryMirror<{ domain: string }>(
      ctx.mirror.path,
      "SELECT domain FROM enrichment_intents WHERE status = 'reconciled_billed'",
    );
    expect(unknownDomains).toHaveLength(2);
  });

  it('ambiguous POSTs that were not processed: not re-sent, and reconciliation says nothing was billed', async () => {
    const { sim, ctx } = await syncedSetup({ domains: 20, seed: 8 });
    sim.control.setFaults([
      { method: 'POST', path: '/enrichments', kind: 'status', status: 502, afterProcessing: false, times: 2 },
    ]);
    const result = await enrichPipeline(ctx, { budget: 40, staleAfterMs: 1, concurrency: 1 });
    expect(result.stats.unknown).toBe(2);
    for (const [domain, count] of postsPerDomain(sim)) expect(count, domain).toBe(1);
    expect(result.stats.reconciliation).toMatchObject({
      explanation: 'unknown_posts_not_billed',
      difference: 0,
    });
    // The two unknowns held 20 credits until the end, so only 2 paid runs fitted in 40.
    expect(enrichmentPosts(sim).reduce((s, u) => s + u.credits, 0)).toBe(20);
    expect(mirrorNumber(ctx.mirror.path, 'SELECT sum(credits) AS n FROM credit_ledger')).toBe(20);
  });

  it('failed runs: error details stored, the refund found by reconciliation, the domain backs off', async () => {
    const { sim, ctx } = await syncedSetup({ domains: 10, seed: 2, runFailureRate: 1 });
    const result = await enrichPipeline(ctx, { budget: 30, staleAfterMs: 1, concurrency: 3 });
    expect(result.stats.failedRuns).toBe(3);
    expect(result.failures.map((f) => f.code)).toEqual([
      'ERR_RUN_FAILED',
      'ERR_RUN_FAILED',
      'ERR_RUN_FAILED',
    ]);
    const rows = queryMirror<{ domain: string; error_type: string; credits: number }>(
      ctx.mirror.path,
      "SELECT domain, error_type, credits FROM enrichment_runs WHERE status = 'failed'",
    );
    expect(rows).toHaveLength(3);
    for (const r of rows) expect(r.error_type).toBeTruthy();
    // The simulator refunds failed runs (the service does not say; docs/service-api.md): the
    // account says so, and the ledger follows the account rather than assuming.
    expect(result.stats.reconciliation?.explanation).toBe('failed_runs_refunded');
    expect(mirrorNumber(ctx.mirror.path, 'SELECT sum(credits) AS n FROM credit_ledger')).toBe(
      netEnrichmentCredits(sim),
    );
    expect(mirrorNumber(ctx.mirror.path, 'SELECT sum(credits) AS n FROM enrichment_runs')).toBe(
      netEnrichmentCredits(sim),
    );

    sim.control.resetLogs();
    const again = await enrichPipeline(ctx, { budget: 30, staleAfterMs: 1, concurrency: 3 });
    expect(again.stats.skippedBackoff).toBe(3);
    const retried = enrichmentPosts(sim).filter((u) => rows.some((r) => r.domain === u.domain));
    expect(retried).toEqual([]);
  });

  it('an abort stops new starts at once, returns promptly, and leaves the pending runs for the next invocation', async () => {
    const setup = await syncedSetup({ domains: 20, seed: 6, timeScale: 1 });
    const controller = new AbortController();
    const logger = new HookLogger((msg) => {
      if (msg === 'enrichment started') controller.abort();
    });
    const result = await enrichPipeline(
      { ...setup.ctx, logger, signal: controller.signal },
      { budget: 100, staleAfterMs: 1, concurrency: 1 },
    );
    expect(result.status).toBe('interrupted');
    expect(result.stats.started).toBe(1);
    expect(result.stats.leftPending).toBe(1);
    expect(
      mirrorNumber(setup.dbPath, "SELECT count(*) AS n FROM enrichment_runs WHERE status = 'pending'"),
    ).toBe(1);
    expect(enrichmentPosts(setup.sim)).toHaveLength(1);

    setup.sim.control.advanceClock(130_000);
    const resumed = await enrichPipeline(setup.ctx, { budget: 0, staleAfterMs: 1 });
    expect(resumed.stats.resumed).toBe(1);
    expect(resumed.stats.completed).toBe(1);
    expect(enrichmentPosts(setup.sim)).toHaveLength(1);
  });

  it('--dry-run prints the plan and spends nothing; --domain enriches a fresh domain within the budget', async () => {
    const setup = await syncedSetup({ domains: 12, seed: 3 });
    const { sim } = setup;
    const dry = await runCli(cliArgs(setup, '--dry-run', '--budget', '30', '--stale-after', '1ms'), {
      env: {},
    });
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({
      dryRun: true,
      planned: 12,
      worstCaseCredits: 120,
      budget: 30,
    });
    expect(sim.control.usage()).toEqual([]);

    const fresh = sim.control.truth.listDomains()[0]!;
    sim.control.mutate.reenrich(fresh);
    sim.control.advanceClock(2 * 86_400_000); // beyond the 24 h cache window, still "fresh" for 30d
    const run = await runCli(cliArgs(setup, '--domain', fresh, '--budget', '10'), { env: env(sim) });
    expect(run.code).toBe(0);
    const posts = enrichmentPosts(sim);
    expect(posts.map((u) => u.domain)).toEqual([fresh]);
    expect(posts[0]!.credits).toBe(10);
  });
});
