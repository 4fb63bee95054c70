import { writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { enrichPipeline } from '../../../pipelines/enrich/index.js';
import { runCli } from '../../helpers/cli.js';
import { queryMirror } from '../../helpers/mirror.js';
import { testConfigFile } from '../../helpers/test-context.js';
import {
  enrichmentPosts,
  mirrorNumber,
  netEnrichmentCredits,
  syncedSetup,
  FAST_ENRICH_CONFIG,
} from './helpers.js';

/**
 * A clock that runs at real speed from a chosen moment; `jumpTo` moves it (the simulator's runs
 * still take real time, so the clock must keep moving).
 */
function movableClock(startIso: string) {
  let base = Date.parse(startIso);
  let realBase = Date.now();
  return {
    now: () => base + (Date.now() - realBase),
    jumpTo(iso: string) {
      base = Date.parse(iso);
      realBase = Date.now();
    },
  };
}

describe('credit allowances (credits.maxPerDay, credits.maxPerMonth)', () => {
  it('cross a UTC day and a UTC month boundary with an injected clock', async () => {
    const clock = movableClock('2026-11-29T23:58:00.000Z');
    const setup = await syncedSetup(
      { domains: 40, seed: 21 },
      { clock: clock.now, config: { credits: { maxPerDay: 30, maxPerMonth: 50 } } },
    );
    const { sim, ctx, dbPath } = setup;
    const enrich = () => enrichPipeline(ctx, { budget: 1_000, staleAfterMs: 1, concurrency: 2 });

    // Day 1 (29 Nov): the day's 30 credits, then the day's allowance stops it.
    const first = await enrich();
    expect(first.status).toBe('budget_reached');
    expect(first.stats.creditsSpent).toBe(30);
    expect(first.stats.stopReason).toBe('allowance');
    expect(first.stats.stoppedByAllowance).toMatchObject({
      key: 'credits.maxPerDay',
      allows: 30,
      resetsAt: '2026-11-30T00:00:00.000Z',
    });
    expect(first.stats.stoppedByAllowance?.message).toContain('credits.maxPerDay allows 30 credits');

    // Day 2 (30 Nov), same month: 20 more reach the month's 50.
    clock.jumpTo('2026-11-30T00:00:05.000Z');
    const second = await enrich();
    expect(second.stats.creditsSpent).toBe(20);
    expect(second.stats.stoppedByAllowance).toMatchObject({
      key: 'credits.maxPerMonth',
      allows: 50,
      resetsAt: '2026-12-01T00:00:00.000Z',
    });

    // Later that day: nothing left this month. Nothing is sent, and the summary says why.
    clock.jumpTo('2026-11-30T12:00:00.000Z');
    const postsBefore = enrichmentPosts(sim).length;
    const third = await enrich();
    expect(enrichmentPosts(sim).length).toBe(postsBefore);
    expect(third.status).toBe('budget_reached');
    expect(third.stats.posts).toBe(0);
    expect(third.stats.allowance?.remaining).toBe(0);
    expect(third.stats.stoppedByAllowance?.key).toBe('credits.maxPerMonth');

    // 1 December: a new day and a new month.
    clock.jumpTo('2026-12-01T00:00:05.000Z');
    const fourth = await enrich();
    expect(fourth.stats.creditsSpent).toBe(30);
    expect(fourth.stats.stoppedByAllowance?.key).toBe('credits.maxPerDay');

    // The service billed exactly what the ledger says, and each period stayed within its allowance.
    expect(netEnrichmentCredits(sim)).toBe(80);
    const perDay = queryMirror<{ day: string; credits: number }>(
      dbPath,
      'SELECT substr(at, 1, 10) AS day, sum(credits) AS credits FROM credit_ledger GROUP BY 1 ORDER BY 1',
    );
    expect(perDay).toEqual([
      { day: '2026-11-29', credits: 30 },
      { day: '2026-11-30', credits: 20 },
      { day: '2026-12-01', credits: 30 },
    ]);
  });

  it('count a lost answer as spent until it is reconciled', async () => {
    const setup = await syncedSetup({ domains: 30, seed: 22 }, { config: { credits: { maxPerDay: 40 } } });
    const { sim, ctx, dbPath } = setup;
    // Every paid POST is processed and billed, and then its answer is lost.
    sim.control.setFaults([{ method: 'POST', path: '/enrichments', kind: 'reset', afterProcessing: true }]);
    const run = await enrichPipeline(ctx, { budget: 1_000, staleAfterMs: 1, concurrency: 1 });
    sim.control.clearFaults();
    // Nothing reached the ledger during the run, yet the fifth POST was never sent: the four
    // lost answers counted 10 credits each.
    expect(enrichmentPosts(sim)).toHaveLength(4);
    expect(run.stats.unknown).toBe(4);
    expect(run.stats.stoppedByAllowance).toMatchObject({ key: 'credits.maxPerDay', allows: 40, used: 40 });
    // The end-of-run reconciliation then finds them billed: the ledger says what the service billed.
    expect(run.stats.reconciliation?.explanation).toBe('unknown_posts_billed');
    expect(mirrorNumber(dbPath, 'SELECT sum(credits) AS n FROM credit_ledger')).toBe(40);
    expect(netEnrichmentCredits(sim)).toBe(40);
  });

  it('count a cached answer as nothing', async () => {
    const setup = await syncedSetup(
      { domains: 30, seed: 24, cacheWindowMs: 3_600_000 },
      { cachedCount: 3, config: { credits: { maxPerDay: 20 } } },
    );
    const { sim, ctx } = setup;
    const run = await enrichPipeline(ctx, { budget: 1_000, staleAfterMs: 1, concurrency: 1 });
    // The three cached domains are the oldest, so they are planned first and cost nothing.
    expect(run.stats.cached).toBe(3);
    expect(run.stats.started).toBe(2);
    expect(run.stats.creditsSpent).toBe(20);
    expect(run.stats.stoppedByAllowance?.key).toBe('credits.maxPerDay');
    expect(netEnrichmentCredits(sim)).toBe(20);
  });

  it('an export refused by an allowance spends nothing and exits 0 naming the allowance', async () => {
    const setup = await syncedSetup({ domains: 300, seed: 23, exportCreditsPerRow: 0.1 });
    const { sim, dbPath, ctx } = setup;
    const configPath = `${ctx.dir}/config-allowance.json`;
    await writeFile(
      configPath,
      JSON.stringify(testConfigFile(ctx.dir, { ...FAST_ENRICH_CONFIG, credits: { maxPerDay: 5 } })),
    );
    sim.control.resetLogs();
    const run = await runCli(
      ['export', '--json', '--config', configPath, '--db', dbPath, '--base-url', sim.baseUrl],
      {
        env: { DOMAIN_SYNC_API_KEY: sim.apiKey },
      },
    );
    expect(run.stderr).not.toContain('"level":50');
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout) as {
      status: string;
      creditsSpent: number;
      error: { code: string; message: string };
      stats: {
        estimatedCredits: number;
        stoppedByAllowance: { key: string; allows: number; resetsAt: string };
      };
    };
    expect(summary.status).toBe('budget_reached');
    expect(summary.creditsSpent).toBe(0);
    expect(summary.error.code).toBe('ERR_OVER_ALLOWANCE');
    expect(summary.error.message).toMatch(
      /credits\.maxPerDay allows 5 credits .* resets at \d{4}-\d\d-\d\dT00:00:00\.000Z/,
    );
    expect(summary.stats.estimatedCredits).toBeGreaterThan(5);
    expect(summary.stats.stoppedByAllowance).toMatchObject({ key: 'credits.maxPerDay', allows: 5 });
    expect(sim.control.requests().filter((r) => r.method === 'POST')).toEqual([]);
    expect(sim.control.usage().reduce((s, u) => s + u.credits, 0)).toBe(0);
    expect(mirrorNumber(dbPath, 'SELECT count(*) AS n FROM exports')).toBe(0);
    expect(mirrorNumber(dbPath, "SELECT count(*) AS n FROM sync_state WHERE pipeline = 'export'")).toBe(0);
  });

  it('enrich --dry-run shows what the allowances leave and bounds what would be tried by it', async () => {
    const setup = await syncedSetup({ domains: 30, seed: 26 });
    const { sim, ctx, dbPath } = setup;
    const configPath = `${ctx.dir}/config-dry.json`;
    await writeFile(
      configPath,
      JSON.stringify(testConfigFile(ctx.dir, { credits: { maxPerDay: 35, maxPerMonth: 1000 } })),
    );
    const run = await runCli(
      [
        'enrich',
        '--dry-run',
        '--json',
        '--config',
        configPath,
        '--db',
        dbPath,
        '--budget',
        '500',
        '--stale-after',
        '1ms',
      ],
      {},
    );
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout) as {
      planned: number;
      affordableRuns: number;
      wouldEnrichAtLeast: number;
      allowance: {
        remaining: number;
        day: { allows: number; remaining: number };
        month: { remaining: number };
      };
    };
    expect(summary.planned).toBe(30);
    expect(summary.affordableRuns).toBe(50);
    expect(summary.allowance).toMatchObject({
      remaining: 35,
      day: { allows: 35, remaining: 35 },
      month: { remaining: 1000 },
    });
    expect(summary.wouldEnrichAtLeast).toBe(3);
    const human = await runCli(
      ['enrich', '--dry-run', '--config', configPath, '--db', dbPath, '--stale-after', '1ms'],
      {},
    );
    expect(human.stdout).toContain('credits.maxPerDay leaves 35 of 35');
    expect(sim.control.requests()).toEqual([]);
  });

  it('two enrich processes started at the same moment, each with a budget above the allowance, spend at most the allowance together', async () => {
    const setup = await syncedSetup({ domains: 60, seed: 25 });
    const { sim, ctx, dbPath } = setup;
    const configPath = `${ctx.dir}/config-two.json`;
    await writeFile(
      configPath,
      JSON.stringify(
        testConfigFile(ctx.dir, {
          ...FAST_ENRICH_CONFIG,
          credits: { maxPerDay: 50 },
          // The second process waits for the first one's mirror lock instead of failing.
          lock: { wait: '120s' },
        }),
      ),
    );
    const args = ['enrich', '--json', '--config', configPath, '--db', dbPath, '--base-url', sim.baseUrl];
    const options = { env: { DOMAIN_SYNC_API_KEY: sim.apiKey } };
    const runs = await Promise.all([
      runCli([...args, '--budget', '500', '--stale-after', '1ms', '--concurrency', '4'], options),
      runCli([...args, '--budget', '500', '--stale-after', '1ms', '--concurrency', '4'], options),
    ]);
    const summaries = runs.map(
      (r) =>
        JSON.parse(r.stdout) as {
          status: string;
          creditsSpent: number;
          stats: { posts: number; stoppedByAllowance: { key: string; allows: number } | null };
        },
    );
    expect(runs.map((r) => r.code)).toEqual([0, 0]);
    // Checked on the service's own ledger: 50 credits, not 100.
    expect(netEnrichmentCredits(sim)).toBe(50);
    expect(summaries.reduce((sum, s) => sum + s.creditsSpent, 0)).toBe(50);
    for (const s of summaries) {
      expect(s.status).toBe('budget_reached');
      expect(s.stats.stoppedByAllowance).toMatchObject({ key: 'credits.maxPerDay', allows: 50 });
    }
    // One of them found nothing left and sent nothing.
    expect(summaries.map((s) => s.stats.posts).sort((a, b) => a - b)[0]).toBe(0);
  });
});
