import { cachedStatement, isBusyError, mirrorInternals } from '../database.js';
import type { Mirror } from '../database.js';
import { keyColumn, requiredTimestamp } from './values.js';

/** A row of the `locks` table: who holds a lease on the mirror, and until when. */
export interface LockRecord {
  /** Lock name; `mirror` is the one every writing pipeline takes. */
  name: string;
  /** Random per acquisition: tells the holder apart from a later holder in the same process. */
  token: string;
  /** Pipeline that took the lock (`nightly`, `sync`, …). */
  pipeline: string;
  pid: number;
  hostname: string;
  /** When the holder took the lock (ISO 8601 UTC). */
  acquired_at: string;
  /** Last renewal by the holder. */
  heartbeat_at: string;
  /** The lease ends here unless renewed; after it anyone may take the lock over. */
  expires_at: string;
}

/** A {@link LockRecord} as {@link listLocks} reports it, with its staleness at the time asked. */
export interface LockStatus extends LockRecord {
  /** `expires_at` has passed: the holder stopped renewing (crashed, killed, or frozen). */
  stale: boolean;
}

/** Options of {@link tryAcquireLock}. */
export interface TryAcquireLockOptions {
  name: string;
  token: string;
  pipeline: string;
  pid: number;
  hostname: string;
  /** The caller's current time (ISO 8601). */
  now: string;
  /** When the new lease ends (ISO 8601). */
  expiresAt: string;
  /**
   * Whether a live-looking holder is in fact gone (its process died on this host), so its lock is
   * taken over before the lease ends. Asked inside the transaction. @default never
   */
  holderIsGone?: (holder: LockRecord) => boolean;
}

/** Outcome of {@link tryAcquireLock}. */
export type TryAcquireLockResult =
  | {
      acquired: true;
      lock: LockRecord;
      /** The stale lease that was replaced, if any. */
      tookOver: LockRecord | null;
      /** Why it was replaced: its lease expired, or its holder's process is gone. */
      tookOverBecause: 'expired' | 'holder_gone' | null;
    }
  | { acquired: false; holder: LockRecord };

/**
 * Takes the lock `name` when it is free, already ours (same token), stale (its `expires_at`
 * is not after `now`), or held by a holder `holderIsGone` says is gone. Atomic across processes: the check and the write happen in one
 * `BEGIN IMMEDIATE` transaction, so of two processes racing for a free lock exactly one wins
 * (the other waits for the write lock up to the busy timeout, then sees the winner's row).
 * Never waits for the lease itself; the caller decides whether to retry.
 */
export function tryAcquireLock(mirror: Mirror, options: TryAcquireLockOptions): TryAcquireLockResult {
  const name = keyColumn(options.name, 'name');
  const now = requiredTimestamp(options.now, 'now');
  const expiresAt = requiredTimestamp(options.expiresAt, 'expiresAt');
  const { sqlite } = mirrorInternals(mirror);
  const acquire = sqlite.transaction((): TryAcquireLockResult => {
    const current = cachedStatement(mirror, 'SELECT * FROM locks WHERE name = ?').get(name) as
      LockRecord | undefined;
    // Text comparison orders the normalised timestamps (docs/contract.md "Behaviour details").
    const otherHolder = current !== undefined && current.token !== options.token;
    const live = otherHolder && current.expires_at > now;
    const gone = live && options.holderIsGone?.(current) === true;
    if (live && !gone) return { acquired: false, holder: current };
    const lock: LockRecord =
      current !== undefined && current.token === options.token
        ? { ...current, heartbeat_at: now, expires_at: expiresAt }
        : {
            name,
            token: options.token,
            pipeline: options.pipeline,
            pid: options.pid,
            hostname: options.hostname,
            acquired_at: now,
            heartbeat_at: now,
            expires_at: expiresAt,
          };
    cachedStatement(
      mirror,
      `INSERT INTO locks (name, token, pipeline, pid, hostname, acquired_at, heartbeat_at, expires_at)
       VALUES (@name, @token, @pipeline, @pid, @hostname, @acquired_at, @heartbeat_at, @expires_at)
       ON CONFLICT (name) DO UPDATE SET token = excluded.token, pipeline = excluded.pipeline,
         pid = excluded.pid, hostname = excluded.hostname, acquired_at = excluded.acquired_at,
         heartbeat_at = excluded.heartbeat_at, expires_at = excluded.expires_at`,
    ).run(lock);
    const tookOver = otherHolder ? current : null;
    return {
      acquired: true,
      lock,
      tookOver,
      tookOverBecause: tookOver === null ? null : gone ? 'holder_gone' : 'expired',
    };
  });
  // IMMEDIATE: a deferred transaction that reads and then writes fails with SQLITE_BUSY at once
  // (no busy wait) when another process wrote in between; IMMEDIATE takes the write lock first.
  return acquire.immediate();
}

/**
 * Extends the lease of a lock we hold. Returns false when the lock is no longer ours (it was
 * taken over after our lease expired, or released): the caller must stop writing.
 */
export function renewLock(
  mirror: Mirror,
  options: { name: string; token: string; now: string; expiresAt: string },
): boolean {
  const now = requiredTimestamp(options.now, 'now');
  const expiresAt = requiredTimestamp(options.expiresAt, 'expiresAt');
  const { changes } = cachedStatement(
    mirror,
    'UPDATE locks SET heartbeat_at = ?, expires_at = ? WHERE name = ? AND token = ?',
  ).run(now, expiresAt, options.name, options.token);
  return changes > 0;
}

/**
 * {@link renewLock} without waiting for another connection's write lock: `'busy'` at once while
 * another connection holds it (the sync's writer thread keeps a transaction open for seconds), so
 * the caller's thread is never blocked for the busy timeout and can try again shortly.
 */
export function renewLockWithoutWaiting(
  mirror: Mirror,
  options: { name: string; token: string; now: string; expiresAt: string },
): boolean | 'busy' {
  const { sqlite } = mirrorInternals(mirror);
  const busyTimeout = sqlite.pragma('busy_timeout', { simple: true }) as number;
  sqlite.pragma('busy_timeout = 0');
  try {
    return renewLock(mirror, options);
  } catch (error) {
    if (isBusyError(error)) return 'busy';
    throw error;
  } finally {
    sqlite.pragma(`busy_timeout = ${busyTimeout}`);
  }
}

/** Releases a lock we hold. Returns false when it was not ours any more (nothing is changed). */
export function releaseLock(mirror: Mirror, options: { name: string; token: string }): boolean {
  const { changes } = cachedStatement(mirror, 'DELETE FROM locks WHERE name = ? AND token = ?').run(
    options.name,
    options.token,
  );
  return changes > 0;
}

/**
 * Every lock row, with `stale` computed against `now` (ISO 8601; default the current time).
 * Read-only: `status` shows these as "running locks". A stale row is left in place; the next
 * writer takes it over. A mirror without the `locks` table (older schema opened read-only) has none.
 */
export function listLocks(mirror: Mirror, now: string = new Date().toISOString()): LockStatus[] {
  const at = requiredTimestamp(now, 'now');
  // A read-only open of a mirror not yet migrated to 0002 has no table: no locks, not an error.
  const hasTable = cachedStatement(
    mirror,
    `SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'locks'`,
  ).get();
  if (hasTable === undefined) return [];
  const rows = cachedStatement(mirror, 'SELECT * FROM locks ORDER BY name').all() as LockRecord[];
  return rows.map((row) => ({ ...row, stale: row.expires_at <= at }));
}
