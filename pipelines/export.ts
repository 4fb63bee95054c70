import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline as streamPipeline } from 'node:stream/promises';
import { parse as parseCsv } from 'csv-parse';
import type { DomainFilters, DomainServiceApi, ExportFormat, ExportInfo } from '../src/api/index.js';
import { redactText } from '../src/log/redact.js';
import { recordAccountSnapshot, recordCredits } from '../src/mirror/store/credits.js';
import {
  checkExportRow,
  exportFilesToRemove,
  latestExportWithParams,
  learnedExportCreditsPerRow,
  loadExportRows,
  markExportFileRemoved,
  setExportDownloadStatus,
} from '../src/mirror/store/export-load.js';
import type { ExportRowInput } from '../src/mirror/store/export-load.js';
import {
  findUnfinishedExport,
  getExport as getStoredExport,
  markExportDownloaded,
  markExportFailed,
  markExportLoaded,
  upsertExport,
} from '../src/mirror/store/exports.js';
import type { ExportRecord } from '../src/mirror/store/exports.js';
import { PROFILE_SECTIONS } from '../src/mirror/store/domains.js';
import { withBackgroundCheckpoints } from '../src/mirror/checkpointer.js';
import { clearSyncState, getSyncState, setSyncState } from '../src/mirror/store/sync-state.js';
import { errorCode, runPipeline } from '../src/runtime/run.js';
import type { RunContext } from '../src/runtime/run-context.js';
import type { RunResult } from '../src/runtime/run-result.js';
import { fsyncDir } from '../src/util/atomic-file.js';
import { AbortedError, DomainSyncError } from '../src/util/domain-sync-error.js';
import { sleep } from '../src/util/sleep.js';
import { isoFromMs, timestampMs } from '../src/util/time.js';

/*
 * `export`: POST /exports → poll → stream the file to exports.dir → load it into the mirror
 * (docs/service-api.md "POST /exports", "GET /exports/:id", "GET /exports/:id/download"). The how and why
 * for users is in docs/exports.md; the decisions that matter for correctness:
 *
 * - Credits are spent only by the POST. Its intent (the parameters' hash and the account's
 *   credits before it) is saved in sync_state before it is sent, and the export id in `exports`
 *   right after the 202, before polling. A re-run with the same parameters therefore resumes the
 *   export; a POST whose outcome is unknown is reconciled from the account, never re-sent blindly.
 * - Loading validates the whole file first (pass 1, nothing written) and then upserts it in
 *   batches, one transaction each (pass 2). A bad file never touches the mirror; a crash during
 *   pass 2 leaves whole rows only, and the next run loads the same file again (idempotent).
 */

/** Options of {@link exportPipeline}; the CLI maps `export`'s flags onto these. */
export interface ExportOptions {
  /** Canonical filter name → value (`--filter`); `page` and `per_page` are not allowed. @default {} */
  filters?: Readonly<Record<string, string | number | boolean>>;
  /** File format (`json` is line-delimited). @default 'csv' */
  format?: ExportFormat;
  /** Sections to include (`fields[]`). @default undefined (not sent: all sections) */
  fields?: readonly string[] | undefined;
  /** Refuse (status `budget_reached`) when the estimated cost is higher. @default no limit */
  maxCredits?: number | undefined;
  /** Load the file into the mirror; false only downloads it. @default true */
  load?: boolean;
  /** When the unfinished export's file has expired, pay for a new one. @default false */
  recreateExpired?: boolean;
  /**
   * Create a new export even though an earlier POST with the same parameters has an unknown
   * outcome and the account shows credits spent since (it may have been billed). @default false
   */
  forgetUnknown?: boolean;
  /** Rows per mirror transaction. @default 2000 */
  batchSize?: number;
  /** Attempts of a download that breaks off (downloads are free). @default 5 */
  downloadAttempts?: number;
}

/** Counts and facts of one export run, stored in `pipeline_runs.stats` and printed. */
export interface ExportStats {
  exportId: number | null;
  /** `created`, `resumed`, or `none` (refused before creating). */
  mode: 'created' | 'resumed' | 'none';
  format: ExportFormat;
  paramsHash: string;
  /** `total` of `GET /domains` with the export's filters (0 credits). */
  matchingDomains: number | null;
  creditsPerRow: number | null;
  /** Where the per-row price came from: `learned` (from N past exports) or `guess` (config). */
  priceSource: string | null;
  estimatedCredits: number | null;
  availableCredits: number | null;
  creditsUsed: number | null;
  /** `creditsUsed − estimatedCredits`, once both are known. */
  estimateError: number | null;
  status: string | null;
  totalRows: number | null;
  polls: number;
  downloadAttempts: number;
  filePath: string | null;
  bytes: number | null;
  sha256: string | null;
  rowsValidated: number;
  rowsLoaded: number;
  /** Columns (or NDJSON keys) we do not map, kept in `domains.raw_profile`. */
  unknownColumns: string[];
  filesRemoved: number;
}

const PIPELINE = 'export';
const INTENT_PIPELINE = 'export';
const PROGRESS_LOG_INTERVAL_MS = 5_000;

/**
 * `export`: creates (or resumes) a bulk export with the given parameters, polls it until
 * `completed`, streams the file to `exports.dir`, validates it and loads it into the mirror.
 *
 * Never throws: every outcome is a {@link RunResult}. `budget_reached` when the estimate exceeds
 * `maxCredits` (nothing spent); `stopped_by_service` for quota or too few available credits;
 * `failed` with a stable code for an expired file (`ERR_EXPORT_EXPIRED`), a failed export
 * (`ERR_EXPORT_FAILED`), an unknown POST outcome (`ERR_OUTCOME_UNKNOWN`), a file that cannot be
 * mapped (`ERR_EXPORT_LAYOUT`) or has a bad row (`ERR_EXPORT_FILE_INVALID`); `interrupted` on
 * abort. Whatever stopped it, the next run with the same parameters resumes the same export.
 */
