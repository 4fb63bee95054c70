import type { DomainFilters, DomainServiceApi, ExportFormat, ExportInfo } from '../../src/api/index.js';
import { redactText } from '../../src/log/redact.js';
import { recordAccountSnapshot, recordCredits } from '../../src/mirror/store/credits.js';
import {
  findUnfinishedExport,
  getExport as getStoredExport,
  latestExportWithParams,
  learnedExportCreditsPerRow,
  upsertExport,
} from '../../src/mirror/store/exports.js';
import type { ExportRecord } from '../../src/mirror/store/exports.js';
import { throttledProgressLog } from '../../src/runtime/progress.js';
import { errorCode, runPipeline } from '../../src/runtime/run.js';
import type { RunContext } from '../../src/runtime/run-context.js';
import type { RunResult } from '../../src/runtime/run-result.js';
import { AbortedError } from '../../src/util/domain-sync-error.js';
import { isoFromMs } from '../../src/util/time.js';
import { ExportError } from './errors.js';
import {
  checkEstimate,
  decideUnknownOutcome,
  expiredMessage,
  expiredRefusal,
  exportParamsHash,
  pricePerRow,
} from './estimate.js';
import {
  allowanceMessage,
  hasAllowance,
  readAllowance,
  reserveWithinAllowance,
  type AllowanceState,
} from '../../src/runtime/allowance.js';
import { clearIntent, readIntent, saveIntent, type ExportIntent } from './intent.js';
import { applyRetention, LOAD_BATCH_ROWS, loadExportFile } from './load.js';
import { pollAndDownload, verifiedFile } from './transfer.js';
import { newExportStats, type ExportOptions, type ExportScope, type ExportStats } from './types.js';

/*
 * `export`: POST /exports → poll → stream the file to exports.dir → load it into the mirror
 * (docs/service-api.md, the exports endpoints). The how and why for users is in docs/exports.md;
 * the decisions that matter for correctness:
 *
 * - Credits are spent only by the POST. Its intent (the parameters' hash and the account's
 *   credits before it) is saved in sync_state before it is sent (intent.ts), and the export id in
 *   `exports` right after the 202, before polling. A re-run with the same parameters therefore
 *   resumes the export; a POST whose outcome is unknown is reconciled from the account, never
 *   re-sent blindly (estimate.ts decides, this file acts).
 * - Loading validates the whole file first and then upserts it in batches (load.ts).
 */

const PIPELINE = 'export';

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
  const stats = newExportStats(format, exportParamsHash({ filters, format, fields }));
  return runPipeline(
    ctx,
    PIPELINE,
    (run) => new ExportRun(run.ctx, run.id, { ...options, filters, format, fields }, stats).execute(),
    () => stats,
  );
}

/** How a run that did not throw ended. */
type Settled = {
  status: 'budget_reached' | 'done';
  stats: ExportStats;
  failures: [];
  creditsSpent: number;
  error?: { code: string; message: string };
};

/** The export's options once the format and the filters are settled. */
type ExportRunOptions = ExportOptions & {
  format: ExportFormat;
  filters: Record<string, string | number | boolean>;
};

/**
 * One run's state machine: resume the unfinished export with the same parameters, or check and
 * create one; then poll and download until there is a verified file (creating a new export when
 * the file expired and `recreateExpired` allows it); then load it. Retention runs at the end,
 * whatever happened.
 */
class ExportRun {
  private readonly api: DomainServiceApi;
  private readonly filters: Record<string, string | number | boolean>;
  private readonly format: ExportFormat;
  private readonly fields: string[] | undefined;
  private readonly scope: ExportScope;
  /** `credits_used + credits_reserved` read before creating: saved with the POST's intent. */
  private creditsSpentBefore: number | null = null;
  private creditsSpentThisRun = 0;

  private readonly ctx: RunContext;
  private readonly runId: number;
  private readonly options: ExportRunOptions;
  private readonly stats: ExportStats;

