import { hostname } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
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

  it('a lock left by a process killed on this host is taken over at once, and its runs closed', async () => {
    const sim = await slowSimulator();
    const dir = await tempDir();
    // The default lease (60 s) and no wait: only the dead pid lets the next run in.
    await writeOperationsConfig(dir, { api: { concurrency: 2 } });
    const options = { cwd: dir, env: simEnv(sim) };
    const victim = startCli(['run', 'nightly'], options);
    await victim.waitForEvent((e) => e.msg === 'pipeline started' && e.pipeline === 'sync');
    victim.child.kill('SIGKILL');
    expect((await victim.exited).signal).toBe('SIGKILL');

    const dbPath = join(dir, 'mirror.sqlite');
    const left = runsAndLocks(dbPath);
    expect(left.locks).toMatchObject([
      { name: 'mirror', pipeline: 'nightly', pid: victim.pid, hostname: hostname() },
    ]);

    const taker = await runCli(['--json', 'run', 'nightly'], options);
    expect(taker.code).toBe(0);
    const takeover = taker.events.find((e) =>
      String(e.msg).startsWith('took over the mirror lock of process'),
    );
    expect(takeover).toMatchObject({
      msg: `took over the mirror lock of process ${victim.pid}, which is gone from this host`,
      previous: { pid: victim.pid, pipeline: 'nightly' },
    });
    expect(taker.events.some((e) => e.msg === 'waiting for the mirror lock')).toBe(false);

    const { runs, locks } = runsAndLocks(dbPath);
    expect(locks).toEqual([]);
    expect(runs.filter((r) => r.status === 'running')).toEqual([]);
    const victimRuns = runs.filter((r) => r.pid === victim.pid);
    expect(victimRuns.map((r) => r.pipeline)).toEqual(['nightly', 'sync']);
    for (const run of victimRuns) {
      expect(run.status).toBe('interrupted');
      expect(run.error).toMatch(
        new RegExp(`^ERR_HOLDER_GONE: process ${victim.pid} ended without releasing`),
      );
    }
    expect(runs.filter((r) => r.pid === taker.pid).map((r) => r.status)).toEqual(['done', 'done', 'done']);
    expect(diffMirrorWithTruth(dbPath, sim)).toEqual([]);
  });

  it.each([
    ['on another host', 'another-host.example', () => 4_000_000],
    ['on this host whose pid exists', hostname(), () => process.pid],
  ])(
    'a holder %s keeps its lease: refused, then taken over once it has expired',
    async (_label, host, pid) => {
      const sim = await startTestSimulator({ domains: 20 });
      const dir = await tempDir();
      await writeOperationsConfig(dir, {});
      const options = { cwd: dir, env: simEnv(sim) };
      expect((await runCli(['migrate'], options)).code).toBe(0);
      const dbPath = join(dir, 'mirror.sqlite');
      const now = Date.now();
      const writeLock = (expiresAtMs: number) => {
        const db = new Database(dbPath);
        try {
          db.prepare(
            `INSERT OR REPLACE INTO locks (name, token, pipeline, pid, hostname, acquired_at, heartbeat_at, expires_at)
           VALUES ('mirror', 'someone-else', 'nightly', ?, ?, ?, ?, ?)`,
          ).run(
            pid(),
            host,
            new Date(now).toISOString(),
            new Date(now).toISOString(),
            new Date(expiresAtMs).toISOString(),
          );
        } finally {
          db.close();
        }
      };
      writeLock(now + 60_000);

      const refused = await runCli(['--json', 'sync'], options);
      expect(refused.code).toBe(1);
      expect(JSON.parse(refused.stdout)).toMatchObject({
        error: { code: 'ERR_LOCKED' },
        lockHolder: { pipeline: 'nightly', pid: pid(), hostname: host },
      });
      expect(runsAndLocks(dbPath).locks).toMatchObject([{ token: 'someone-else' }]);

      // Its lease runs out (the holder stopped renewing): the next writer takes it over.
      writeLock(Date.now() - 1);
      const taker = await runCli(['--json', 'sync'], options);
      expect(taker.code).toBe(0);
      expect(taker.events.find((e) => e.msg === 'took over a stale mirror lock')).toMatchObject({
        previous: { pid: pid(), hostname: host },
      });
      expect(runsAndLocks(dbPath).locks).toEqual([]);
    },
  );
});
