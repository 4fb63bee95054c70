import { parentPort, workerData } from 'node:worker_threads';
import { lowerThreadPriority } from '../util/thread-priority.js';
import { mirrorInternals, openMirror } from './database.js';
import type { Mirror } from './database.js';
import {
  applyInOpenTransaction,
  applyWriterPragmas,
  errorFields,
  loadTextCheck,
} from './profile-writer-apply.js';
import { HeldListing } from './store/held-listing.js';
import type { ProfileTextCheck } from './inputs.js';
import type {
  WriterCommitFailed,
  WriterError,
  WriterReply,
  WriterRequest,
  WriterWorkerData,
  WriterWriteRequest,
} from './profile-writer-protocol.js';

/*
 * The worker thread of src/mirror/profile-writer.ts: its own connection to the mirror, and the
 * same store functions as the main thread. Requests are handled strictly in arrival order; the
 * ones already waiting when the thread gets to them are applied together.
 *
 * Writes are applied inside one open transaction that is committed every `commitEveryProfiles`
 * profiles or `commitAfterMs` after it began, whichever comes first, and at once for a run-stats
 * write, a `commit` request (the caller's drain) or close. Each commit writes every page its
 * transaction touched to the WAL, and on a large mirror a batch touches most pages of the
 * indexes not keyed by domain (company, operator, timestamps, jurisdictions), so a commit per
 * 1,000-profile batch rewrote those indexes once per batch: committing every few batches made
 * the writer's CPU per profile measurably lower (docs/benchmarks.md "sync"). A write is answered
 * once applied, so the caller's waitForRoom counts only requests not yet applied; that it is
 * committed is what drain() says.
 */

const data = workerData as WriterWorkerData;
const port = parentPort!;

/*
 * This thread runs below the fetching thread's priority (WRITER_NICE_STEPS, Linux only). The
 * writer's work waits in a queue that has room for several batches (the caller's waitForRoom), so
 * it can run whenever a core is free; the fetching thread's cannot wait: every response it is
 * late to handle holds a request slot longer and slows the sync against the service. On a busy
 * machine the scheduler now gives the core to the fetching thread first (docs/benchmarks.md
 * "sync" has the effect). A writer that falls behind still stops fetching through waitForRoom,
 * and then has the cores to itself.
 */
const nice = lowerThreadPriority(data.niceSteps);
let mirror: Mirror | undefined;
/** The text check the writer was opened with, loaded before the thread says it is ready. */
let check: ProfileTextCheck | undefined;
const waiting: WriterRequest[] = [];
let scheduled = false;

/** The open transaction: when it began and the profiles written in it; undefined when none. */
let open: { beganAt: number; profiles: number } | undefined;
let commitTimer: NodeJS.Timeout | undefined;

/**
 * New domains' listing rows, held until their profile writes each row once or the transaction
 * commits (store/held-listing.ts): a first sync's writer thread no longer inserts each new domain
 * and rewrites it with its profile moments later.
 */
const heldListing = new HeldListing();

/** Begins the transaction writes join, unless one is open; the error when the lock could not be had. */
function begin(m: Mirror): WriterError | undefined {
  if (open !== undefined) return undefined;
  try {
    mirrorInternals(m).sqlite.exec('BEGIN IMMEDIATE');
  } catch (error) {
    return errorFields(error);
  }
  open = { beganAt: Date.now(), profiles: 0 };
  return undefined;
}

/**
 * Ends the open transaction: commits it, or rolls it back when `failure` (a write that stopped
 * part-way) says so. Returns the error, also posted to the caller as `commitFailed`, when what was
 * applied in it is lost: that failure, a commit that failed, or a transaction SQLite rolled back
 * by itself (an I/O or disk-full error).
 */
