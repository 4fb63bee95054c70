import { AsyncLocalStorage } from 'node:async_hooks';
import { setMaxListeners } from 'node:events';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { Logger } from '../log/logger.js';
import type { Mirror } from '../mirror/database.js';
import {
  releaseLock,
  renewLockWithoutWaiting,
  tryAcquireLock,
  type LockRecord,
} from '../mirror/store/locks.js';
import { finishPipelineRun, listRunningPipelineRuns } from '../mirror/store/runs.js';
import { DomainSyncError } from '../util/domain-sync-error.js';
import { sleep } from '../util/sleep.js';
import { isoFromMs, type Clock } from '../util/time.js';

/** The name of the lock every writing pipeline takes (one per mirror file). */
export const MIRROR_LOCK_NAME = 'mirror';

/** Lease used when the config has none (a hand-built Config in a test). */
export const DEFAULT_LOCK_LEASE_MS = 60_000;

/** Who holds the mirror lock, as an error and `--json` summary report it. */
export interface LockHolder {
  pipeline: string;
  pid: number;
  hostname: string;
  /** When the holder took the lock (ISO 8601 UTC). */
  since: string;
  /** When its lease ends unless renewed. */
  expiresAt: string;
}

/**
 * The mirror is locked by another process (or another pipeline of this process) and the wait
 * allowed by `lock.wait` / `--wait` ran out. Code `ERR_LOCKED`: exit status 1. The message names
 * the holder: pipeline, pid, host and since when.
 */
export class LockedError extends DomainSyncError {
  /** The holder seen last. */
  readonly holder: LockHolder;
  constructor(holder: LockHolder, waitedMs: number) {
    super(
      'ERR_LOCKED',
      `the mirror is locked by pipeline "${holder.pipeline}" (pid ${holder.pid} on ${holder.hostname}) since ${holder.since}` +
        (waitedMs >= 1000 ? `; waited ${Math.round(waitedMs / 1000)}s` : '') +
        `; try again later, or let it wait with lock.wait in the config (\`run\` and \`schedule\` also take --wait DURATION); a holder that stopped renewing loses the lock at ${holder.expiresAt}`,
    );
    this.holder = holder;
  }
}

/** What {@link acquireMirrorLock} needs; every `RunContext` has it. */
export interface MirrorLockContext {
  mirror: Mirror;
  logger: Logger;
  signal: AbortSignal;
  clock: Clock;
  config: { lock?: Readonly<{ leaseMs: number; waitMs: number }> };
}

/** A held (or re-entered) mirror lock. */
export interface MirrorLockHandle {
  /** Aborted when the caller's signal aborts or when the lease was lost to another process. */
  readonly signal: AbortSignal;
  /** True when this call re-entered a lock already held by the calling pipeline. */
  readonly reentered: boolean;
  /** Runs `fn` so that pipelines it starts re-enter this lock instead of waiting for it. */
  run<T>(fn: () => Promise<T>): Promise<T>;
  /** Releases the lock (a re-entered handle only detaches its signal). Idempotent; never throws. */
  release(): void;
}

/** The lock held by the current async call chain, so nested pipelines re-enter it. */
interface HeldLock {
  mirror: Mirror;
  token: string;
  lost: AbortController;
  released: boolean;
}

const current = new AsyncLocalStorage<HeldLock>();
/** Every lock this process holds, for {@link releaseHeldMirrorLocks} on a forced exit. */
const held = new Set<HeldLock>();

/**
 * Takes the cross-process lock of `ctx.mirror` for `pipeline`: a lease row in the `locks` table
 * renewed by an unref'd heartbeat every quarter of `config.lock.leaseMs`.
 *
 * - Re-entrant along one async call chain: a pipeline started inside {@link MirrorLockHandle.run}
 *   (`run nightly` → `sync` → `snapshot`) re-enters the lock. Two pipelines started side by side
 *   in one process (two `schedule` tasks) exclude each other like two processes do.
 * - A lock whose lease expired (holder killed, host frozen) is taken over, with a warning naming
 *   the previous holder; its runs still marked `running` on this host are closed `interrupted`.
 *   So is, at once, a lock whose holder was on this host and whose process is gone (killed,
 *   crashed): a rerun of a crashed job starts without waiting for the lease. A holder whose pid
 *   exists, or on another host, keeps its lease.
 * - A live holder: waits up to `config.lock.waitMs`, polling, then throws {@link LockedError}.
 *   Throws `AbortedError` when `ctx.signal` aborts while waiting.
 * - If the heartbeat finds the lease taken over (this process stalled longer than the lease),
 *   the handle's signal aborts so the pipeline stops writing at its next safe point.
 */