  // Fields assigned one by one, as in every class here: tsconfig's erasableSyntaxOnly rules out
  // constructor parameter properties, so constructors look alike by design.
  constructor(ctx: RunContext, runId: number, options: ExportRunOptions, stats: ExportStats) {
    this.ctx = ctx;
    this.runId = runId;
    this.options = options;
    this.stats = stats;
    this.api = ctx.api;
    this.filters = options.filters;
    this.format = options.format;
    this.fields = options.fields === undefined ? undefined : [...options.fields];
    this.scope = {
      ctx,
      runId,
      stats,
      now: () => this.now(),
      progressLog: throttledProgressLog(ctx.logger, ctx.clock),
    };
  }

  private now(): string {
    return isoFromMs(this.ctx.clock());
  }

  async execute(): Promise<Settled> {
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
        const created = await this.create();
        if ('stats' in created) return created;
        record = created;
      }
      return await this.finish(record);
    } finally {
      await applyRetention(this.scope);
    }
  }

  /**
   * Before paying: an earlier expired export needs --recreate-expired, an earlier POST with an
   * unknown outcome must be reconciled, and the estimate must fit --max-credits and the account.
   */
  private async checkBeforeCreating(): Promise<Settled | undefined> {
    const { ctx, stats } = this;
    const latest = latestExportWithParams(ctx.mirror, stats.paramsHash);
    const expired = expiredRefusal(
      latest && {
        id: latest.id,
        loadedAt: latest.loaded_at,
        downloadStatus: latest.download_status,
        expiresAt: latest.expires_at,
      },
      this.options.recreateExpired === true,
    );
    if (expired !== null) {
      stats.exportId = latest!.id;
      throw new ExportError('ERR_EXPORT_EXPIRED', expired);
    }
    const intent = readIntent(ctx.mirror, stats.paramsHash);
    const account = await this.api.getAccount({ signal: ctx.signal });
    recordAccountSnapshot(ctx.mirror, account, { at: this.now(), pipelineRunId: this.runId });
    const spentNow = account.credits_used + account.credits_reserved;
    const unknown = decideUnknownOutcome(intent, spentNow, this.options.forgetUnknown === true);
    if (unknown.kind === 'not_billed') {
      ctx.logger.info('earlier POST /exports with an unknown outcome was not billed; creating the export', {
        requestedAt: unknown.requestedAt,
      });
    } else if (unknown.kind === 'forgotten') {
      ctx.logger.warn('forgetting an earlier POST /exports whose outcome is unknown (--forget-unknown)', {
        requestedAt: unknown.requestedAt,
      });
    } else if (unknown.kind === 'refuse') {
      throw new ExportError('ERR_OUTCOME_UNKNOWN', unknown.message);
    }

    const probe = await this.api.searchDomains(
      { ...(this.filters as DomainFilters), per_page: 1 },
      { signal: ctx.signal },
    );
    const price = pricePerRow(learnedExportCreditsPerRow(ctx.mirror), ctx.config.exports.creditsPerRowGuess);
    stats.matchingDomains = probe.total;
    stats.creditsPerRow = price.creditsPerRow;
    stats.priceSource = price.priceSource;
    stats.availableCredits = account.credits_granted === null ? null : account.available_credits;
    const { maxCredits } = this.options;
    if (hasAllowance(ctx.config.credits)) {
      stats.allowance = readAllowance(ctx.mirror, ctx.config.credits, ctx.clock());
    }
    const decision = checkEstimate({
      matchingDomains: probe.total,
      ...price,
      maxCredits,
      availableCredits: stats.availableCredits,
      allowance: stats.allowance,
    });
    stats.estimatedCredits = decision.estimatedCredits;
    if (decision.kind === 'over_max_credits') {
      ctx.logger.warn('export refused: estimate over --max-credits', {
        estimate: stats.estimatedCredits,
        maxCredits,
      });
      return {
        status: 'budget_reached' as const,
        stats,
        failures: [],
        creditsSpent: 0,
        error: { code: 'ERR_OVER_MAX_CREDITS', message: decision.message },
      };
    }
    if (decision.kind === 'over_allowance') return this.refusedByAllowance(decision.stoppedBy);
    if (decision.kind === 'insufficient_credits') {
      throw new ExportError('ERR_INSUFFICIENT_CREDITS', decision.message);
    }
    // Remembered for the POST's intent: an unchanged used+reserved later proves it was not billed.
    this.creditsSpentBefore = spentNow;
    return undefined;
  }

  /** The export does not fit an allowance: nothing is spent, and the run ends like a budget stop. */
  private refusedByAllowance(state: AllowanceState): Settled {
    const { stats } = this;
    const cost = stats.estimatedCredits ?? 0;
    const message = `estimated cost ${cost} credits: ${allowanceMessage(state, cost)}; nothing was spent`;
    stats.stoppedByAllowance = { ...state, message };
    this.ctx.logger.warn('export refused: estimate over a credit allowance', {
      estimate: cost,
      allowance: state,
    });
    return {
      status: 'budget_reached' as const,
      stats,
      failures: [],
      creditsSpent: 0,
      error: { code: 'ERR_OVER_ALLOWANCE', message },
    };
  }

  private saveIntent(intent: ExportIntent): void {
    saveIntent(this.ctx.mirror, this.stats.paramsHash, intent, {
      params: { filters: this.filters, format: this.format, fields: this.fields },
      pipelineRunId: this.runId,
      at: this.now(),
    });
  }

  /** POST /exports with the intent saved first and the id saved right after the 202. */
  /** Returns the created export's row, or the run's end when an allowance refuses it. */
  private async create(): Promise<ExportRecord | Settled> {
    const { ctx, stats } = this;
    const requestedAt = this.now();
    // The intent is what other processes count as in flight: saved only if the estimate still
    // fits the allowances, in one write transaction with the check.
    const reserved = reserveWithinAllowance(
      ctx.mirror,
      ctx.config.credits,
      ctx.clock(),
      stats.estimatedCredits ?? 0,
      () =>
        this.saveIntent({
          state: 'requested',
          requestedAt,
          creditsSpentBefore: this.creditsSpentBefore,
          estimatedCredits: stats.estimatedCredits,
        }),
    );
    if (!reserved.ok) return this.refusedByAllowance(reserved.stoppedBy);
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
      clearIntent(ctx.mirror, stats.paramsHash);
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
  private async finish(initial: ExportRecord): Promise<Settled> {
    const { ctx, stats } = this;
    let record = initial;
    stats.exportId = record.id;
    for (;;) {
      const file = await verifiedFile(this.scope, record);
      if (file === null) {
        const outcome = await pollAndDownload(this.scope, record, {
          downloadAttempts: this.options.downloadAttempts ?? 5,
          settle: (info) => this.settleCredits(info),
        });
        if (outcome.kind === 'expired') {
          if (!this.options.recreateExpired)
            throw new ExportError('ERR_EXPORT_EXPIRED', expiredMessage(record.id, outcome.expiresAt));
          // Never silently: the user asked for it, and the estimate checks run again.
          ctx.logger.warn('export file expired; creating a new export (--recreate-expired, costs credits)', {
            exportId: record.id,
          });
          const refusal = await this.checkBeforeCreating();
          if (refusal !== undefined) return refusal;
          const created = await this.create();
          if ('stats' in created) return created;
          record = created;
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
    await loadExportFile(this.scope, record, this.options.batchSize ?? LOAD_BATCH_ROWS);
    return this.done();
  }

  private done(): Settled {
    return {
      status: 'done' as const,
      stats: this.stats,
      failures: [],
      creditsSpent: this.creditsSpentThisRun,
    };
  }

  /** Records the billed credits once per export (entry key `export:<id>`) with the estimate. */
  private settleCredits(info: ExportInfo): void {
    const { ctx, stats } = this;
    const intent = readIntent(ctx.mirror, stats.paramsHash);
    const ours = intent?.state === 'created' && intent.exportId === info.id;
    const estimate = ours ? intent.estimatedCredits : stats.estimatedCredits;
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
    if (ours) clearIntent(ctx.mirror, stats.paramsHash);
  }
}
