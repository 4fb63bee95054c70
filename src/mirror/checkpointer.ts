import { Worker } from 'node:worker_threads';
import { siblingModule } from '../util/worker-module.js';
import type { Mirror } from './database.js';
import { mirrorInternals } from './database.js';

/*
 * WAL checkpoints off the writing thread, for bulk writes (a full sync, an export load).
 *
 * With SQLite's default auto-checkpoint, every ~4 MB of WAL the committing statement itself copies
 * the WAL into the database file and fsyncs both: measured, those COMMITs took a large share of
 * the wall time of a bulk upsert (current load rates: docs/benchmarks.md "export"). During a bulk
 * write the writer's auto-checkpoint is switched off and a worker thread with its own connection
 * runs PASSIVE checkpoints, which never block the writer
 * (SQLite copies only frames no reader needs, and the WAL is reused once it has all been copied).
 * Afterwards the auto-checkpoint is restored; a crash in between only leaves a longer WAL, which
 * SQLite replays on the next open like any other.
 */

/** SQLite's default `wal_autocheckpoint` (pages), restored after a bulk write. */
const DEFAULT_AUTOCHECKPOINT_PAGES = 1000;

/** What the worker thread (checkpointer-worker.ts) is started with. */
export interface CheckpointerWorkerData {
  path: string;
  intervalMs: number;
}

/** Options of {@link withBackgroundCheckpoints}. */
export interface BackgroundCheckpointOptions {
  /** Time between two checkpoints of the worker. @default 250 */
  intervalMs?: number;
}

/**
 * Runs `fn` (a bulk write on `mirror`) with WAL checkpoints done by a worker thread instead of the
 * writing thread. Falls back to running `fn` unchanged for an in-memory or read-only mirror, or if
 * the worker cannot start. Always restores the auto-checkpoint, also when `fn` throws.
 */
export async function withBackgroundCheckpoints<T>(
  mirror: Mirror,
  fn: () => Promise<T>,
  options: BackgroundCheckpointOptions = {},
): Promise<T> {
  if (mirror.readonly || mirror.path === ':memory:') return fn();
  const { sqlite } = mirrorInternals(mirror);
  let worker: Worker;
  try {
    const workerData: CheckpointerWorkerData = {
      path: mirror.path,
      intervalMs: Math.max(10, Math.trunc(options.intervalMs ?? 250)),
    };
    // Beside this file with its extension: compiled in dist/, the .ts source under the tests.
    worker = new Worker(siblingModule(import.meta.url, 'checkpointer-worker'), { workerData });
  } catch (error) {
    mirror.logger.debug('background checkpoints unavailable', { error: String(error) });
    return fn();
  }
  // An error in the worker (e.g. it could not open the file) must not take the run down: the
  // writer's own auto-checkpoint comes back as soon as it is noticed.
  const exited = new Promise<void>((resolve) => {
    worker.once('error', (error) => {
      mirror.logger.debug('background checkpoints stopped', { error: String(error) });
      if (sqlite.open) sqlite.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT_PAGES}`);
    });
    worker.once('exit', () => resolve());
  });
  worker.unref();
  sqlite.pragma('wal_autocheckpoint = 0');
  try {
    return await fn();
  } finally {
    // ref() again: an unref'd worker is not enough to keep the process alive while it finishes.
    worker.ref();
    worker.postMessage('stop');
    await exited;
    if (sqlite.open) sqlite.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT_PAGES}`);
  }
}