export async function exportPipeline(
  ctx: RunContext,
  options: ExportOptions = {},
): Promise<RunResult<ExportStats>> {
  const format = options.format ?? 'csv';
  const filters = { ...(options.filters ?? {}) };
  const fields = options.fields === undefined ? undefined : [...options.fields];
  const stats: ExportStats = {
    exportId: null,
    mode: 'none',
    format,
    paramsHash: exportParamsHash({ filters, format, fields }),
    matchingDomains: null,
    creditsPerRow: null,
    priceSource: null,
    estimatedCredits: null,
    availableCredits: null,
    creditsUsed: null,
    estimateError: null,
    status: null,
    totalRows: null,
    polls: 0,
    downloadAttempts: 0,
    filePath: null,
    bytes: null,
    sha256: null,
    rowsValidated: 0,
    rowsLoaded: 0,
    unknownColumns: [],
    filesRemoved: 0,
  };
  return runPipeline(
    ctx,
    PIPELINE,
    (run) => new ExportRun(run.ctx, run.id, { ...options, filters, format, fields }, stats).execute(),
    () => stats,
  );
}

/** The saved intent of a POST /exports (sync_state cursor, keyed by the parameters' hash). */
type ExportIntent =
  | {
      state: 'requested';
      requestedAt: string;
      creditsSpentBefore: number | null;
      estimatedCredits: number | null;
    }
  | { state: 'created'; exportId: number; requestedAt: string; estimatedCredits: number | null };

/** Stable errors of this pipeline (matched on `code`, see docs/exports.md "Failures"). */
export class ExportError extends DomainSyncError {}

class ExportRun {
  private readonly ctx: RunContext;
  private readonly runId: number;
  private readonly options: ExportOptions & {
    format: ExportFormat;
    filters: Record<string, string | number | boolean>;
  };
  private readonly stats: ExportStats;
  private readonly api: DomainServiceApi;
  private readonly filters: Record<string, string | number | boolean>;
  private readonly format: ExportFormat;
  private readonly fields: string[] | undefined;
  private lastProgressLogMs = 0;

  constructor(
    ctx: RunContext,
    runId: number,
    options: ExportOptions & {
      format: ExportFormat;
      filters: Record<string, string | number | boolean>;
    },
    stats: ExportStats,
  ) {
    this.ctx = ctx;
    this.runId = runId;
    this.options = options;
    this.stats = stats;
    this.api = ctx.api;
    this.filters = options.filters;
    this.format = options.format;
    this.fields = options.fields === undefined ? undefined : [...options.fields];
  }

  private now(): string {
    return isoFromMs(this.ctx.clock());
  }

  async execute() {
    const { ctx, stats } = this;
    for (const name of ['page', 'per_page']) {
      if (name in this.filters) throw new ExportError('ERR_USAGE', `export filters cannot include "${name}"`);
    }
    try {
      let record = findUnfinishedExport(ctx.mirror, stats.paramsHash);
      if (record !== undefined) {
        stats.mode = 'resumed';
        ctx.logger.info('resuming unfinished export', {
          exportId: record.id,
          downloadStatus: record.download_status,
        });
      } else {
        const refusal = await this.checkBeforeCreating();
        if (refusal !== undefined) return refusal;
        record = await this.create();
      }
      return await this.finish(record);
    } finally {
      await this.applyRetention();
    }
  }

  /**
   * Before paying: an earlier expired export needs --recreate-expired, an earlier POST with an
   * unknown outcome must be reconciled, and the estimate must fit --max-credits and the account.
   */
  private async checkBeforeCreating() {
    const { ctx, stats } = this;
    const latest = latestExportWithParams(ctx.mirror, stats.paramsHash);
    if (
      latest !== undefined &&
      latest.loaded_at === null &&
      latest.download_status === 'expired' &&
      !this.options.recreateExpired
    ) {
      // The same parameters' last export expired before we had its file: creating another one
      // costs credits again, which must never happen silently: only with --recreate-expired.
      stats.exportId = latest.id;
      throw new ExportError('ERR_EXPORT_EXPIRED', expiredMessage(latest.id, latest.expires_at));
    }
    const intent = this.intent();
    const account = await this.api.getAccount({ signal: ctx.signal });
    recordAccountSnapshot(ctx.mirror, account, { at: this.now(), pipelineRunId: this.runId });
    const spentNow = account.credits_used + account.credits_reserved;
    if (intent?.state === 'requested') {
      if (intent.creditsSpentBefore !== null && intent.creditsSpentBefore === spentNow) {
        ctx.logger.info('earlier POST /exports with an unknown outcome was not billed; creating the export', {
          requestedAt: intent.requestedAt,
        });
      } else if (this.options.forgetUnknown) {
        ctx.logger.warn('forgetting an earlier POST /exports whose outcome is unknown (--forget-unknown)', {
          requestedAt: intent.requestedAt,
        });
      } else {
        throw new ExportError(
          'ERR_OUTCOME_UNKNOWN',
          `an earlier POST /exports with the same parameters (sent ${intent.requestedAt}) has an unknown outcome, ` +
            `and the account's used+reserved credits moved from ${intent.creditsSpentBefore ?? 'unknown'} to ${spentNow} since: ` +
            'it may have been billed. Its export id is unknown, so it cannot be resumed. Check the account usage; ' +
            'run again with --forget-unknown to create a new export anyway',
        );
      }
    }

    const probe = await this.api.searchDomains(
      { ...(this.filters as DomainFilters), per_page: 1 },
      { signal: ctx.signal },
    );
    stats.matchingDomains = probe.total;
    const learned = learnedExportCreditsPerRow(ctx.mirror);
    stats.creditsPerRow = learned?.creditsPerRow ?? ctx.config.exports.creditsPerRowGuess;
    stats.priceSource = learned
      ? `learned from ${learned.exports} export(s)`
      : 'guess (exports.creditsPerRowGuess)';
    stats.estimatedCredits = estimateExportCredits(probe.total, stats.creditsPerRow);
    stats.availableCredits = account.credits_granted === null ? null : account.available_credits;
    const { maxCredits } = this.options;
    if (maxCredits !== undefined && stats.estimatedCredits > maxCredits) {
      const message =
        `estimated cost ${stats.estimatedCredits} credits (${probe.total} matching domains × ${formatPrice(stats.creditsPerRow)} ` +
        `credits per row, ${stats.priceSource}) exceeds --max-credits ${maxCredits}; nothing was spent`;
      ctx.logger.warn('export refused: estimate over --max-credits', {
        estimate: stats.estimatedCredits,
        maxCredits,
      });
      return {
        status: 'budget_reached' as const,
        stats,
        failures: [],
        creditsSpent: 0,
        error: { code: 'ERR_OVER_MAX_CREDITS', message },
      };
    }
    if (stats.availableCredits !== null && stats.estimatedCredits > stats.availableCredits) {
      throw new ExportError(
        'ERR_INSUFFICIENT_CREDITS',
        `estimated cost ${stats.estimatedCredits} credits (${probe.total} matching domains × ${formatPrice(stats.creditsPerRow)} ` +
          `credits per row) exceeds the account's ${stats.availableCredits} available credits; nothing was spent`,
      );
    }
    // Remembered for the POST's intent: an unchanged used+reserved later proves it was not billed.
    this.creditsSpentBefore = spentNow;
    return undefined;
  }

