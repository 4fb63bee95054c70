import { Worker } from 'node:worker_threads';
import { DomainSyncError } from '../util/domain-sync-error.js';
import { siblingModule } from '../util/worker-module.js';
import { holdYoungGenerationCap } from '../util/heap-growth.js';
import type { Mirror } from './database.js';
import type { DomainSummaryInput, ProfileTextCheck, ProfileTextsInput } from './inputs.js';
import type {
  WriterCommand,
  WriterCommitFailed,
  WriterFailure,
  WriterReply,
  WriterWorkerData,
  WriterWrite,
} from './profile-writer-protocol.js';
import { applyRequests, loadTextCheck } from './profile-writer-apply.js';
import type { UpsertSummariesResult } from './store/domains.js';

export type { WriterFailure } from './profile-writer-protocol.js';

/*
 * The sync's mirror writes on a second thread. Writing a profile (its domain row, licences,
 * payment methods, sections, their indexes and change_log rows) costs more CPU than fetching it,
 * so on the main thread the mirror was the bottleneck of a full sync (docs/benchmarks.md). Here
 * the main thread fetches, and hands profiles on as the texts they arrived in
 * (writeProfileTexts), which the worker parses and checks (textCheck); a worker thread with its own connection to the
 * same file runs the very same store functions (upsertDomainSummaries, upsertProfiles), in the
 * order the writes were asked for, in one open transaction that it commits every few thousand
 * profiles (profile-writer-worker.ts says why and when).
 *
 * Callers must {@link ProfileWriter.drain} before anything that reads what was written (the
 * watermark is advanced only after a drain) and respect {@link ProfileWriter.waitForRoom}, which
 * keeps memory flat when fetching outruns writing.
 */

/** The writer connection's page cache by default, KiB (see {@link ProfileWriterOptions.cacheSizeKib}). */
export const WRITER_CACHE_SIZE_KIB = 16_384;

/** Profiles the writer thread commits at most, by default (see {@link ProfileWriterOptions.commitEveryProfiles}). */
export const WRITER_COMMIT_EVERY_PROFILES = 4_000;

/** ms after which the writer thread commits at the latest, by default (see {@link ProfileWriterOptions.commitAfterMs}). */
export const WRITER_COMMIT_AFTER_MS = 2_000;

/**
 * Nice values the writer thread steps below the thread that opened it, by default (Linux only; see
 * {@link ProfileWriterOptions.niceSteps} and src/mirror/profile-writer-worker.ts).
 */
export const WRITER_NICE_STEPS = 10;

/**
 * A {@link ProfileWriterOptions.textCheck}: the function exported as `name` by the module at
 * `module`. The thread loads it by URL; `_Check`, the function's type, is held to
 * {@link ProfileTextCheck} here, where the caller names it.
 */
export function textCheckExport<_Check extends ProfileTextCheck>(
  module: string | URL,
  name: string,
): NonNullable<ProfileWriterOptions['textCheck']> {
  return { module, name };
}

/** Result of a profile batch: profiles written, and the ones the mirror refused, by domain. */
export interface ProfileBatchResult {
  profilesWritten: number;
  failures: WriterFailure[];
}

