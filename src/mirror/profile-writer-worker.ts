import { parentPort, workerData } from 'node:worker_threads';
import { bulkAutocheckpointPages } from './checkpointer.js';
import { mirrorInternals, openMirror } from './database.js';
import type { Mirror } from './database.js';
import { applyRequests } from './profile-writer-apply.js';
import type { WriterRequest, WriterWorkerData } from './profile-writer-protocol.js';

/*
 * The worker thread of src/mirror/profile-writer.ts: its own connection to the mirror, and the
 * same store functions as the main thread. Requests are handled strictly in arrival order; the
 * ones already waiting when the thread gets to them go to applyRequests together.
 */

const data = workerData as WriterWorkerData;
const port = parentPort!;
let mirror: Mirror | undefined;
const waiting: WriterRequest[] = [];
let scheduled = false;

function drainWaiting(): void {
  scheduled = false;
  const m = mirror;
  if (m === undefined || waiting.length === 0) return;
  for (const reply of applyRequests(m, waiting.splice(0, waiting.length))) port.postMessage(reply);
}
port.on('message', (request: WriterRequest | { kind: 'close' }) => {
  if (request.kind === 'close') {
    drainWaiting();
    void mirror?.close().then(() => port.close());
    return;
  }
  waiting.push(request);
  if (!scheduled) {
    scheduled = true;
    // Let every message already posted arrive first, so they share one transaction.
    setImmediate(drainWaiting);
  }
});

openMirror(data.path, { migrate: false, busyTimeoutMs: data.busyTimeoutMs }).then(
  (opened) => {
    mirror = opened;
    const { sqlite } = mirrorInternals(opened);
    // SQLite's auto-checkpoint stays on: it runs here, off the fetching thread, and keeps the WAL
    // short (a checkpointer thread racing this continuous writer let it grow past the database).
    // Every ~40 MB rather than SQLite's ~4 MB: each checkpoint waits for two fsyncs, during which
    // fetching runs ahead only as far as maxPending lets it, so fewer checkpoints made a sync
    // measurably faster (current rates: docs/benchmarks.md "sync").
    sqlite.pragma(`wal_autocheckpoint = ${bulkAutocheckpointPages(sqlite)}`);
    sqlite.pragma(`cache_size = -${Math.trunc(data.cacheSizeKib)}`);
    port.postMessage({ ready: true });
    if (waiting.length > 0 && !scheduled) {
      scheduled = true;
      setImmediate(drainWaiting);
    }
  },
  (error: unknown) => {
    port.postMessage({ fatal: { message: error instanceof Error ? error.message : String(error) } });
  },
);