  private creditsSpentBefore: number | null = null;

  private intent(): ExportIntent | null {
    const state = getSyncState(this.ctx.mirror, INTENT_PIPELINE, this.stats.paramsHash);
    return (state?.cursor as ExportIntent | null | undefined) ?? null;
  }

  private saveIntent(intent: ExportIntent): void {
    setSyncState(this.ctx.mirror, {
      pipeline: INTENT_PIPELINE,
      scopeKey: this.stats.paramsHash,
      filters: { filters: this.filters, format: this.format, fields: this.fields ?? null },
      cursor: intent,
      pipelineRunId: this.runId,
      updatedAt: this.now(),
    });
  }

  /** POST /exports with the intent saved first and the id saved right after the 202. */
  private async create(): Promise<ExportRecord> {
    const { ctx, stats } = this;
    const requestedAt = this.now();
    this.saveIntent({
      state: 'requested',
      requestedAt,
      creditsSpentBefore: this.creditsSpentBefore,
      estimatedCredits: stats.estimatedCredits,
    });
    let created;
    try {
      created = await this.api.createExport(
        { filters: this.filters as DomainFilters, format: this.format, fields: this.fields },
        { signal: ctx.signal },
      );
    } catch (error) {
      const code = errorCode(error);
      if (code === 'ERR_OUTCOME_UNKNOWN' || code === 'ERR_ABORTED' || error instanceof AbortedError) {
        // The intent stays: the next run reconciles it from the account before paying again.
        throw new ExportError(
          'ERR_OUTCOME_UNKNOWN',
          'POST /exports failed without telling whether the export was created and billed; it was not retried. ' +
            'Check the account usage (`domain-sync account`); the next `export` with the same parameters creates a new ' +
            'export only if the account shows it was not billed (or with --forget-unknown)' +
            ` (${redactText(error instanceof Error ? error.message : String(error))})`,
          { cause: error },
        );
      }
      // A definite refusal (quota, 400, 401): nothing was billed, so the intent is void.
      clearSyncState(ctx.mirror, INTENT_PIPELINE, stats.paramsHash);
      throw error;
    }
    const at = this.now();
    upsertExport(
      ctx.mirror,
      { id: created.exportId, status: 'pending', format: this.format },
      {
        at,
        requestedAt,
        paramsHash: stats.paramsHash,
        filters: this.filters,
        fields: this.fields ?? null,
        downloadStatus: 'pending',
        pipelineRunId: this.runId,
      },
    );
    this.saveIntent({
      state: 'created',
      exportId: created.exportId,
      requestedAt,
      estimatedCredits: stats.estimatedCredits,
    });
    stats.mode = 'created';
    stats.exportId = created.exportId;
    ctx.logger.info('export created', { exportId: created.exportId, estimate: stats.estimatedCredits });
    return getStoredExport(ctx.mirror, created.exportId)!;
  }

  /** Poll → download → load for one export row, whatever state it was left in. */
  private async finish(initial: ExportRecord) {
    const { ctx, stats } = this;
    let record = initial;
    stats.exportId = record.id;
    for (;;) {
      const file = await this.verifiedFile(record);
      if (file === null) {
        const outcome = await this.pollAndDownload(record);
        if (outcome.kind === 'expired') {
          if (!this.options.recreateExpired)
            throw new ExportError('ERR_EXPORT_EXPIRED', expiredMessage(record.id, outcome.expiresAt));
          // Never silently: the user asked for it, and the estimate checks run again.
          ctx.logger.warn('export file expired; creating a new export (--recreate-expired, costs credits)', {
            exportId: record.id,
          });
          const refusal = await this.checkBeforeCreating();
          if (refusal !== undefined) return refusal;
          record = await this.create();
          continue;
        }
      }
      record = getStoredExport(ctx.mirror, record.id)!;
      break;
    }
    stats.status = record.status;
    stats.totalRows = record.total_rows;
    stats.filePath = record.file_path;
    stats.bytes = record.byte_count;
    stats.sha256 = record.checksum;
    if (this.options.load === false) {
      ctx.logger.info('export downloaded; not loaded (--no-load)', {
        exportId: record.id,
        file: record.file_path,
      });
      return this.done();
    }
    await this.load(record);
    return this.done();
  }