/** Options of {@link openProfileWriter}. */
export interface ProfileWriterOptions {
  /**
   * Requests in flight before {@link ProfileWriter.waitForRoom} waits: room for fetching to go
   * on while the writer waits for a checkpoint's fsync. @default 8
   */
  maxPending?: number;
  /**
   * Page cache of the writer connection, KiB. SQLite's default (2 MiB) spills a batch's dirty pages
   * before the commit; 16 MiB measured as fast as 64 MiB for less memory (current sync figures:
   * docs/benchmarks.md "sync"). @default 16384 (16 MiB)
   */
  cacheSizeKib?: number;
  /** How long a write waits for another writer's lock. @default 15000 */
  busyTimeoutMs?: number;
  /**
   * The thread commits its open transaction once it holds this many profiles (or at
   * {@link commitAfterMs}, a run-stats write, drain or close): each commit rewrites every index
   * page the transaction touched, so fewer commits cost less CPU per profile; a crash loses at
   * most what was not committed, which the next sync fetches again. @default 4000
   */
  commitEveryProfiles?: number;
  /** …or this many ms after the transaction began, whichever comes first. @default 2000 */
  commitAfterMs?: number;
  /**
   * Nice values the writer thread lowers its scheduling priority by, below the thread that opens
   * it (Linux only, where a thread has its own; 0 keeps it equal). @default 10
   */
  niceSteps?: number;
  /**
   * A check every profile text goes through before it is written ({@link ProfileTextCheck}): the
   * function exported as `name` by the module at `module` (a file URL), which the writer's thread
   * loads (so it must be a module that thread can import on its own). It parses the text and gives
   * the profile, or why it was refused, which {@link ProfileWriter.writeProfileTexts} reports by
   * the text's key, with whether fetching it again may cure that. The sync hands profiles on as
   * the response bodies it received, unparsed, with the API client's check
   * (src/api/profile-text-check.ts), so each is parsed once. @default none: each text is parsed
   * here and its `member` taken
   */
  textCheck?: { module: string | URL; name: string } | undefined;
  /**
   * Write on the calling thread, through the mirror's own connection, instead of a worker thread:
   * the same store functions and results, without the thread (an in-memory mirror always gets
   * this). @default false
   */
  inline?: boolean;
}

/** Mirror writes done by a worker thread; see the file comment. */
export interface ProfileWriter {
  /**
   * Upserts a listing page (upsertDomainSummaries in the worker). Resolves once applied in the
   * thread's open transaction; {@link drain} commits it.
   */
  writeSummaries(summaries: readonly DomainSummaryInput[], listedAt: string): Promise<UpsertSummariesResult>;
  /**
   * Upserts profiles given as the JSON texts they arrived in, which the writer parses, through
   * its text check if it has one (upsertProfiles in the worker). A refused profile is reported by
   * its domain, not thrown; a text that could not be read, by its key (`texts[3]` without keys),
   * with the text check's code and message (`retryable` when fetching it again may cure it).
   * Resolves once applied, as {@link writeSummaries}.
   */
  writeProfileTexts(batch: ProfileTextsInput, syncedAt: string): Promise<ProfileBatchResult>;
  /**
   * Saves a run's progress stats (updatePipelineRunStats in the worker), in order with the writes
   * before it. The caller's thread never waits for the mirror's write lock this way: written on
   * the fetching thread, the update waited for the writer's transaction to commit (up to 180 ms
   * measured on a 100,000-domain sync), and every request in flight waited with it. Resolves
   * once committed, with every write asked for before it.
   */
  writeRunStats(runId: number, stats: Record<string, unknown>): Promise<void>;
  /** Requests sent and not yet applied. */
  readonly pending: number;
  /**
   * The writer thread's nice value (Linux: {@link WRITER_NICE_STEPS} above the opening thread's);
   * undefined with no thread of its own or where a thread's priority cannot be set alone.
   */
  readonly threadNice: number | undefined;
  /** Resolves when fewer than `maxPending` requests are in flight. */
  waitForRoom(): Promise<void>;
  /**
   * Commits every write applied so far and resolves when every request sent so far is answered;
   * rejects when writes answered as applied were lost instead (the mirror failed to commit them).
   * Handlers the caller chained on the write promises may still be queued: await those to see
   * their effect.
   */
  drain(): Promise<void>;
  /** Drains, then stops the thread and closes its connection. Idempotent. */
  close(): Promise<void>;
}

interface Waiter {
  resolve(reply: WriterReply): void;
  reject(error: Error): void;
}

/**
 * The worker's module, beside this file with this file's extension: the compiled `.js` in dist/,
 * the `.ts` source when the tests run the sources (see src/util/worker-module.ts).
 */
function workerScript(): URL {
  return siblingModule(import.meta.url, 'profile-writer-worker');
}

/**
 * Writes on the calling thread, through the mirror's own connection: for an in-memory mirror,
 * which a second connection cannot see. Same interface, same store functions.
 */
