import { describe, expect, it } from 'vitest';
import { openMirror } from '../../../src/mirror/database.js';
import { recordEnrichmentIntent } from '../../../src/mirror/store/enrichment.js';
import { tryAcquireLock } from '../../../src/mirror/store/locks.js';
import { runCli } from '../../helpers/cli.js';
import { startTestSimulator } from '../../helpers/start-simulator.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { writeTestConfig } from '../../helpers/test-context.js';

describe('status --json', () => {
  it('reflects the runs, the credits and the locks the commands created', async () => {
    const sim = await startTestSimulator({
      domains: 60,
      seed: 31,
      timeScale: 0.01,
      runFailureRate: 0,
      cacheWindowMs: 0,
    });
    const dir = await tempDir();
    const { path, config } = await writeTestConfig(dir, {
      api: { pollIntervalMs: 20 },
      credits: { maxPerDay: 100, maxPerMonth: 1000 },
    });
    const env = { DOMAIN_SYNC_API_KEY: sim.apiKey, DOMAIN_SYNC_BASE_URL: sim.baseUrl };
    expect((await runCli(['sync', '--config', path], { cwd: dir, env })).code).toBe(0);
    const domains = sim.control.truth.listDomains().slice(0, 2);
    const enrich = await runCli(
      [
        'enrich',
        '--config',
        path,
        '--budget',
        '20',
        '--wait',
        '2m',
        ...domains.flatMap((d) => ['--domain', d]),
      ],
      { cwd: dir, env },
    );
    expect(enrich.code, enrich.stderr).toBe(0);
    const billed = sim.control.usage().reduce((sum, u) => sum + u.credits, 0);
    expect(billed).toBe(20);

    const mirror = await openMirror(config.database.path);
    const now = new Date();
    tryAcquireLock(mirror, {
      name: 'mirror',
      token: 'test-token',
      pipeline: 'nightly',
      pid: 424242,
      hostname: 'elsewhere',
      now: now.toISOString(),
      expiresAt: new Date(now.getTime() + 3_600_000).toISOString(),
    });
    // A POST in flight (an open intent) counts against the allowances at 10 credits.
    recordEnrichmentIntent(mirror, {
      domain: 'inflight.example',
      createdAt: now.toISOString(),
      estimatedCredits: 10,
    });
    await mirror.close();

    const status = await runCli(['status', '--json', '--config', path], { cwd: dir });
    expect(status.code).toBe(0);
    const summary = JSON.parse(status.stdout) as {
      lastRuns: Array<{
        id: number;
        pipeline: string;
        status: string;
        started_at: string;
        credits_spent: number;
      }>;
      credits: {
        today: number;
        total: number;
        perPipeline: Array<{ pipeline: string; credits: number }>;
        last7Days: Array<{ day: string; pipeline: string; credits: number }>;
        remaining: { today: number | null; thisMonth: number | null };
        allowance: {
          day: { key: string; allows: number; used: number; remaining: number; resetsAt: string };
          month: { key: string; allows: number; used: number; remaining: number; resetsAt: string };
        };
      };
      locks: Array<Record<string, unknown>>;
      baseline: {
        startedAt: string;
        pipelineRunId: number;
        pipeline: string | null;
        finishedAt: string | null;
      } | null;
    };
    expect(summary.lastRuns.map((r) => [r.pipeline, r.status]).sort()).toEqual([
      ['enrich', 'done'],
      ['sync', 'done'],
    ]);
    expect(summary.lastRuns.find((r) => r.pipeline === 'enrich')?.credits_spent).toBe(20);
    expect(summary.credits.total).toBe(20);
    expect(summary.credits.today).toBe(20);
    expect(summary.credits.perPipeline).toEqual([{ pipeline: 'enrich', credits: 20, entries: 2 }]);
    expect(summary.credits.last7Days).toEqual([
      { day: new Date().toISOString().slice(0, 10), pipeline: 'enrich', credits: 20 },
    ]);
    // Spent (20) plus in flight (10) against the allowances.
    expect(summary.credits.remaining).toEqual({ today: 70, thisMonth: 970 });
    const tomorrow = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
    expect(summary.credits.allowance.day).toEqual({
      key: 'credits.maxPerDay',
      allows: 100,
      used: 30,
      remaining: 70,
      resetsAt: tomorrow.toISOString(),
    });
    expect(summary.credits.allowance.month).toMatchObject({
      key: 'credits.maxPerMonth',
      allows: 1000,
      used: 30,
    });
    // The first sync was the mirror's baseline, and it finished.
    const syncRun = summary.lastRuns.find((r) => r.pipeline === 'sync')!;
    expect(summary.baseline).toEqual({
      startedAt: syncRun.started_at,
      pipelineRunId: syncRun.id,
      pipeline: 'sync',
      finishedAt: expect.any(String) as unknown,
    });
    expect(summary.locks).toHaveLength(1);
    expect(summary.locks[0]).toMatchObject({
      pipeline: 'nightly',
      pid: 424242,
      hostname: 'elsewhere',
      stale: false,
    });
    expect(summary.locks[0]).not.toHaveProperty('token');

    const human = await runCli(['status', '--config', path], { cwd: dir });
    expect(human.stdout).toMatch(/nightly \(pid 424242 on elsewhere\)/);
    expect(human.stdout).toContain('credits.maxPerDay leaves 70 of 100');
    expect(human.stdout).toContain(
      `change_log       changes since the mirror's first sync (${syncRun.started_at}), the baseline`,
    );
  });
});