export async function acquireMirrorLock(ctx: MirrorLockContext, pipeline: string): Promise<MirrorLockHandle> {
  const outer = current.getStore();
  if (outer !== undefined && outer.mirror === ctx.mirror && !outer.released) {
    return handle(outer, ctx.signal, true, () => {});
  }
  const leaseMs = ctx.config.lock?.leaseMs ?? DEFAULT_LOCK_LEASE_MS;
  const waitMs = ctx.config.lock?.waitMs ?? 0;
  const token = randomUUID();
  const host = hostname();
  const started = ctx.clock();
  const pollMs = Math.min(2_000, Math.max(100, Math.floor(leaseMs / 4)));
  let announced = false;
  for (;;) {
    const now = ctx.clock();
    const result = tryAcquireLock(ctx.mirror, {
      name: MIRROR_LOCK_NAME,
      token,
      pipeline,
      pid: process.pid,
      hostname: host,
      now: isoFromMs(now),
      expiresAt: isoFromMs(now + leaseMs),
      holderIsGone: (holder) =>
        holder.hostname === host && holder.pid !== process.pid && !processExists(holder.pid),
    });
    if (result.acquired) {
      if (result.tookOver) closeRunsOfStaleHolder(ctx, result.tookOver, host, result.tookOverBecause);
      const lock: HeldLock = { mirror: ctx.mirror, token, lost: new AbortController(), released: false };
      held.add(lock);
      const timer = startHeartbeat(ctx, lock, leaseMs);
      ctx.logger.debug('mirror lock acquired', { pipeline, leaseMs });
      return handle(lock, ctx.signal, false, () => {
        clearInterval(timer);
        held.delete(lock);
        try {
          if (!releaseLock(ctx.mirror, { name: MIRROR_LOCK_NAME, token })) {
            ctx.logger.warn('mirror lock was no longer ours when released', { pipeline });
          }
        } catch (error) {
          // A closed or broken mirror: the lease simply expires.
          ctx.logger.warn('could not release the mirror lock; it expires with its lease', { error });
        }
      });
    }
    const waited = ctx.clock() - started;
    if (waited >= waitMs) throw new LockedError(holderOf(result.holder), waited);
    if (!announced) {
      announced = true;
      ctx.logger.info('waiting for the mirror lock', { holder: holderOf(result.holder), waitMs });
    }
    await sleep(Math.min(pollMs, waitMs - waited), ctx.signal);
  }
}

/**
 * Releases every mirror lock this process holds, synchronously. For the CLI's forced shutdown
 * path only (a pipeline that did not stop within the grace period): the process exits right
 * after, so nothing writes under the released lease.
 */
export function releaseHeldMirrorLocks(): number {
  let count = 0;
  for (const lock of [...held]) {
    held.delete(lock);
    lock.released = true;
    try {
      if (releaseLock(lock.mirror, { name: MIRROR_LOCK_NAME, token: lock.token })) count += 1;
    } catch {
      // Mirror already closed: the lease expires by itself.
    }
  }
  return count;
}

function handle(
  lock: HeldLock,
  parentSignal: AbortSignal,
  reentered: boolean,
  onRelease: () => void,
): MirrorLockHandle {
  // One controller per handle: aborted by the caller's signal or by the loss of the lease.
  // Listeners are removed on release, so a long-lived `schedule` signal does not collect them.
  const controller = new AbortController();
  // Every request and queued task of the pipeline listens to this signal (as to ctx.signal).
  setMaxListeners(0, controller.signal);
  const forward = (source: AbortSignal) => () => controller.abort(source.reason);
  const onParent = forward(parentSignal);
  const onLost = forward(lock.lost.signal);
  if (parentSignal.aborted) controller.abort(parentSignal.reason);
  else parentSignal.addEventListener('abort', onParent, { once: true });
  if (lock.lost.signal.aborted) controller.abort(lock.lost.signal.reason);
  else lock.lost.signal.addEventListener('abort', onLost, { once: true });
  let released = false;
  return {
    signal: controller.signal,
    reentered,
    run: (fn) => current.run(lock, fn),
    release() {
      if (released) return;
      released = true;
      parentSignal.removeEventListener('abort', onParent);
      lock.lost.signal.removeEventListener('abort', onLost);
      if (!reentered) {
        lock.released = true;
        onRelease();
      }
    },
  };
}