function finish(m: Mirror, failure?: WriterError): WriterError | undefined {
  if (commitTimer !== undefined) clearTimeout(commitTimer);
  commitTimer = undefined;
  if (open === undefined) return failure;
  open = undefined;
  const { sqlite } = mirrorInternals(m);
  let lost = failure;
  if (lost === undefined && !sqlite.inTransaction)
    lost = {
      code: 'ERR_MIRROR_WRITE',
      message:
        "the mirror rolled back the writer thread's transaction; its writes since the last commit are lost",
    };
  if (lost === undefined) {
    try {
      // The listing rows still held belong to this transaction: written before it commits.
      heldListing.flush(m);
      sqlite.exec('COMMIT');
    } catch (error) {
      lost = errorFields(error);
    }
  }
  if (lost !== undefined) {
    heldListing.clear();
    if (sqlite.inTransaction) sqlite.exec('ROLLBACK');
    port.postMessage({ commitFailed: lost } satisfies WriterCommitFailed);
  }
  return lost;
}

function drainWaiting(): void {
  scheduled = false;
  const m = mirror;
  if (m === undefined || waiting.length === 0) return;
  const group = waiting.splice(0, waiting.length);
  const writes = group.filter((request): request is WriterWriteRequest => request.kind !== 'commit');
  let replies: WriterReply[] = [];
  let failure: WriterError | undefined;
  if (writes.length > 0) {
    const notBegun = begin(m);
    if (notBegun !== undefined) {
      // No write lock within the busy timeout: nothing was applied, each write is answered so.
      replies = writes.map((request) => ({ id: request.id, ok: false, error: notBegun }));
    } else {
      try {
        replies = applyInOpenTransaction(m, writes, check, heldListing);
        for (const request of writes)
          if (request.kind === 'profileTexts') open!.profiles += request.texts.length;
      } catch (error) {
        // A write stopped part-way: nothing of this transaction may be committed.
        failure = errorFields(error);
      }
    }
  }
  // Run stats are committed before they are answered: they are what `status` shows of a running
  // sync. A transaction SQLite rolled back (an I/O or disk-full error) is reported at once.
  const due =
    failure !== undefined ||
    group.some((request) => request.kind === 'commit' || request.kind === 'runStats') ||
    (open !== undefined &&
      (open.profiles >= data.commitEveryProfiles ||
        Date.now() - open.beganAt >= data.commitAfterMs ||
        !mirrorInternals(m).sqlite.inTransaction));
  const lost = due ? finish(m, failure) : undefined;
  if (lost !== undefined) {
    // Lost with the rest: no write of this group is answered as done.
    const answered = new Map(replies.map((reply) => [reply.id, reply]));
    replies = writes.map((request) => {
      const reply = answered.get(request.id);
      return reply !== undefined && !reply.ok ? reply : { id: request.id, ok: false, error: lost };
    });
  }
  for (const request of group) {
    if (request.kind !== 'commit') continue;
    replies.push(
      lost ? { id: request.id, ok: false, error: lost } : { id: request.id, ok: true, kind: 'commit' },
    );
  }
  if (open !== undefined && commitTimer === undefined) {
    // Nothing more may come for a while: the transaction is committed when it is due anyway.
    commitTimer = setTimeout(
      () => {
        commitTimer = undefined;
        if (mirror !== undefined) finish(mirror);
      },
      Math.max(0, open.beganAt + data.commitAfterMs - Date.now()),
    );
  }
  for (const reply of replies) port.postMessage(reply);
}

port.on('message', (request: WriterRequest | { kind: 'close' }) => {
  if (request.kind === 'close') {
    drainWaiting();
    if (mirror !== undefined) finish(mirror);
    void mirror?.close().then(() => port.close());
    return;
  }
  waiting.push(request);
  if (!scheduled) {
    scheduled = true;
    // Let every message already posted arrive first, so they are applied together.
    setImmediate(drainWaiting);
  }
});

Promise.all([
  openMirror(data.path, { migrate: false, busyTimeoutMs: data.busyTimeoutMs }),
  loadTextCheck(data.textCheck),
]).then(
  ([opened, loaded]) => {
    check = loaded;
    mirror = opened;
    applyWriterPragmas(mirrorInternals(opened).sqlite, data.cacheSizeKib);
    port.postMessage({ ready: true, nice });
    if (waiting.length > 0 && !scheduled) {
      scheduled = true;
      setImmediate(drainWaiting);
    }
  },
  (error: unknown) => {
    port.postMessage({ fatal: { message: error instanceof Error ? error.message : String(error) } });
  },
);
