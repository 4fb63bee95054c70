/* Messages between src/mirror/profile-writer.ts and its worker thread. */
import type { UpsertSummariesResult } from './store/domains.js';

/** `workerData` of the writer thread. */
export interface WriterWorkerData {
  path: string;
  busyTimeoutMs: number;
  /** SQLite page cache of the writer connection, KiB. */
  cacheSizeKib: number;
}

/** A write asked of the writer thread. */
export type WriterCommand =
  | { kind: 'summaries'; summaries: readonly unknown[]; listedAt: string }
  | { kind: 'profiles'; profiles: readonly unknown[]; syncedAt: string }
  | { kind: 'runStats'; runId: number; stats: Record<string, unknown> };

/** A {@link WriterCommand} with the id its reply carries. */
export type WriterRequest = WriterCommand & { id: number };

/** An item the mirror refused, by domain. */
export interface WriterFailure {
  item: string;
  code: string;
  message: string;
}

/** The answer to one {@link WriterRequest}. */
export type WriterReply =
  | { id: number; ok: true; kind: 'summaries'; result: UpsertSummariesResult }
  | { id: number; ok: true; kind: 'profiles'; profilesWritten: number; failures: WriterFailure[] }
  | { id: number; ok: true; kind: 'runStats' }
  | { id: number; ok: false; error: { code: string; message: string } };
