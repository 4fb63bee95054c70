import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { ExportInfo } from '../../src/api/index.js';
import { redactText } from '../../src/log/redact.js';
import {
  markExportDownloaded,
  markExportFailed,
  setExportDownloadStatus,
  upsertExport,
} from '../../src/mirror/store/exports.js';
import type { ExportRecord } from '../../src/mirror/store/exports.js';
import { errorCode } from '../../src/runtime/run.js';
import { AbortedError } from '../../src/util/domain-sync-error.js';
import { sleep } from '../../src/util/sleep.js';
import { timestampMs } from '../../src/util/time.js';
import { hashFile, BodyLengthError, streamToFileAtomically } from './download.js';
import { ExportError } from './errors.js';
import type { ExportScope } from './types.js';

/*
 * Getting an export's file: poll the export until it is completed, then stream its file into
 * exports.dir (see download.ts), retrying a download that breaks off. Downloads cost no credits.
 */

/** How a poll-and-download ended (any other ending throws). */
export type TransferOutcome = { kind: 'downloaded' } | { kind: 'expired'; expiresAt: string | null };

/** What {@link pollAndDownload} needs besides the run's scope. */
export interface TransferOptions {
  /** Attempts of a download that breaks off. */
  downloadAttempts: number;
  /** Called with the export's info once it is completed or expired: its credits are final. */
  settle(info: ExportInfo): void;
}

/**
 * The downloaded file when it is on disk with the recorded checksum; null when it must be
 * fetched. A file whose load failed (`load_failed`) is fetched again: the checksum only proves
 * it is what was saved, and a body garbled on its way (found by the chaos soak: a malformed 200
 * saved as the file) would otherwise be reloaded, and refused, by every later run.
 */
export async function verifiedFile(scope: ExportScope, record: ExportRecord): Promise<string | null> {
  const { logger } = scope.ctx;
  if (record.file_path === null || record.checksum === null) return null;
  const where = { exportId: record.id, file: record.file_path };
  if (record.download_status === 'load_failed') {
    logger.warn('export file was refused by the last load; downloading it again', where);
    return null;
  }
  if (record.download_status !== 'downloaded' && record.download_status !== 'loading') return null;
  try {
    const { sha256, bytes } = await hashFile(record.file_path);
    if (sha256 === record.checksum && (record.byte_count === null || bytes === record.byte_count))
      return record.file_path;
    logger.warn('downloaded file changed on disk; downloading it again', where);
  } catch {
    logger.warn('downloaded file is missing; downloading it again', where);
  }
  return null;
}

/**
 * Polls until completed, then downloads. A 404 on the download while the export is not
 * completed means pending (docs/service-api.md, the download endpoint): poll again. A 404 on a
 * completed export is expiry when `expires_at` has passed; otherwise it is retried a few times
 * in case the file is not ready yet, then treated as expired (the service's only other causes,
 * unknown and pending, are excluded by the completed status).
 */
export async function pollAndDownload(
  scope: ExportScope,
  record: ExportRecord,
  options: TransferOptions,
): Promise<TransferOutcome> {
  const { ctx } = scope;
  const deadline = ctx.clock() + ctx.config.exports.pollDeadlineMs;
  const expired = (expiresAt: string | null | undefined): TransferOutcome => {
    markExpired(scope, record.id, expiresAt);
    return { kind: 'expired', expiresAt: expiresAt ?? null };
  };
  let notReady404s = 0;
  for (;;) {
    const info = await poll(scope, record.id, deadline, options);
    // `expired` is not a status the service documents, but it can only mean the file is gone.
    if (info.status === 'expired') return expired(info.expires_at);
    if (info.status !== 'completed') {
      markExportFailed(ctx.mirror, record.id, { at: scope.now(), error: `export status ${info.status}` });
      throw new ExportError(
        'ERR_EXPORT_FAILED',
        `export ${record.id} ended with status "${info.status}" instead of completed; nothing was downloaded. ` +
          'Its credits are whatever the service billed (see the account); run again to create a new export',
      );
    }
    if (isExpired(info.expires_at, ctx.clock())) return expired(info.expires_at);
    try {
      await download(scope, info, options.downloadAttempts);
      return { kind: 'downloaded' };
    } catch (error) {
      if (errorCode(error) !== 'ERR_NOT_FOUND') throw error;
      const again = await ctx.api.getExport(record.id, { signal: ctx.signal });
      recordInfo(scope, again);
      if (again.status !== 'completed') {
        ctx.logger.info('download 404 while the export is pending; polling again', {
          exportId: record.id,
          status: again.status,
        });
        continue;
      }
      notReady404s += 1;
      if (isExpired(again.expires_at, ctx.clock()) || notReady404s > 3) return expired(again.expires_at);
      ctx.logger.info('download 404 although the export is completed; retrying', {
        exportId: record.id,
        attempt: notReady404s,
      });
      await sleep(ctx.config.api.pollIntervalMs * notReady404s, ctx.signal);
      if (ctx.clock() > deadline) return expired(again.expires_at);
    }
  }
}

function markExpired(scope: ExportScope, id: number, expiresAt: string | null | undefined): void {
  setExportDownloadStatus(scope.ctx.mirror, id, {
    downloadStatus: 'expired',
    error: `file expired (expires_at ${expiresAt ?? 'unknown'})`,
    at: scope.now(),
  });
}

