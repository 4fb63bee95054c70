/* Messages between src/mirror/profile-writer.ts and its worker thread. */
import type { UpsertSummariesResult } from './store/domains.js';

/** `workerData` of the writer thread. */
export interface WriterWorkerData {
  path: string;
  busyTimeoutMs: number;
  /** SQLite page cache of the writer connection, KiB. */
  cacheSizeKib: number;
  /** Commit the open transaction once it holds this many profiles… */
  commitEveryProfiles: number;
  /** …or this many ms after it began, whichever comes first. */
  commitAfterMs: number;
  /** Nice values the thread lowers its own scheduling priority by (Linux only). */
  niceSteps: number;
  /** The check of profile texts the thread loads (see ProfileWriterOptions.textCheck), by URL. */
  textCheck?: { module: string; name: string } | undefined;
}

/** A write asked of the writer thread. */
export type WriterWrite =
  | { kind: 'summaries'; summaries: readonly unknown[]; listedAt: string }
  | {
      kind: 'profileTexts';
      texts: readonly string[];
      member?: string | undefined;
      keys?: readonly string[] | undefined;
      syncedAt: string;
    }
  | { kind: 'runStats'; runId: number; stats: Record<string, unknown> };

/** What the writer thread is asked: a write, or to commit what it applied so far. */
export type WriterCommand = WriterWrite | { kind: 'commit' };

/** A {@link WriterCommand} with the id its reply carries. */
export type WriterRequest = WriterCommand & { id: number };

/** A {@link WriterWrite} with the id its reply carries. */
export type WriterWriteRequest = WriterWrite & { id: number };

/** An error as a reply carries it. */
export interface WriterError {
  code: string;
  message: string;
}

/**
 * Posted by the thread, unasked, when writes it had answered as applied are lost (a commit that
 * failed, a write that stopped part-way): nothing more may be written on top of them.
 */
export interface WriterCommitFailed {
  commitFailed: WriterError;
}

/** An item the mirror refused, by domain. */
export interface WriterFailure {
  /** The domain (for a profile text that could not be read, its key, else `texts[i]`). */
  item: string;
  code: string;
  message: string;
  /**
   * Set by a text check (ProfileWriterOptions.textCheck) for a text that fetching again may cure,
   * such as a body that is not JSON (a transport fault): nothing of it was written.
   */
  retryable?: boolean;
}

/** The answer to one {@link WriterRequest}. */
export type WriterReply =
  | { id: number; ok: true; kind: 'summaries'; result: UpsertSummariesResult }
  | { id: number; ok: true; kind: 'profiles'; profilesWritten: number; failures: WriterFailure[] }
  | { id: number; ok: true; kind: 'runStats' }
  | { id: number; ok: true; kind: 'commit' }
  | { id: number; ok: false; error: WriterError };