  private done() {
    return {
      status: 'done' as const,
      stats: this.stats,
      failures: [],
      creditsSpent: this.creditsSpentThisRun,
    };
  }

  private creditsSpentThisRun = 0;

  /**
   * The downloaded file when it is on disk with the recorded checksum; null when it must be
   * fetched. A file whose load failed (`load_failed`) is fetched again: the checksum only proves
   * it is what was saved, and a body garbled on its way (found by the chaos soak: a malformed 200
   * saved as the file) would otherwise be reloaded, and refused, by every later run. Downloads
   * cost no credits.
   */
  private async verifiedFile(record: ExportRecord): Promise<string | null> {
    if (record.file_path === null || record.checksum === null) return null;
    if (record.download_status === 'load_failed') {
      this.ctx.logger.warn('export file was refused by the last load; downloading it again', {
        exportId: record.id,
        file: record.file_path,
      });
      return null;
    }
    if (record.download_status !== 'downloaded' && record.download_status !== 'loading') return null;
    try {
      const { sha256, bytes } = await hashFile(record.file_path);
      if (sha256 === record.checksum && (record.byte_count === null || bytes === record.byte_count))
        return record.file_path;
      this.ctx.logger.warn('downloaded file changed on disk; downloading it again', {
        exportId: record.id,
        file: record.file_path,
      });
    } catch {
      this.ctx.logger.warn('downloaded file is missing; downloading it again', {
        exportId: record.id,
        file: record.file_path,
      });
    }
    return null;
  }

  /**
   * Polls until completed, then downloads. A 404 on the download while the export is not
   * completed means pending (docs/service-api.md "GET /exports/:id/download"): poll again. A 404 on a
   * completed export is expiry when `expires_at` has passed; otherwise it is retried a few
   * times in case the file is not ready yet, then treated as expired (the spec's only other
   * causes, unknown and pending, are excluded by the completed status).
   */
  private async pollAndDownload(
    record: ExportRecord,
  ): Promise<{ kind: 'downloaded' } | { kind: 'expired'; expiresAt: string | null }> {
    const { ctx } = this;
    const deadline = ctx.clock() + ctx.config.exports.pollDeadlineMs;
    let notReady404s = 0;
    for (;;) {
      const info = await this.poll(record.id, deadline);
      // `expired` is not a status the spec shows, but it can only mean the file is gone.
      if (info.status === 'expired') {
        this.markExpired(record.id, info.expires_at);
        return { kind: 'expired', expiresAt: info.expires_at ?? null };
      }
      if (info.status !== 'completed') {
        markExportFailed(ctx.mirror, record.id, { at: this.now(), error: `export status ${info.status}` });
        throw new ExportError(
          'ERR_EXPORT_FAILED',
          `export ${record.id} ended with status "${info.status}" instead of completed; nothing was downloaded. ` +
            'Its credits are whatever the service billed (see the account); run again to create a new export',
        );
      }
      if (isExpired(info.expires_at, ctx.clock())) {
        this.markExpired(record.id, info.expires_at);
        return { kind: 'expired', expiresAt: info.expires_at ?? null };
      }
      try {
        await this.download(info);
        return { kind: 'downloaded' };
      } catch (error) {
        if (errorCode(error) !== 'ERR_NOT_FOUND') throw error;
        const again = await this.api.getExport(record.id, { signal: ctx.signal });
        this.recordInfo(again);
        if (again.status !== 'completed') {
          ctx.logger.info('download 404 while the export is pending; polling again', {
            exportId: record.id,
            status: again.status,
          });
          continue;
        }
        notReady404s += 1;
        if (isExpired(again.expires_at, ctx.clock()) || notReady404s > 3) {
          this.markExpired(record.id, again.expires_at);
          return { kind: 'expired', expiresAt: again.expires_at ?? null };
        }
        ctx.logger.info('download 404 although the export is completed; retrying', {
          exportId: record.id,
          attempt: notReady404s,
        });
        await sleep(ctx.config.api.pollIntervalMs * notReady404s, ctx.signal);
        if (ctx.clock() > deadline) {
          this.markExpired(record.id, again.expires_at);
          return { kind: 'expired', expiresAt: again.expires_at ?? null };
        }
      }
    }
  }

  private markExpired(id: number, expiresAt: string | null | undefined): void {
    setExportDownloadStatus(this.ctx.mirror, id, {
      downloadStatus: 'expired',
      error: `file expired (expires_at ${expiresAt ?? 'unknown'})`,
      at: this.now(),
    });
  }