/** How soon a heartbeat that found the mirror's write lock held tries again, ms. */
const HEARTBEAT_BUSY_RETRY_MS = 100;

/**
 * Renews the lease every quarter of it. A renewal never waits for another connection's write
 * lock: this is the pipeline's own thread, and a sync's writer thread holds that lock for up to
 * its commit interval, during which a waiting renewal would hold up every request in flight. A
 * busy renewal is tried again every {@link HEARTBEAT_BUSY_RETRY_MS} ms until it gets through; the
 * lease (four beats long) covers the wait, and a wait longer than a beat is logged.
 */
function startHeartbeat(ctx: MirrorLockContext, lock: HeldLock, leaseMs: number): NodeJS.Timeout {
  const beatMs = Math.max(250, Math.floor(leaseMs / 4));
  let retry: NodeJS.Timeout | undefined;
  let busySince: number | undefined;
  let warned = false;
  const beat = (): void => {
    retry = undefined;
    if (lock.released) return;
    const now = ctx.clock();
    try {
      const renewed = renewLockWithoutWaiting(ctx.mirror, {
        name: MIRROR_LOCK_NAME,
        token: lock.token,
        now: isoFromMs(now),
        expiresAt: isoFromMs(now + leaseMs),
      });
      if (renewed === 'busy') {
        busySince ??= now;
        if (!warned && now - busySince >= beatMs) {
          warned = true;
          ctx.logger.warn('mirror lock heartbeat: the mirror stays busy; still trying', {
            waitedMs: now - busySince,
          });
        }
        retry = setTimeout(beat, HEARTBEAT_BUSY_RETRY_MS);
        retry.unref();
        return;
      }
      busySince = undefined;
      warned = false;
      if (!renewed) {
        clearInterval(timer);
        ctx.logger.error('mirror lock lost: another process took it over; stopping', {});
        lock.lost.abort(
          new DomainSyncError('ERR_LOCK_LOST', 'the mirror lock was taken over by another process'),
        );
      }
    } catch (error) {
      // Anything else: the next beat tries again, and the lease (four beats long) covers a missed one.
      if ((error as { code?: unknown }).code === 'ERR_MIRROR_CLOSED') clearInterval(timer);
      else ctx.logger.warn('mirror lock heartbeat failed; retrying', { error });
    }
  };
  const timer = setInterval(() => {
    if (lock.released) return clearInterval(timer);
    if (retry === undefined) beat();
  }, beatMs);
  // The heartbeat must never be what keeps a finished process alive.
  timer.unref();
  return timer;
}

/**
 * A stale holder on this host left its runs `running`; close them so `status` tells the truth.
 * On another host the pid means nothing here, so those rows are left for an operator.
 */
function closeRunsOfStaleHolder(
  ctx: MirrorLockContext,
  stale: LockRecord,
  host: string,
  because: 'expired' | 'holder_gone' | null,
): void {
  const gone = because === 'holder_gone';
  ctx.logger.warn(
    gone
      ? `took over the mirror lock of process ${stale.pid}, which is gone from this host`
      : 'took over a stale mirror lock',
    { previous: holderOf(stale) },
  );
  if (stale.hostname !== host) return;
  const finishedAt = isoFromMs(ctx.clock());
  for (const run of listRunningPipelineRuns(ctx.mirror)) {
    if (run.pid !== stale.pid || run.pid === process.pid) continue;
    finishPipelineRun(ctx.mirror, run.id, {
      status: 'interrupted',
      finishedAt,
      error: gone
        ? `ERR_HOLDER_GONE: process ${stale.pid} ended without releasing the mirror lock (last renewed at ${stale.heartbeat_at})`
        : `ERR_LOCK_EXPIRED: process ${stale.pid} stopped renewing the mirror lock (last at ${stale.heartbeat_at})`,
    });
  }
}

/**
 * Whether process `pid` exists on this host. `kill(pid, 0)` sends nothing: ESRCH means no such
 * process, EPERM means it exists but is not ours. A zombie (ended, not yet reaped by its parent)
 * counts as gone: on Linux its `/proc/<pid>/stat` state is `Z`.
 */
export function processExists(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as { code?: unknown }).code === 'EPERM';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The state follows the command name, which is in parentheses and may contain spaces.
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    // No /proc (macOS, say), or the process ended in between: kill() said it existed.
    return true;
  }
}

function holderOf(record: LockRecord): LockHolder {
  return {
    pipeline: record.pipeline,
    pid: record.pid,
    hostname: record.hostname,
    since: record.acquired_at,
    expiresAt: record.expires_at,
  };
}