function inlineWriter(mirror: Mirror, check: ProfileTextCheck | undefined): ProfileWriter {
  let nextId = 1;
  const run = (request: WriterWrite): WriterReply =>
    applyRequests(mirror, [{ ...request, id: nextId++ }], check)[0]!;
  return {
    writeSummaries: async (summaries, listedAt) =>
      summariesResult(run({ kind: 'summaries', summaries, listedAt })),
    writeProfileTexts: async ({ texts, member, keys }, syncedAt) =>
      profilesResult(run({ kind: 'profileTexts', texts, member, keys, syncedAt })),
    writeRunStats: async (runId, stats) => runStatsResult(run({ kind: 'runStats', runId, stats })),
    pending: 0,
    threadNice: undefined,
    waitForRoom: () => Promise.resolve(),
    drain: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
}

function summariesResult(reply: WriterReply): UpsertSummariesResult {
  if (reply.ok && reply.kind === 'summaries') return reply.result;
  throw replyError(reply);
}

function profilesResult(reply: WriterReply): ProfileBatchResult {
  if (reply.ok && reply.kind === 'profiles')
    return { profilesWritten: reply.profilesWritten, failures: reply.failures };
  throw replyError(reply);
}

function runStatsResult(reply: WriterReply): void {
  if (!reply.ok || reply.kind !== 'runStats') throw replyError(reply);
}

function replyError(reply: WriterReply): DomainSyncError {
  const error = reply.ok
    ? { code: 'ERR_MIRROR_WRITER', message: `unexpected ${reply.kind} reply` }
    : reply.error;
  return new DomainSyncError(error.code, error.message);
}

/**
 * Starts the writer thread on `mirror`'s file and waits until its connection is open. Throws
 * `ERR_MIRROR_WRITER` if it cannot start. With `inline`, and always for an in-memory mirror (a
 * second connection could not see it), the writer runs on the calling thread instead.
 */
export async function openProfileWriter(
  mirror: Mirror,
  options: ProfileWriterOptions = {},
): Promise<ProfileWriter> {
  if (mirror.readonly) {
    throw new DomainSyncError('ERR_MIRROR_WRITER', `the mirror ${mirror.path} is open read-only`);
  }
  const textCheck =
    options.textCheck === undefined
      ? undefined
      : { module: String(options.textCheck.module), name: options.textCheck.name };
  if (options.inline || mirror.path === ':memory:') {
    try {
      return inlineWriter(mirror, await loadTextCheck(textCheck));
    } catch (error) {
      throw new DomainSyncError(
        'ERR_MIRROR_WRITER',
        `the mirror writer could not load its profile text check: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
  }
  const maxPending = Math.max(1, Math.trunc(options.maxPending ?? 8));
  const workerData: WriterWorkerData = {
    path: mirror.path,
    busyTimeoutMs: Math.max(0, Math.trunc(options.busyTimeoutMs ?? 15_000)),
    cacheSizeKib: Math.max(2000, Math.trunc(options.cacheSizeKib ?? WRITER_CACHE_SIZE_KIB)),
    commitEveryProfiles: Math.max(1, Math.trunc(options.commitEveryProfiles ?? WRITER_COMMIT_EVERY_PROFILES)),
    commitAfterMs: Math.max(0, Math.trunc(options.commitAfterMs ?? WRITER_COMMIT_AFTER_MS)),
    niceSteps: Math.max(0, Math.trunc(options.niceSteps ?? WRITER_NICE_STEPS)),
    textCheck,
  };
  // A small young generation: the writer's garbage (each batch's profiles) dies young, and V8's
  // default let the thread's heap grow by tens of MB, which raised a full sync's peak RSS at the
  // same rate (the sync benchmark reports the current peak RSS: docs/benchmarks.md "sync").
  const worker = new Worker(workerScript(), { workerData, resourceLimits: { maxYoungGenerationSizeMb: 12 } });
  // Starting a thread can undo the process's young-generation cap (src/util/heap-growth.ts).
  worker.once('online', holdYoungGenerationCap);
  const waiters = new Map<number, Waiter>();
  const roomWaiters: Array<() => void> = [];
  const drainWaiters: Array<() => void> = [];
  let nextId = 1;
  let dead: Error | undefined;
  let closing: Promise<void> | undefined;
  /** Set when the thread could not commit writes it had answered as applied. */
  let commitError: DomainSyncError | undefined;
  let threadNice: number | undefined;

  const settleWaiting = (): void => {
    if (waiters.size < maxPending) for (const wake of roomWaiters.splice(0)) wake();
    if (waiters.size === 0) for (const wake of drainWaiters.splice(0)) wake();
  };
  const die = (error: Error): void => {
    if (dead !== undefined) return;
    dead = error;
    for (const waiter of waiters.values()) waiter.reject(error);
    waiters.clear();
    settleWaiting();
  };

  await new Promise<void>((resolve, reject) => {
    const onMessage = (message: { ready?: boolean; nice?: number; fatal?: { message: string } }): void => {
      worker.off('error', onError);
      if (message.ready) {
        threadNice = message.nice;
        resolve();
      } else {
        void worker.terminate();
        reject(
          new DomainSyncError(
            'ERR_MIRROR_WRITER',
            `the mirror writer thread could not open ${mirror.path}: ${message.fatal?.message ?? 'unknown error'}`,
          ),
        );
      }
    };
    const onError = (error: Error): void => {
      worker.off('message', onMessage);
      reject(
        new DomainSyncError(
          'ERR_MIRROR_WRITER',
          `the mirror writer thread failed to start: ${error.message}`,
          { cause: error },
        ),
      );
    };
    worker.once('message', onMessage);
    worker.once('error', onError);
  });

  worker.on('message', (reply: WriterReply | WriterCommitFailed) => {
    if ('commitFailed' in reply) {
      const lost = reply.commitFailed;
      mirror.logger.error('mirror writer could not commit', { code: lost.code });
      commitError ??= new DomainSyncError(lost.code, `the mirror writer could not commit: ${lost.message}`);
      die(commitError);
      return;
    }
    const waiter = waiters.get(reply.id);
    if (waiter === undefined) return;
    waiters.delete(reply.id);
    waiter.resolve(reply);
    settleWaiting();
  });
  worker.on('error', (error) => {
    mirror.logger.error('mirror writer thread failed', { error: error.message });
    die(
      new DomainSyncError('ERR_MIRROR_WRITER', `the mirror writer thread failed: ${error.message}`, {
        cause: error,
      }),
    );
  });
  worker.on('exit', (code) => {
    die(new DomainSyncError('ERR_MIRROR_WRITER', `the mirror writer thread exited (code ${code})`));
  });

  const send = (request: WriterCommand): Promise<WriterReply> => {
    if (closing !== undefined)
      return Promise.reject(new DomainSyncError('ERR_MIRROR_WRITER', 'the mirror writer is closed'));
    if (dead !== undefined) return Promise.reject(dead);
    const id = nextId++;
    return new Promise<WriterReply>((resolve, reject) => {
      waiters.set(id, { resolve, reject });
      worker.postMessage({ ...request, id });
    });
  };
  const settled = (): Promise<void> =>
    waiters.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => drainWaiters.push(resolve));
  const drain = async (): Promise<void> => {
    if (dead !== undefined) throw dead;
    // Both awaited at once: the commit's promise rejects if the thread dies meanwhile, and must
    // not be left without a handler while the other is awaited.
    const [, reply] = await Promise.all([settled(), send({ kind: 'commit' })]);
    if (!reply.ok) throw replyError(reply);
  };

  return {
    writeSummaries: async (summaries, listedAt) =>
      summariesResult(await send({ kind: 'summaries', summaries, listedAt })),
    writeProfileTexts: async ({ texts, member, keys }, syncedAt) =>
      profilesResult(await send({ kind: 'profileTexts', texts, member, keys, syncedAt })),
    writeRunStats: async (runId, stats) => runStatsResult(await send({ kind: 'runStats', runId, stats })),
    get pending() {
      return waiters.size;
    },
    get threadNice() {
      return threadNice;
    },
    waitForRoom() {
      return waiters.size < maxPending
        ? Promise.resolve()
        : new Promise<void>((resolve) => roomWaiters.push(resolve));
    },
    drain,
    close() {
      closing ??= (async () => {
        // The thread commits what it applied before it closes; a commit that failed is thrown.
        await settled();
        if (dead === undefined) {
          const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
          worker.postMessage({ kind: 'close' });
          await exited;
        }
        if (commitError !== undefined) throw commitError;
      })();
      return closing;
    },
  };
}