  private async poll(id: number, deadline: number): Promise<ExportInfo> {
    const { ctx, stats } = this;
    const remaining = deadline - ctx.clock();
    let info: ExportInfo;
    try {
      info = await this.api.waitForExport(id, {
        signal: ctx.signal,
        deadlineMs: Math.max(0, remaining),
        onPoll: (value) => {
          stats.polls += 1;
          if (value.status !== 'completed') this.recordInfo(value);
          this.maybeLog('export pending', { exportId: id, status: value.status, polls: stats.polls });
        },
      });
    } catch (error) {
      if (errorCode(error) === 'ERR_NOT_FOUND') {
        markExportFailed(ctx.mirror, id, { at: this.now(), error: 'export not found' });
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
    this.recordInfo(info);
    if (info.status === 'completed' || info.status === 'expired') this.settleCredits(info);
    return info;
  }

  private recordInfo(info: ExportInfo): void {
    upsertExport(this.ctx.mirror, info, { at: this.now() });
  }

  /** Records the billed credits once per export (entry key `export:<id>`) with the estimate. */
  private settleCredits(info: ExportInfo): void {
    const { ctx, stats } = this;
    const intent = this.intent();
    const estimate =
      intent?.state === 'created' && intent.exportId === info.id
        ? intent.estimatedCredits
        : stats.estimatedCredits;
    stats.creditsUsed = info.credits_used ?? null;
    if (estimate !== null && stats.creditsUsed !== null) stats.estimateError = stats.creditsUsed - estimate;
    if (info.credits_used === undefined || info.credits_used === null) return;
    const { recorded } = recordCredits(ctx.mirror, {
      at: this.now(),
      operation: 'export',
      credits: info.credits_used,
      estimatedCredits: estimate,
      pipelineRunId: this.runId,
      exportId: info.id,
      entryKey: `export:${info.id}`,
      note:
        estimate === null
          ? null
          : `estimate ${estimate}, actual ${info.credits_used}, error ${info.credits_used - estimate}` +
            (info.total_rows ? ` (${info.total_rows} rows)` : ''),
    });
    if (recorded) this.creditsSpentThisRun += info.credits_used;
    if (intent?.state === 'created' && intent.exportId === info.id)
      clearSyncState(ctx.mirror, INTENT_PIPELINE, stats.paramsHash);
  }

  /**
   * Streams the file to a temporary name in exports.dir, hashing and counting on the way, then
   * fsync + rename. A body shorter than Content-Length or a stream that breaks off is retried
   * from the start (downloads cost nothing).
   */
  private async download(info: ExportInfo): Promise<void> {
    const { ctx, stats } = this;
    const dir = ctx.config.exports.dir;
    await mkdir(dir, { recursive: true });
    await removeStaleParts(dir, info.id);
    const attempts = this.options.downloadAttempts ?? 5;
    setExportDownloadStatus(ctx.mirror, info.id, {
      downloadStatus: 'downloading',
      error: null,
      at: this.now(),
    });
    for (let attempt = 1; ; attempt++) {
      stats.downloadAttempts += 1;
      const tmp = join(dir, `.export-${info.id}-${process.pid}-${attempt}.part`);
      try {
        const dl = await this.api.downloadExport(info, { signal: ctx.signal });
        const finalPath = join(dir, finalFileName(info.id, dl.filename));
        const task = ctx.progress.task(`download export ${info.id}`, dl.contentLength ?? 0, 'bytes');
        const hash = createHash('sha256');
        let bytes = 0;
        const meter = new Transform({
          transform: (chunk: Buffer, _encoding, callback) => {
            hash.update(chunk);
            bytes += chunk.length;
            task.increment(chunk.length);
            this.maybeLog('export download progress', { exportId: info.id, bytes });
            callback(null, chunk);
          },
        });
        await streamPipeline(dl.body, meter, createWriteStream(tmp), { signal: ctx.signal });
        task.done();
        if (dl.contentLength !== undefined && bytes !== dl.contentLength) {
          throw new ExportError(
            'ERR_TRUNCATED_DOWNLOAD',
            `download of export ${info.id} ended after ${bytes} of ${dl.contentLength} bytes`,
            {
              retryable: true,
            },
          );
        }
        // fsync before the rename: after a power loss the final name never points at a short file.
        const handle = await open(tmp, 'r+');
        try {
          await handle.sync();
        } finally {
          await handle.close();
        }
        await rename(tmp, finalPath);
        await fsyncDir(dir);
        const sha256 = hash.digest('hex');
        markExportDownloaded(ctx.mirror, info.id, {
          filePath: finalPath,
          downloadedAt: this.now(),
          checksum: sha256,
          byteCount: bytes,
        });
        ctx.logger.info('export downloaded', { exportId: info.id, file: finalPath, bytes, sha256 });
        return;
      } catch (error) {
        await rm(tmp, { force: true });
        const code = errorCode(error);
        const fatal =
          ctx.signal.aborted ||
          error instanceof AbortedError ||
          ['ERR_NOT_FOUND', 'ERR_AUTH', 'ERR_FOREIGN_ORIGIN', 'ERR_ABORTED', 'ERR_QUOTA_EXCEEDED'].includes(
            code,
          );
        if (fatal) {
          setExportDownloadStatus(ctx.mirror, info.id, {
            downloadStatus: 'pending',
            error: null,
            at: this.now(),
          });
          throw ctx.signal.aborted && !(error instanceof AbortedError)
            ? new AbortedError(undefined, { cause: error })
            : error;
        }
        const message = redactText(error instanceof Error ? error.message : String(error));
        if (attempt >= attempts) {
          setExportDownloadStatus(ctx.mirror, info.id, {
            downloadStatus: 'pending',
            error: message,
            at: this.now(),
          });
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

  /** Pass 1 validates every row (nothing written); pass 2 upserts in batches, one transaction each. */
  private async load(record: ExportRecord): Promise<void> {
    const { ctx, stats } = this;
    const path = record.file_path!;
    const format = fileFormat(record.format, path);
    setExportDownloadStatus(ctx.mirror, record.id, {
      downloadStatus: 'loading',
      error: null,
      at: this.now(),
    });
    let rows = 0;
    try {
      const validateTask = ctx.progress.task(`validate export ${record.id}`, record.total_rows ?? 0, 'rows');
      const unknown = new Set<string>();
      for await (const { row, where } of readExportRows(path, format, { unknownColumns: unknown })) {
        checkExportRow(row, where);
        rows += 1;
        if ((rows & 1023) === 0) {
          validateTask.increment(1024);
          this.maybeLog('export validation progress', { exportId: record.id, rows });
          if (ctx.signal.aborted) throw new AbortedError();
        }
      }
      validateTask.done();
      if (rows === 0 && (record.total_rows ?? 0) > 0) {
        throw new ExportError(
          'ERR_EXPORT_FILE_INVALID',
          `${path}: the file has no rows but export ${record.id} has total_rows ${record.total_rows}; nothing was loaded`,
        );
      }
      stats.rowsValidated = rows;
      stats.unknownColumns = [...unknown];
      if (unknown.size > 0)
        ctx.logger.info('export file has unmapped columns; kept in raw_profile', {
          columns: stats.unknownColumns,
        });
    } catch (error) {
      if (error instanceof AbortedError) throw error;
      const code = errorCode(error);
      const wrapped =
        code === 'ERR_EXPORT_LAYOUT' || code === 'ERR_EXPORT_FILE_INVALID'
          ? (error as ExportError)
          : new ExportError(
              'ERR_EXPORT_FILE_INVALID',
              `${path}: ${redactText((error as Error).message)}; nothing was loaded`,
              {
                cause: error,
              },
            );
      setExportDownloadStatus(ctx.mirror, record.id, {
        downloadStatus: 'load_failed',
        error: wrapped.message,
        at: this.now(),
      });
      throw wrapped;
    }

    const batchSize = this.options.batchSize ?? 2000;
    const loadTask = ctx.progress.task(`load export ${record.id}`, rows, 'rows');
    const syncedAt = this.now();
    let batch: ExportRowInput[] = [];
    let loaded = 0;
    const flush = (): void => {
      loadExportRows(ctx.mirror, batch, { syncedAt });
      loaded += batch.length;
      loadTask.increment(batch.length);
      batch = [];
      this.maybeLog('export load progress', { exportId: record.id, rows: loaded, of: rows });
    };
    // Bulk write: WAL checkpoints move to a worker thread (src/mirror/checkpointer.ts).
    await withBackgroundCheckpoints(ctx.mirror, async () => {
      for await (const { row } of readExportRows(path, format)) {
        batch.push(row);
        if (batch.length >= batchSize) {
          flush();
          // A stop between batches leaves whole rows only; the load stays `loading` and resumable.
          if (ctx.signal.aborted) throw new AbortedError();
        }
      }
      if (batch.length > 0) flush();
    });
    loadTask.done();
    stats.rowsLoaded = loaded;
    markExportLoaded(ctx.mirror, record.id, { loadedAt: this.now(), rowsLoaded: loaded, filePath: path });
    setExportDownloadStatus(ctx.mirror, record.id, { downloadStatus: 'loaded', error: null, at: this.now() });
    ctx.logger.info('export loaded', { exportId: record.id, rows: loaded });
  }

  /** Deletes files of loaded exports whose `expires_at` is older than `exports.retention`. */
  private async applyRetention(): Promise<void> {
    const { ctx, stats } = this;
    try {
      const expiredBefore = isoFromMs(ctx.clock() - ctx.config.exports.retentionMs);
      for (const file of exportFilesToRemove(ctx.mirror, { expiredBefore })) {
        await rm(file.file_path, { force: true });
        markExportFileRemoved(ctx.mirror, file.id, { at: this.now() });
        stats.filesRemoved += 1;
        ctx.logger.info('old export file removed (exports.retention)', {
          exportId: file.id,
          file: file.file_path,
        });
      }
    } catch (error) {
      // Housekeeping must not turn a good run into a failed one.
      ctx.logger.warn('export file retention failed', { error: redactText((error as Error).message) });
    }
  }

  private maybeLog(message: string, fields: Record<string, unknown>): void {
    const now = this.ctx.clock();
    if (now - this.lastProgressLogMs < PROGRESS_LOG_INTERVAL_MS) return;
    this.lastProgressLogMs = now;
    this.ctx.logger.info(message, fields);
  }
}

function expiredMessage(id: number, expiresAt: string | null | undefined): string {
  return (
    `the file of export ${id} has expired (expires_at ${expiresAt ?? 'unknown'}) before it was downloaded; ` +
    'run again with --recreate-expired to pay for a new export with the same parameters'
  );
}

function isExpired(expiresAt: string | null | undefined, nowMs: number): boolean {
  if (!expiresAt) return false;
  const ms = timestampMs(expiresAt);
  return ms !== null && ms <= nowMs;
}

function formatPrice(price: number): string {
  return Number(price.toPrecision(4)).toString();
}

/**
 * Hash identifying an export's parameters (filters in canonical names, format, fields), so a
 * re-run with the same parameters finds the unfinished export. Filter and field order do not
 * matter; "all sections" (fields not given) differs from an explicit list.
 */
export function exportParamsHash(params: {
  filters: Readonly<Record<string, unknown>>;
  format: ExportFormat;
  fields: readonly string[] | undefined;
}): string {
  const filters = Object.keys(params.filters)
    .sort()
    .map((k) => [k, params.filters[k]]);
  const fields = params.fields === undefined ? null : [...new Set(params.fields)].sort();
  return createHash('sha256')
    .update(JSON.stringify({ filters, format: params.format, fields }))
    .digest('hex');
}

/** Estimated credits of an export: `ceil(rows × creditsPerRow)` (the formula is "not shown"). */
export function estimateExportCredits(rows: number, creditsPerRow: number): number {
  // toPrecision trims float noise (0.1 × 30 = 3.0000000000000004 must not become 4).
  return Math.ceil(Number((rows * creditsPerRow).toPrecision(12)));
}

/** The local file name: the sanitised service name, prefixed with the export id unless it has it. */
function finalFileName(id: number, sanitised: string): string {
  return sanitised.includes(String(id)) ? sanitised : `export-${id}-${sanitised}`;
}

async function removeStaleParts(dir: string, id: number): Promise<void> {
  const prefix = `.export-${id}-`;
  for (const name of await readdir(dir)) {
    if (name.startsWith(prefix) && name.endsWith('.part')) await rm(join(dir, name), { force: true });
  }
}

async function hashFile(path: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  await stat(path);
  for await (const chunk of createReadStream(path)) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), bytes };
}

function fileFormat(format: string | null, path: string): ExportFormat {
  if (format === 'csv' || format === 'json') return format;
  return /\.csv$/i.test(path) ? 'csv' : 'json';
}

// ---------------------------------------------------------------------------------------------
// Export file layout. The service does not describe the file's columns or layout
// (docs/service-api.md "What the interface leaves open"); the simulator's choice is in
// docs/simulator.md "Export files". We map by column name and accept the plausible variants
// listed in docs/exports.md "Layouts accepted".
// ---------------------------------------------------------------------------------------------

/** How one column (or NDJSON key) maps onto a profile. */
type ColumnRole =
  | { kind: 'key' }
  | { kind: 'top'; field: 'domain' | 'status' | 'last_enriched_at' }
  | { kind: 'company' }
  | { kind: 'operator'; field: 'name' | 'legal_entity_name' | 'country_of_incorporation' }
  | { kind: 'brand'; field: 'name' | 'slug' }
  | { kind: 'object'; field: 'operator' | 'brand' | 'meta' }
  | { kind: 'section'; field: string }
  | { kind: 'unknown'; name: string };

/** Column names accepted for the key, `domain_normalized`. */
export const DOMAIN_KEY_COLUMNS = ['domain_normalized', 'normalized_domain', 'domainNormalized'] as const;

const NAMED_ROLES: Record<string, ColumnRole> = {
  domain: { kind: 'top', field: 'domain' },
  status: { kind: 'top', field: 'status' },
  last_enriched_at: { kind: 'top', field: 'last_enriched_at' },
  company_name: { kind: 'company' },
  operator_name: { kind: 'operator', field: 'name' },
  'operator.name': { kind: 'operator', field: 'name' },
  operator_legal_entity_name: { kind: 'operator', field: 'legal_entity_name' },
  'operator.legal_entity_name': { kind: 'operator', field: 'legal_entity_name' },
  operator_country: { kind: 'operator', field: 'country_of_incorporation' },
  operator_country_of_incorporation: { kind: 'operator', field: 'country_of_incorporation' },
  'operator.country_of_incorporation': { kind: 'operator', field: 'country_of_incorporation' },
  brand_name: { kind: 'brand', field: 'name' },
  'brand.name': { kind: 'brand', field: 'name' },
  brand_slug: { kind: 'brand', field: 'slug' },
  'brand.slug': { kind: 'brand', field: 'slug' },
  operator: { kind: 'object', field: 'operator' },
  brand: { kind: 'object', field: 'brand' },
  meta: { kind: 'object', field: 'meta' },
};
for (const key of DOMAIN_KEY_COLUMNS) NAMED_ROLES[key] = { kind: 'key' };
for (const section of PROFILE_SECTIONS) NAMED_ROLES[section] = { kind: 'section', field: section };
NAMED_ROLES.licenses = { kind: 'section', field: 'licenses' };
NAMED_ROLES.payment_methods = { kind: 'section', field: 'payment_methods' };

function roleOf(name: string): ColumnRole {
  const trimmed = name.trim();
  return Object.hasOwn(NAMED_ROLES, trimmed) ? NAMED_ROLES[trimmed]! : { kind: 'unknown', name: trimmed };
}

/**
 * Maps one record of an export file onto an {@link ExportRowInput}. `textCells` is true for CSV:
 * an empty cell is null, and object/section cells hold JSON text. Unknown columns are kept as
 * extra keys of the profile (so they land in `domains.raw_profile`). Throws
 * `ERR_EXPORT_FILE_INVALID` naming `where` and the column for a cell that is not valid JSON.
 */
export function mapExportRecord(
  names: readonly string[],
  values: readonly unknown[],
  roles: readonly ColumnRole[],
  textCells: boolean,
  where: string,
): ExportRowInput {
  const profile: Record<string, unknown> = {};
  let operator: Record<string, unknown> | undefined;
  let brand: Record<string, unknown> | undefined;
  let companyName: string | null | undefined;
  for (let i = 0; i < roles.length; i++) {
    const role = roles[i]!;
    let value = values[i];
    if (textCells && value === '') value = null;
    switch (role.kind) {
      case 'key':
        profile.domain_normalized = value;
        break;
      case 'top':
        profile[role.field] = value;
        break;
      case 'company':
        companyName = value as string | null;
        break;
      case 'operator':
        (operator ??= {})[role.field] = value;
        break;
      case 'brand':
        (brand ??= {})[role.field] = value;
        break;
      case 'object': {
        const parsed = typeof value === 'string' ? parseJsonCell(value, where, names[i]!) : value;
        if (parsed === null || parsed === undefined) break;
        // Flat columns (operator_name) win over a nested object when a file has both.
        if (role.field === 'operator') operator = { ...(parsed as object), ...operator };
        else if (role.field === 'brand') brand = { ...(parsed as object), ...brand };
        else profile.meta = parsed;
        break;
      }
      case 'section': {
        const parsed = typeof value === 'string' ? parseJsonCell(value, where, names[i]!) : value;
        // An empty cell or null = section not in the file: the stored rows are left alone.
        if (parsed !== null && parsed !== undefined) profile[role.field] = parsed;
        break;
      }
      case 'unknown':
        if (value !== undefined) profile[role.name] = value;
        break;
    }
  }
  if (operator !== undefined) profile.operator = operator;
  if (brand !== undefined) profile.brand = brand;
  return {
    profile: profile as unknown as ExportRowInput['profile'],
    ...(companyName === undefined ? {} : { companyName }),
  };
}

function parseJsonCell(text: string, where: string, column: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ExportError(
      'ERR_EXPORT_FILE_INVALID',
      `${where}, column ${column}: not valid JSON (${JSON.stringify(text.slice(0, 40))}…); nothing was loaded`,
    );
  }
}

/** A file whose columns cannot be mapped: names the columns found. */
function layoutError(path: string, columns: readonly string[]): ExportError {
  const shown =
    columns.slice(0, 30).join(', ') + (columns.length > 30 ? `, … (${columns.length} in all)` : '');
  return new ExportError(
    'ERR_EXPORT_LAYOUT',
    `${path}: cannot map this export file: no ${DOMAIN_KEY_COLUMNS[0]} column (also accepted: ${DOMAIN_KEY_COLUMNS.slice(1).join(', ')}); ` +
      `columns found: ${shown || '(none)'}; nothing was loaded`,
  );
}

/**
 * Streams the rows of an export file (CSV with a header row, or NDJSON) as mapped rows, with
 * memory flat whatever the file size. `where` names the line for error messages. Throws
 * `ERR_EXPORT_LAYOUT` when the header (or the first NDJSON object) has no key column, and
 * `ERR_EXPORT_FILE_INVALID` for a line that cannot be parsed.
 */
export async function* readExportRows(
  path: string,
  format: ExportFormat,
  options: { unknownColumns?: Set<string> } = {},
): AsyncGenerator<{ row: ExportRowInput; where: string }> {
  if (format === 'csv') yield* readCsvRows(path, options);
  else yield* readNdjsonRows(path, options);
}

async function* readCsvRows(
  path: string,
  options: { unknownColumns?: Set<string> },
): AsyncGenerator<{ row: ExportRowInput; where: string }> {
  const source = createReadStream(path);
  const parser = parseCsv({ bom: true, skip_empty_lines: true, relax_column_count: false });
  source.on('error', (error) => parser.destroy(error));
  source.pipe(parser);
  let names: string[] | null = null;
  let roles: ColumnRole[] = [];
  let line = 1;
  try {
    for await (const record of parser as AsyncIterable<string[]>) {
      if (names === null) {
        names = record.map((n) => n.trim());
        roles = names.map(roleOf);
        if (!roles.some((r) => r.kind === 'key')) throw layoutError(path, names);
        for (const role of roles) if (role.kind === 'unknown') options.unknownColumns?.add(role.name);
        continue;
      }
      line += 1;
      const where = `${path} row ${line - 1} (line ${line})`;
      yield { row: mapExportRecord(names, record, roles, true, where), where };
    }
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ERR_EXPORT_LAYOUT' || code === 'ERR_EXPORT_FILE_INVALID') throw error;
    throw new ExportError(
      'ERR_EXPORT_FILE_INVALID',
      `${path}: not a readable CSV file near line ${line + 1}: ${(error as Error).message}; nothing was loaded`,
      {
        cause: error,
      },
    );
  } finally {
    source.destroy();
  }
  if (names === null) throw layoutError(path, []);
}

async function* readNdjsonRows(
  path: string,
  options: { unknownColumns?: Set<string> },
): AsyncGenerator<{ row: ExportRowInput; where: string }> {
  const roleCache = new Map<string, ColumnRole>();
  let line = 0;
  let first = true;
  for await (const text of readLines(path)) {
    line += 1;
    const trimmed = line === 1 ? text.replace(/^\uFEFF/, '').trim() : text.trim();
    if (trimmed === '') continue;
    const where = `${path} line ${line}`;
    let object: unknown;
    try {
      object = JSON.parse(trimmed);
    } catch {
      throw new ExportError(
        'ERR_EXPORT_FILE_INVALID',
        `${where}: not a JSON object (${JSON.stringify(trimmed.slice(0, 40))}…); nothing was loaded`,
      );
    }
    if (object === null || typeof object !== 'object' || Array.isArray(object)) {
      throw new ExportError(
        'ERR_EXPORT_FILE_INVALID',
        `${where}: expected one JSON object per line; nothing was loaded`,
      );
    }
    const names = Object.keys(object);
    const values = names.map((n) => (object as Record<string, unknown>)[n]);
    const roles = names.map((n) => {
      let role = roleCache.get(n);
      if (role === undefined) {
        role = roleOf(n);
        roleCache.set(n, role);
        if (role.kind === 'unknown') options.unknownColumns?.add(role.name);
      }
      return role;
    });
    if (first) {
      if (!roles.some((r) => r.kind === 'key')) throw layoutError(path, names);
      first = false;
    }
    yield { row: mapExportRecord(names, values, roles, false, where), where };
  }
  // An empty NDJSON file is an export of 0 rows (a filter that matched nothing); the load checks
  // that against the export's total_rows.
}

/** Lines of a UTF-8 file, streamed (a multi-byte character split across chunks stays whole). */
async function* readLines(path: string): AsyncGenerator<string> {
  const stream = createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 20 });
  let rest = '';
  for await (const chunk of stream as AsyncIterable<string>) {
    const text = rest + chunk;
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      yield text.slice(start, nl);
      start = nl + 1;
    }
    rest = text.slice(start);
  }
  if (rest !== '') yield rest;
}
