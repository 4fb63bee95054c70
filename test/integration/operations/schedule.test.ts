import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openMirror } from '../../../src/mirror/database.js';
import { finishPipelineRun, startPipelineRun } from '../../../src/mirror/store/runs.js';
import { startTestSimulator } from '../../helpers/start-simulator.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { startCli } from '../../helpers/cli.js';
import { noOverlap, runsAndLocks, simEnv, writeOperationsConfig } from './helpers.js';

describe('domain-sync schedule', () => {
  it('runs a per-second pipeline, never overlaps it with itself, and stops cleanly on SIGTERM with the lock released', async () => {
    const sim = await startTestSimulator({ domains: 20 });
    // Every listing request takes longer than the 1-second tick, so ticks come while a run is going.
    sim.control.setFaults([{ method: 'GET', path: '/domains', kind: 'latency', latencyMs: 1200 }]);
    const dir = await tempDir();
    await writeOperationsConfig(dir, {
      lock: { lease: '5s' },
      pipelines: {
        tick: { steps: [{ type: 'sync', options: { concurrency: 4 } }], schedule: '* * * * * *' },
      },
    });
    const schedule = startCli(['--json', 'schedule'], { cwd: dir, env: simEnv(sim) });

    const scheduled = await schedule.waitForEvent((e) => e.msg === 'scheduled' && e.pipeline === 'tick');
    expect(scheduled.nextRuns).toHaveLength(3);
    await schedule.waitForEvent((e) => e.msg === 'skipped: still running' && e.pipeline === 'tick');
    // Two finished runs of `tick` (each a parent row plus its sync step).
    await schedule.waitForEvent(
      () =>
        schedule.events().filter((e) => e.msg === 'scheduled run ended' && e.pipeline === 'tick').length >= 2,
    );

    schedule.child.kill('SIGTERM');
    const exit = await schedule.exited;
    expect(exit.code).toBe(0);
    const summary = schedule.summary() as {
      forced: boolean;
      stoppedBy: string;
      pipelines: Array<{ name: string; runs: number; skippedOverlaps: number }>;
    };
    expect(summary).toMatchObject({ ok: true, forced: false, stoppedBy: 'SIGTERM' });
    const tick = summary.pipelines.find((p) => p.name === 'tick')!;
    expect(tick.runs).toBeGreaterThanOrEqual(2);
    expect(tick.skippedOverlaps).toBeGreaterThanOrEqual(1);
    expect(schedule.events().some((e) => e.msg === 'scheduler stopped')).toBe(true);

    const { runs, locks } = runsAndLocks(join(dir, 'mirror.sqlite'));
    expect(locks).toEqual([]);
    expect(runs.filter((r) => r.status === 'running')).toEqual([]);
    const tickRuns = runs.filter((r) => r.pipeline === 'tick');
    expect(tickRuns.length).toBe(tick.runs);
    expect(noOverlap(tickRuns)).toBe(true);
    expect(noOverlap(runs.filter((r) => r.pipeline === 'sync'))).toBe(true);
    // The last run was either finished before SIGTERM or stopped at a safe point by it.
    for (const run of tickRuns) expect(['done', 'interrupted']).toContain(run.status);
    // Every run's id is in its log lines.
    for (const run of tickRuns) {
      expect(schedule.events().some((e) => e.msg === 'pipeline started' && e.runId === run.id)).toBe(true);
    }
  });

  it('catches up a run missed while it was down when catchUp is "once", and not when "none"', async () => {
    const sim = await startTestSimulator({ domains: 10 });
    const dir = await tempDir();
    const daily = { steps: ['snapshot'], schedule: '0 3 * * *', timezone: 'UTC' };
    await writeOperationsConfig(dir, {
      pipelines: { caught: { ...daily, catchUp: 'once' }, waits: { ...daily, catchUp: 'none' } },
    });
    // Both last ran three days ago: at least one 03:00 UTC has passed since.
    const mirror = await openMirror(join(dir, 'mirror.sqlite'));
    const threeDaysAgo = new Date(Date.now() - 3 * 86_400_000).toISOString();
    for (const pipeline of ['caught', 'waits']) {
      const id = startPipelineRun(mirror, { pipeline, startedAt: threeDaysAgo });
      finishPipelineRun(mirror, id, { status: 'done', finishedAt: threeDaysAgo });
    }
    await mirror.close();

    const schedule = startCli(['schedule'], { cwd: dir, env: simEnv(sim) });
    const catching = await schedule.waitForEvent((e) => e.msg === 'catching up a missed run');
    expect(catching).toMatchObject({ pipeline: 'caught', lastStartedAt: threeDaysAgo });
    await schedule.waitForEvent((e) => e.msg === 'scheduled run ended' && e.pipeline === 'caught');
    schedule.child.kill('SIGINT');
    expect((await schedule.exited).code).toBe(0);

    expect(schedule.events().some((e) => e.msg === 'starting scheduled run' && e.pipeline === 'waits')).toBe(
      false,
    );
    const { runs, locks } = runsAndLocks(join(dir, 'mirror.sqlite'));
    expect(locks).toEqual([]);
    expect(runs.filter((r) => r.pipeline === 'caught').map((r) => r.status)).toEqual(['done', 'done']);
    expect(runs.filter((r) => r.pipeline === 'waits')).toHaveLength(1);
  });

  it('refuses a bad cron expression or time zone with exit 2 naming the key', async () => {
    const dir = await tempDir();
    await writeOperationsConfig(dir, {
      pipelines: {
        tz: { steps: ['snapshot'], schedule: '0 3 * * *', timezone: 'Mars/Olympus' },
        cron: { steps: ['snapshot'], schedule: '0 25 * * *' },
      },
    });
    const schedule = startCli(['schedule'], { cwd: dir });
    expect((await schedule.exited).code).toBe(2);
    expect(schedule.stderr()).toContain('pipelines.tz.timezone: unknown time zone "Mars/Olympus"');
    expect(schedule.stderr()).toContain('pipelines.cron.schedule: not a valid cron expression');
  });
});
