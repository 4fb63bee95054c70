import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { MemoryLogger } from '../../../src/log/logger.js';
import { openMirror, type Mirror } from '../../../src/mirror/database.js';
import { listLocks, tryAcquireLock } from '../../../src/mirror/store/locks.js';
import { acquireMirrorLock, LockedError, type MirrorLockContext } from '../../../src/runtime/lock.js';
import { sleep } from '../../../src/util/sleep.js';
import { isoFromMs } from '../../../src/util/time.js';
import { tempDir } from '../../helpers/temp-dir.js';

async function lockContext(
  clock: () => number = Date.now,
  busyTimeoutMs?: number,
): Promise<MirrorLockContext & { mirror: Mirror; logger: MemoryLogger }> {
  return {
    mirror: await openMirror(join(await tempDir(), 'mirror.sqlite'), { busyTimeoutMs }),
    logger: new MemoryLogger(),
    signal: new AbortController().signal,
    clock,
    config: { lock: { leaseMs: 2_000, waitMs: 0 } },
  };
}

/**
 * A clock the test moves, driving the heartbeat too: the heartbeat's timer (setInterval, every
 * quarter of the lease) is faked and advanced with the clock, so no test waits for real time.
 */
function steppedClock(): { now: () => number; advance(ms: number): void } {
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
  onTestFinished(() => void vi.useRealTimers());
  let now = Date.now();
  return {
    now: () => now,
    advance(ms) {
      for (let step = 0; step < ms; step += 100) {
        now += 100;
        vi.advanceTimersByTime(100);
      }
    },
  };
}

describe('acquireMirrorLock in one process', () => {
  it('is re-entrant along one call chain and released by the outermost holder only', async () => {
    const ctx = await lockContext();
    const outer = await acquireMirrorLock(ctx, 'nightly');
    await outer.run(async () => {
      const inner = await acquireMirrorLock(ctx, 'sync');
      expect(inner.reentered).toBe(true);
      inner.release();
      expect(listLocks(ctx.mirror).map((l) => l.pipeline)).toEqual(['nightly']);
    });
    expect(listLocks(ctx.mirror)).toHaveLength(1);
    outer.release();
    expect(listLocks(ctx.mirror)).toEqual([]);
    await ctx.mirror.close();
  });

  it('excludes a second pipeline started side by side, naming the holder', async () => {
    const ctx = await lockContext();
    const first = await acquireMirrorLock(ctx, 'nightly');
    // Not inside first.run(): a separate call chain, like a second `schedule` task.
    const error = await acquireMirrorLock(ctx, 'weekly').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockedError);
    expect((error as LockedError).holder).toMatchObject({ pipeline: 'nightly', pid: process.pid });
    first.release();
    const second = await acquireMirrorLock(ctx, 'weekly');
    expect(listLocks(ctx.mirror).map((l) => l.pipeline)).toEqual(['weekly']);
    second.release();
    await ctx.mirror.close();
  });

  it('renews the lease with a heartbeat, so a long run keeps the lock past the lease', async () => {
    const clock = steppedClock();
    const ctx = await lockContext(clock.now);
    const held = await acquireMirrorLock(ctx, 'nightly');
    const firstExpiry = listLocks(ctx.mirror)[0]!.expires_at;
    clock.advance(2_500);
    // Past the first lease (2 s): only the heartbeat's renewals keep the lock.
    const [lock] = listLocks(ctx.mirror, isoFromMs(clock.now()));
    expect(lock!.stale).toBe(false);
    expect(lock!.expires_at > firstExpiry).toBe(true);
    held.release();
    await ctx.mirror.close();
  });

  it("never waits on its thread for another connection's write lock, and renews once the lock is free", async () => {
    const clock = steppedClock();
    // A busy timeout the renewal would sit out if it waited for the lock, as it used to.
    const ctx = await lockContext(clock.now, 1_000);
    const held = await acquireMirrorLock(ctx, 'sync');
    const firstExpiry = listLocks(ctx.mirror)[0]!.expires_at;
    // Another connection holds the write lock, as the sync's writer thread does between commits.
    const other = new Database(ctx.mirror.path);
    other.exec('BEGIN IMMEDIATE');
    clock.advance(500); // a beat (a quarter of the 2 s lease)
    // The beat found the mirror busy and left at once: nothing renewed, nothing failed.
    expect(listLocks(ctx.mirror)[0]!.expires_at).toBe(firstExpiry);
    expect(ctx.logger.events.filter((e) => e.level !== 'debug')).toEqual([]);
    // Its retries, on timers, keep finding the lock held: still nothing renewed, nothing failed.
    await sleep(250);
    expect(ctx.logger.events.filter((e) => e.level !== 'debug')).toEqual([]);
    expect(listLocks(ctx.mirror)[0]!.expires_at).toBe(firstExpiry);
    other.exec('COMMIT');
    other.close();
    // The next retry gets through without waiting for the next beat.
    await vi.waitFor(() => expect(listLocks(ctx.mirror)[0]!.expires_at > firstExpiry).toBe(true), {
      timeout: 5_000,
      interval: 20,
    });
    expect(held.signal.aborted).toBe(false);
    held.release();
    await ctx.mirror.close();
  });

  it('aborts the holder when another process took the lease over (this one stalled)', async () => {
    const clock = steppedClock();
    const ctx = await lockContext(clock.now);
    const held = await acquireMirrorLock(ctx, 'nightly');
    // Simulate a takeover: another connection replaces the row (as after an expired lease).
    const other = await openMirror(ctx.mirror.path);
    const far = new Date(Date.now() + 3_600_000).toISOString();
    expect(
      tryAcquireLock(other, {
        name: 'mirror',
        token: 'other',
        pipeline: 'sync',
        pid: 1,
        hostname: 'elsewhere',
        now: far,
        expiresAt: new Date(Date.now() + 7_200_000).toISOString(),
      }).acquired,
    ).toBe(true);
    expect(held.signal.aborted).toBe(false);
    // The next heartbeat (a quarter of the lease) finds the row taken.
    clock.advance(500);
    expect(held.signal.aborted).toBe(true);
    held.release();
    // Releasing does not remove the new holder's row.
    expect(listLocks(other).map((l) => l.pipeline)).toEqual(['sync']);
    await other.close();
    await ctx.mirror.close();
  });
});
