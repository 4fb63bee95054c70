import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diffMirrorWithTruth } from '../../helpers/mirror-truth.js';
import { startTestSimulator } from '../../helpers/start-simulator.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { runCli, startCli } from '../../helpers/cli.js';
import { noOverlap, runsAndLocks, simEnv, writeOperationsConfig } from './helpers.js';

/** A catalogue small enough to be quick, with enough latency that a sync takes a few seconds. */
async function slowSimulator() {
  const sim = await startTestSimulator({ domains: 60 });
  sim.control.setFaults([{ method: 'GET', path: '/domains', kind: 'latency', latencyMs: 250 }]);
  return sim;
}

describe('the mirror lock between processes', () => {
  it('two `run nightly` started together: one runs, the other exits 1 naming the holder; the mirror is consistent', async () => {
    const sim = await slowSimulator();
    const dir = await tempDir();
    await writeOperationsConfig(dir, { api: { concurrency: 2 } });
    const options = { cwd: dir, env: simEnv(sim) };
    const [a, b] = await Promise.all([
      runCli(['--json', 'run', 'nightly'], options),
      runCli(['--json', 'run', 'nightly'], options),
    ]);
    const codes = [a.code, b.code].sort();
    expect(codes).toEqual([0, 1]);
    const winner = a.code === 0 ? a : b;
    const loser = a.code === 0 ? b : a;
    const summary = JSON.parse(loser.stdout) as {
      runId: unknown;
      error: { code: string; message: string };
      lockHolder: { pipeline: string; pid: number; since: string };
    };
    expect(summary.error.code, loser.stdout + loser.stderr).toBe('ERR_LOCKED');
    expect(summary.runId).toBeNull();
    expect(summary.lockHolder).toMatchObject({ pipeline: 'nightly', pid: winner.pid });
    expect(summary.error.message).toContain(`pipeline "nightly" (pid ${winner.pid}`);
    expect(summary.error.message).toContain(summary.lockHolder.since);
    expect(loser.stderr).toContain(
      `domain-sync: the mirror is locked by pipeline "nightly" (pid ${winner.pid}`,
    );

    const dbPath = join(dir, 'mirror.sqlite');
    const { runs, locks } = runsAndLocks(dbPath);
    expect(locks).toEqual([]);
    // Only the winner recorded anything: one nightly with its two steps, all done.
    expect(runs.map((r) => [r.pipeline, r.status, r.pid])).toEqual([
      ['nightly', 'done', winner.pid],
      ['sync', 'done', winner.pid],
      ['snapshot', 'done', winner.pid],
    ]);
    expect(diffMirrorWithTruth(dbPath, sim)).toEqual([]);
  });

  it('with --wait the second one waits for the first and then runs; the runs do not overlap', async () => {
    const sim = await slowSimulator();
    const dir = await tempDir();
    await writeOperationsConfig(dir, { api: { concurrency: 2 }, lock: { lease: '5s' } });
    const options = { cwd: dir, env: simEnv(sim) };
    const [a, b] = await Promise.all([
      runCli(['run', 'nightly', '--wait', '5m'], options),
      runCli(['run', 'nightly', '--wait', '5m'], options),
    ]);
    // On a failure, say why: each process's stderr is in the message.
    expect([a.code, b.code], `first:\n${a.stderr}\nsecond:\n${b.stderr}`).toEqual([0, 0]);
    const waiter = [a, b].find((p) => p.events.some((e) => e.msg === 'waiting for the mirror lock'));
    expect(waiter).toBeDefined();
    const { runs, locks } = runsAndLocks(join(dir, 'mirror.sqlite'));
    expect(locks).toEqual([]);
    const nightly = runs.filter((r) => r.pipeline === 'nightly');
    expect(nightly.map((r) => r.status)).toEqual(['done', 'done']);
    expect(noOverlap(runs.filter((r) => r.pipeline === 'sync'))).toBe(true);
    expect(noOverlap(nightly)).toBe(true);
    expect(diffMirrorWithTruth(join(dir, 'mirror.sqlite'), sim)).toEqual([]);
  });

  it('a lock left by a killed process is refused while its lease runs, then taken over', async () => {
    const sim = await slowSimulator();
    const dir = await tempDir();
    await writeOperationsConfig(dir, { api: { concurrency: 2 }, lock: { lease: '8s' } });
    const options = { cwd: dir, env: simEnv(sim) };
    const victim = startCli(['run', 'nightly'], options);
    await victim.waitForEvent((e) => e.msg === 'pipeline started' && e.pipeline === 'sync');
    victim.child.kill('SIGKILL');
    expect((await victim.exited).signal).toBe('SIGKILL');

    const dbPath = join(dir, 'mirror.sqlite');
    const left = runsAndLocks(dbPath);
    expect(left.locks).toMatchObject([{ name: 'mirror', pipeline: 'nightly', pid: victim.pid }]);

    // The lease (8 s) has not run out yet: refused, naming the dead holder.
    const refused = await runCli(['--json', 'run', 'nightly'], options);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject({
      error: { code: 'ERR_LOCKED' },
      lockHolder: { pipeline: 'nightly', pid: victim.pid },
    });

    // Waiting long enough: the lease expires and the lock is taken over.
    const taker = await runCli(['--json', 'run', 'nightly', '--wait', '2m'], options);
    expect(taker.code).toBe(0);
    const takeover = taker.events.find((e) => e.msg === 'took over a stale mirror lock');
    expect(takeover).toMatchObject({ previous: { pid: victim.pid, pipeline: 'nightly' } });

    const { runs, locks } = runsAndLocks(dbPath);
    expect(locks).toEqual([]);
    expect(runs.filter((r) => r.status === 'running')).toEqual([]);
    // The killed process's runs are closed as interrupted, naming the expired lease.
    const victimRuns = runs.filter((r) => r.pid === victim.pid);
    expect(victimRuns.map((r) => r.pipeline)).toEqual(['nightly', 'sync']);
    for (const run of victimRuns) {
      expect(run.status).toBe('interrupted');
      expect(run.error).toMatch(/^ERR_LOCK_EXPIRED: /);
    }
    expect(runs.filter((r) => r.pid === taker.pid).map((r) => r.status)).toEqual(['done', 'done', 'done']);
    expect(diffMirrorWithTruth(dbPath, sim)).toEqual([]);
  });
});