async function poll(
  scope: ExportScope,
  id: number,
  deadline: number,
  options: TransferOptions,
): Promise<ExportInfo> {
  const { ctx, stats } = scope;
  const remaining = deadline - ctx.clock();
  let info: ExportInfo;
  try {
    info = await ctx.api.waitForExport(id, {
      signal: ctx.signal,
      deadlineMs: Math.max(0, remaining),
      onPoll: (value) => {
        stats.polls += 1;
        if (value.status !== 'completed') recordInfo(scope, value);
        scope.progressLog('export pending', { exportId: id, status: value.status, polls: stats.polls });
      },
    });
  } catch (error) {
    if (errorCode(error) === 'ERR_NOT_FOUND') {
      markExportFailed(ctx.mirror, id, { at: scope.now(), error: 'export not found' });
      throw new ExportError(
        'ERR_EXPORT_FAILED',
        `export ${id} is unknown to the service (404); run again to create a new one`,
        {
          cause: error,
        },
      );
    }
    if (errorCode(error) === 'ERR_POLL_TIMEOUT') {
      throw new ExportError(
        'ERR_POLL_TIMEOUT',
        `${redactText((error as Error).message)}; the export stays recorded and the next run resumes it (exports.pollDeadline)`,
        { cause: error },
      );
    }
    throw error;
  }
  recordInfo(scope, info);
  if (info.status === 'completed' || info.status === 'expired') options.settle(info);
  return info;
}

function recordInfo(scope: ExportScope, info: ExportInfo): void {
  upsertExport(scope.ctx.mirror, info, { at: scope.now() });
}

/** Codes after which another download attempt cannot help. */
const FATAL_DOWNLOAD_CODES = [
  'ERR_NOT_FOUND',
  'ERR_AUTH',
  'ERR_FOREIGN_ORIGIN',
  'ERR_ABORTED',
  'ERR_QUOTA_EXCEEDED',
];

/**
 * Streams the file to a temporary name in exports.dir, hashing and counting on the way, then
 * fsync + rename. A body shorter than Content-Length or a stream that breaks off is retried
 * from the start, up to `attempts` times.
 */
async function download(scope: ExportScope, info: ExportInfo, attempts: number): Promise<void> {
  const { ctx, stats } = scope;
  const dir = ctx.config.exports.dir;
  await mkdir(dir, { recursive: true });
  await removeStaleParts(dir, info.id);
  const setStatus = (downloadStatus: 'downloading' | 'pending', error: string | null): void =>
    setExportDownloadStatus(ctx.mirror, info.id, { downloadStatus, error, at: scope.now() });
  setStatus('downloading', null);
  for (let attempt = 1; ; attempt++) {
    stats.downloadAttempts += 1;
    const tmpPath = join(dir, `.export-${info.id}-${process.pid}-${attempt}.part`);
    try {
      const dl = await ctx.api.downloadExport(info, { signal: ctx.signal });
      const finalPath = join(dir, finalFileName(info.id, dl.filename));
      const task = ctx.progress.task(`download export ${info.id}`, dl.contentLength ?? 0, 'bytes');
      let saved;
      try {
        saved = await streamToFileAtomically(
          dl.body,
          { tmpPath, finalPath },
          {
            signal: ctx.signal,
            expectedBytes: dl.contentLength,
            onChunk: (size, bytes) => {
              task.increment(size);
              scope.progressLog('export download progress', { exportId: info.id, bytes });
            },
          },
        );
      } catch (error) {
        if (!(error instanceof BodyLengthError)) throw error;
        task.done();
        throw new ExportError('ERR_TRUNCATED_DOWNLOAD', `download of export ${info.id} ${error.message}`, {
          retryable: true,
        });
      }
      task.done();
      markExportDownloaded(ctx.mirror, info.id, {
        filePath: finalPath,
        downloadedAt: scope.now(),
        checksum: saved.sha256,
        byteCount: saved.bytes,
      });
      ctx.logger.info('export downloaded', {
        exportId: info.id,
        file: finalPath,
        bytes: saved.bytes,
        sha256: saved.sha256,
      });
      return;
    } catch (error) {
      await rm(tmpPath, { force: true });
      const code = errorCode(error);
      const fatal =
        ctx.signal.aborted || error instanceof AbortedError || FATAL_DOWNLOAD_CODES.includes(code);
      if (fatal) {
        setStatus('pending', null);
        throw ctx.signal.aborted && !(error instanceof AbortedError)
          ? new AbortedError(undefined, { cause: error })
          : error;
      }
      const message = redactText(error instanceof Error ? error.message : String(error));
      if (attempt >= attempts) {
        setStatus('pending', message);
        throw new ExportError(
          code === 'ERR_TRUNCATED_DOWNLOAD' ? code : 'ERR_DOWNLOAD_FAILED',
          `download of export ${info.id} failed ${attempt} times (last: ${message}); the export stays recorded and the next run downloads it again`,
          { cause: error },
        );
      }
      // A body that breaks off (truncated, reset) is not retried by the client once it started.
      ctx.logger.warn('export download broke off; retrying', {
        exportId: info.id,
        attempt,
        code,
        error: message,
      });
      await sleep(Math.min(30_000, 250 * 2 ** (attempt - 1)), ctx.signal);
    }
  }
}

/** The local file name: the sanitised service name, prefixed with the export id unless it has it. */
function finalFileName(id: number, sanitised: string): string {
  return sanitised.includes(String(id)) ? sanitised : `export-${id}-${sanitised}`;
}

/** Removes `.part` files an earlier, interrupted download of this export left behind. */
async function removeStaleParts(dir: string, id: number): Promise<void> {
  const prefix = `.export-${id}-`;
  for (const name of await readdir(dir)) {
    if (name.startsWith(prefix) && name.endsWith('.part')) await rm(join(dir, name), { force: true });
  }
}

function isExpired(expiresAt: string | null | undefined, nowMs: number): boolean {
  if (!expiresAt) return false;
  const ms = timestampMs(expiresAt);
  return ms !== null && ms <= nowMs;
}
