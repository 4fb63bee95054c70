import type { DomainFilters, DomainServiceApi, DomainSummary } from '../src/api/index.js';
import { PROFILE_TEXT_CHECK_MODULE } from '../src/api/profile-text-check.js';
import type { checkProfileText } from '../src/api/profile-text-check.js';
import { redactText } from '../src/log/redact.js';
import { finishBaseline } from '../src/mirror/store/baseline.js';
import { classifySummaries, markUnlisted } from '../src/mirror/store/domains.js';
import { openProfileWriter } from '../src/mirror/profile-writer.js';
import { textCheckExport } from '../src/mirror/profile-writer.js';
import type { ProfileWriter, ProfileWriterOptions, WriterFailure } from '../src/mirror/profile-writer.js';
import { listedDomainCount, listProfilesDue } from '../src/mirror/store/profiles-due.js';
import { getSyncState, scopeKeyFor, setSyncState } from '../src/mirror/store/sync-state.js';
import { PROGRESS_LOG_INTERVAL_MS, progressCadence } from '../src/runtime/progress.js';
import { TaskQueue } from '../src/runtime/queue.js';
import { buildIndexesSetAside, errorCode, runPipeline, runStatusForError } from '../src/runtime/run.js';
import type { RunContext } from '../src/runtime/run-context.js';
import type { ItemFailure, RunResult } from '../src/runtime/run-result.js';
import { isoFromMs, normalizeTimestamp } from '../src/util/time.js';
import { FingerprintSet } from '../src/util/fingerprint-set.js';
import { prepareFirstLoad } from './first-load.js';
import { SyncWrites } from './sync-writes.js';
import type { FirstLoad } from './first-load.js';

/** Options of {@link syncPipeline}; the CLI maps `sync`'s flags onto these. */
export interface SyncOptions {
  /** Canonical filter name → value (`--filter NAME=VALUE`); `page` is not allowed. @default {} */
  filters?: Readonly<Record<string, string | number | boolean>>;
  /** List everything and fetch every profile, ignoring the watermark. @default false */
  full?: boolean;
  /** Fetch profiles of new or changed domains; false stores the listing only. @default true */
  profiles?: boolean;
  /** Profile requests in flight. @default config.sync.concurrency ?? config.api.concurrency */
  concurrency?: number;
  /** Page size of the listing. @default config.sync.perPage (500) */
  perPage?: number;
  /** Listing passes at most when the catalogue moves under the cursor. @default 3 */
  maxPasses?: number;
  /** Profiles per write request to the mirror writer thread (sorted by domain there). @default 1000 */
  batchSize?: number;
}

/**
 * Counts of one sync run, stored in `pipeline_runs.stats` and printed in the summary; with what it
 * set up as the first load of an empty mirror ({@link FirstLoad}).
 */
export interface SyncStats extends FirstLoad {
  mode: 'full' | 'incremental';
  /** Why a full listing ran: `requested`, `first_run`, `count_mismatch`, or null. */
  fullListingReason: string | null;
  enrichedAfter: string | null;
  passes: number;
  pages: number;
  listed: number;
  new: number;
  changed: number;
  unchanged: number;
  /** Profiles fetched again because an earlier run could not (crash, failure, --no-profiles). */
  due: number;
  profilesFetched: number;
  profilesFailed: number;
  unlisted: number;
  driftDetected: boolean;
  watermark: string | null;
}

const PIPELINE = 'sync';
/** Profiles due from earlier runs read from the mirror at a time: a listing page's worth. */
const DUE_PAGE = 500;
/** Profiles per write request to the mirror writer thread, by default. */
export const PROFILE_BATCH_SIZE = 1000;

/**
 * `sync`: pages through `GET /domains`, stores every summary, fetches and upserts the profiles
 * of new or changed domains (0 credits), then advances the `enriched_after` watermark.
 *
 * Never throws for item failures (a profile that cannot be read is reported with its domain and
 * retried by the next run) nor for a 401 (status `stopped_by_service`, everything fetched so far
 * committed). The listing has no stable cursor (docs/service-api.md "Pagination"), so drift is
 * detected (a `total` that changes, a domain seen twice, fewer domains than `total`) and healed
 * by listing again; re-listing is cheap (0 credits, 500 per page) and profiles already fetched
 * are not refetched.
 */
export async function syncPipeline(
  ctx: RunContext,
  options: SyncOptions = {},
): Promise<RunResult<SyncStats>> {
  const stats: SyncStats = {
    mode: 'incremental',
    fullListingReason: null,
    enrichedAfter: null,
    passes: 0,
    pages: 0,
    listed: 0,
    new: 0,
    changed: 0,
    unchanged: 0,
    due: 0,
    profilesFetched: 0,
    profilesFailed: 0,
    unlisted: 0,
    driftDetected: false,
    watermark: null,
    indexesDeferred: 0,
    baseline: false,
  };
  return runPipeline(
    ctx,
    PIPELINE,
    // A sync is a bulk write: the mirror writes run on a writer thread (src/mirror/profile-writer.ts),
    // so fetching is not held up by them; that thread also does the WAL checkpoints. The context
    // may choose the calling thread instead (RunContext.openProfileWriter).
    async (run) => {
      // Into an empty mirror: indexes built after the load, and the load is the mirror's baseline.
      Object.assign(stats, prepareFirstLoad(run, 'sync'));
      const writer = await (run.ctx.openProfileWriter ?? openProfileWriter)(run.ctx.mirror, WRITER_OPTIONS);
      try {
        return await new SyncRun(run.ctx, run.id, run.startedAt, options, stats, writer).execute();
      } finally {
        try {
          await writer.close();
        } finally {
          // Normally built already (execute); this covers a run that threw before it got there.
          await buildIndexesSetAside(run.ctx);
        }
      }
    },
    () => stats,
  );
}

/**
 * The sync's writer reads each profile with the API client's own check: the main thread fetches
 * profiles as text and hands them on unparsed, so each is parsed once, on the writer's thread,
 * rather than on both threads (docs/benchmarks.md "sync"). A text the check refuses comes back
 * as that domain's failure with the client's ProtocolError code and message, and one that is not
 * JSON (retryable) is fetched again ({@link SyncRun.refetch}).
 */
const WRITER_OPTIONS: ProfileWriterOptions = {
  textCheck: textCheckExport<typeof checkProfileText>(PROFILE_TEXT_CHECK_MODULE, 'checkProfileText'),
};

class SyncRun {
  private readonly ctx: RunContext;
  private readonly api: DomainServiceApi;
  private readonly writes: SyncWrites;
  private readonly runId: number;
  private readonly startedAt: string;
  private readonly stats: SyncStats;
  private readonly scopeFilters: Record<string, string | number | boolean>;
  private readonly perPage: number;
  private readonly fetchProfiles: boolean;
  private readonly full: boolean;
  private readonly maxPasses: number;
  private readonly queue: TaskQueue;
  private readonly failures: ItemFailure[] = [];
  /**
   * Domains already queued in this run, so drift re-passes never fetch a profile twice. Kept as
   * fingerprints, not names, to hold memory down at a million domains: a false match (about 3 in
   * 100,000,000 at that size) leaves that profile due, for the next run, whose fingerprints differ.
   */
  private readonly queued = new FingerprintSet();
  /** Domains fetched again because the writer could not read their body, and how often. */
  private readonly refetches = new Map<string, number>();
  /** When to log progress (and save the run's stats): every few seconds from the start. */
  private readonly progressDue: () => boolean;
  private maxListedEnrichedAt: string | null = null;
  /** Set when the service stops us (401): no new work, finish and report. */
  private stopError: unknown;
  private readonly pagesTask;
  private readonly profilesTask;

  constructor(
    ctx: RunContext,
    runId: number,
    startedAt: string,
    options: SyncOptions,
    stats: SyncStats,
    writer: ProfileWriter,
  ) {
    this.ctx = ctx;
    this.api = ctx.api;
    this.runId = runId;
    this.startedAt = startedAt;
    this.stats = stats;
    const { page: _page, per_page: perPageFilter, ...scope } = options.filters ?? {};
    this.scopeFilters = scope;
    this.perPage =
      options.perPage ?? (perPageFilter === undefined ? ctx.config.sync.perPage : Number(perPageFilter));
    this.fetchProfiles = options.profiles ?? true;
    this.full = options.full ?? false;
    this.maxPasses = options.maxPasses ?? 3;
    this.writes = new SyncWrites(writer, {
      batchSize: options.batchSize ?? PROFILE_BATCH_SIZE,
      clock: ctx.clock,
      onRefused: (failure) => this.recordRefused(failure),
      onStop: (error) => this.noteStop(error),
    });
    const concurrency = options.concurrency ?? ctx.config.sync.concurrency ?? ctx.config.api.concurrency;
    this.queue = new TaskQueue({ concurrency, maxWaiting: Math.max(concurrency * 4, this.perPage) });
    this.progressDue = progressCadence(ctx.clock, PROGRESS_LOG_INTERVAL_MS, ctx.clock());
    this.pagesTask = ctx.progress.task('pages', 0, 'pages');
    this.profilesTask = ctx.progress.task('profiles', 0, 'profiles');
  }

  async execute() {
    const { ctx, stats } = this;
    const scopeKey = scopeKeyFor(this.scopeFilters);
    const state = getSyncState(ctx.mirror, PIPELINE, scopeKey);
    const userEnrichedAfter = this.scopeFilters.enriched_after;

    // Profiles an earlier run listed as changed but could not fetch (crash, item failure,
    // --no-profiles): fetched first, whatever this run's listing says.
    if (this.fetchProfiles && !this.full) await this.enqueueDue();

    let completeListing = false;
    try {
      if (this.full || !state?.watermark || userEnrichedAfter !== undefined) {
        stats.mode = 'full';
        stats.fullListingReason = this.full
          ? 'requested'
          : userEnrichedAfter !== undefined
            ? 'filter'
            : 'first_run';
        completeListing = await this.listUntilStable({});
      } else {
        const afterMs = Date.parse(state.watermark) - ctx.config.sync.overlapMs;
        stats.enrichedAfter = isoFromMs(afterMs);
        await this.listUntilStable({ enriched_after: stats.enrichedAfter });
        // An incremental listing cannot see a domain added with an old last_enriched_at, nor
        // one that disappeared. A 0-credit count check catches both and falls back to a full
        // listing when the mirror's count of the scope differs from the service's total.
        if (this.stopError === undefined && Object.keys(this.scopeFilters).length === 0) {
          const probe = await this.api.searchDomains({ page: 1, per_page: 1 }, { signal: ctx.signal });
          await this.writes.settle(); // the count reads the listing just written
          const known = listedDomainCount(ctx.mirror);
          if (probe.total !== known) {
            ctx.logger.info('count mismatch after incremental listing; listing everything', {
              serviceTotal: probe.total,
              mirrorListed: known,
            });
            stats.mode = 'full';
            stats.fullListingReason = 'count_mismatch';
            completeListing = await this.listUntilStable({});
          }
        }
      }
    } catch (error) {
      this.noteStop(error);
    }

    // Finish every profile already queued, even after a stop, so nothing fetched is lost. Every
    // write asked for is committed (or answered with a failure) before the run decides anything
    // from the mirror: unlisted domains, the watermark, the counts. A refused text may queue its
    // profile again (refetch), whose fetch may even finish while the writes settle, so this
    // repeats until nothing is queued and nothing fetched is left unsent.
    do {
      try {
        await this.queue.drain();
      } catch (error) {
        this.noteStop(error);
      }
      this.writes.sendBuffered();
      await this.writes.settle();
    } while (this.queue.load > 0 || this.writes.buffered > 0);
    this.pagesTask.done();
    this.profilesTask.done();
    // With the writer idle: the queries below use the indexes a first sync set aside.
    await buildIndexesSetAside(ctx);

    const stopped = this.stopError !== undefined;
    if (!stopped) {
      if (completeListing && stats.mode === 'full' && !stats.driftDetected) {
        stats.unlisted = markUnlisted(ctx.mirror, this.scopeFilters, {
          listedAt: isoFromMs(ctx.clock()),
          runStartedAt: this.startedAt,
        }).marked;
      }
      // The baseline ends with the first run that fetched profiles and was not stopped: the
      // profiles a stopped run did not fetch are fetched by the next one, still in the baseline
      // (a profile that failed is fetched by a later run, and logged as added then).
      if (stats.baseline && this.fetchProfiles) finishBaseline(ctx.mirror, isoFromMs(ctx.clock()));
      // The watermark advances only now, after every row it covers is committed.
      // It is the service's own last_enriched_at, so our clock's skew does not matter.
      const watermark = maxIso(state?.watermark ?? null, this.maxListedEnrichedAt);
      stats.watermark = watermark;
      if (userEnrichedAfter === undefined) {
        setSyncState(ctx.mirror, {
          pipeline: PIPELINE,
          scopeKey,
          filters: this.scopeFilters,
          watermark,
          cursor: null,
          pipelineRunId: this.runId,
          updatedAt: isoFromMs(ctx.clock()),
        });
      }
    }
    stats.profilesFailed = this.failures.length;
    const error = stopped ? this.stopError : undefined;
    if (error !== undefined) {
      // A stop keeps this run's stats and item failures, so it is returned rather than thrown.
      const status = runStatusForError(error);
      if (status === 'failed') throw error;
      return { status, stats, failures: this.failures, creditsSpent: 0, error: describe(error) };
    }
    return { status: 'done' as const, stats, failures: this.failures, creditsSpent: 0 };
  }

  /**
   * Lists the scope (plus `extra` filters) until a pass sees a stable catalogue, at most
   * `maxPasses` times. Returns true when the last pass was complete and drift-free.
   */
  private async listUntilStable(extra: Record<string, string>): Promise<boolean> {
    for (let pass = 1; pass <= this.maxPasses; pass++) {
      const clean = await this.listOnce(extra);
      if (clean) return true;
      this.stats.driftDetected = true;
      if (this.stopError !== undefined) return false;
      this.ctx.logger.warn('listing drift detected; listing again', { pass });
    }
    this.ctx.logger.warn('catalogue kept changing while listing; some domains may wait for the next run', {
      passes: this.maxPasses,
    });
    return false;
  }

  /** One pass over every page. Returns true when nothing moved under the cursor. */
  private async listOnce(extra: Record<string, string>): Promise<boolean> {
    const { ctx, stats } = this;
    stats.passes += 1;
    // Fingerprints, as `queued`: a false match counts as drift, and the next pass (or run), whose
    // fingerprints differ, lists that domain.
    const seen = new FingerprintSet();
    let drift = false;
    let lastTotal = 0;
    const filters = { ...this.scopeFilters, ...extra } as DomainFilters;
    for await (const page of this.api.iterateDomainPages(filters, {
      perPage: this.perPage,
      signal: ctx.signal,
    })) {
      if (this.stopError !== undefined) return false;
      stats.pages += 1;
      lastTotal = page.total;
      if (page.requestedPage === 1) this.pagesTask.setTotal(Math.ceil(page.total / this.perPage));
      this.pagesTask.increment();
      if (page.totalChanged) drift = true;
      const fresh: DomainSummary[] = [];
      for (const summary of page.domains) {
        if (seen.add(summary.domain_normalized)) fresh.push(summary);
        else drift = true;
      }
      this.handlePage(fresh);
      this.maybeLogProgress();
      await this.queue.waitForRoom();
    }
    if (seen.size < lastTotal) drift = true;
    return !drift;
  }

  private handlePage(summaries: DomainSummary[]): void {
    const { ctx, stats } = this;
    if (summaries.length === 0) return;
    // Validates every summary (a bad timestamp throws here, before anything is written).
    const classes = classifySummaries(ctx.mirror, summaries);
    this.writes.summaries(summaries);
    stats.listed += summaries.length;
    stats.new += classes.new.length;
    stats.changed += classes.changed.length;
    stats.unchanged += classes.unchanged.length;
    for (const summary of summaries) {
      const at = summary.last_enriched_at ? normalizeTimestamp(summary.last_enriched_at) : null;
      if (at !== null && (this.maxListedEnrichedAt === null || at > this.maxListedEnrichedAt))
        this.maxListedEnrichedAt = at;
    }
    if (!this.fetchProfiles) return;
    const wanted = this.full ? summaries : [...classes.new, ...classes.changed];
    for (const summary of wanted) this.enqueueProfile(summary.domain_normalized);
  }

  /**
   * Queues the profiles due from earlier runs, read from the mirror a page at a time and queued
   * as the queue has room: after `--no-profiles` on a large catalogue every domain is due, and a
   * sync that read and queued a million at once peaked about 200 MB higher (docs/benchmarks.md
   * "sync").
   */
  private async enqueueDue(): Promise<void> {
    let after: string | undefined;
    for (;;) {
      const page = listProfilesDue(this.ctx.mirror, { limit: DUE_PAGE, after });
      this.stats.due += page.length;
      for (const domain of page) this.enqueueProfile(domain);
      if (page.length < DUE_PAGE || this.stopError !== undefined || this.ctx.signal.aborted) return;
      after = page[page.length - 1];
      this.maybeLogProgress();
      await this.queue.waitForRoom();
    }
  }

  private enqueueProfile(domain: string): void {
    if (this.stopError !== undefined || !this.queued.add(domain)) return;
    this.profilesTask.setTotal(this.queued.size);
    this.queue.add(() => this.fetchProfile(domain));
  }

  /**
   * Fetches a profile as the text of its body and buffers it for the writer, which parses and
   * checks it (WRITER_OPTIONS); a failure is this domain's, unless it stops the run.
   */
  private async fetchProfile(domain: string): Promise<void> {
    if (this.stopError !== undefined || this.ctx.signal.aborted) return;
    try {
      const text = await this.api.getDomainText(domain, { signal: this.ctx.signal });
      this.writes.profile(domain, text);
      this.stats.profilesFetched += 1;
      if (!this.refetches.has(domain)) this.profilesTask.increment();
      // Fetching must not outrun writing: this task's slot is held until the writer has room.
      await this.writes.waitForRoom();
    } catch (error) {
      // An abort or a stop by the service (401) ends the run; anything else is this item's.
      if (runStatusForError(error) !== 'failed') {
        this.noteStop(error);
        return;
      }
      // One bad profile (404 between listing and fetch, a body cut short every time, a server
      // that keeps failing) is an item failure: reported with its domain, retried by the next run.
      // A body that arrives whole but is not the profile is the writer's to refuse (recordRefused).
      this.recordFailure(domain, errorCode(error), error instanceof Error ? error.message : String(error));
    }
  }

  /**
   * Fetches `domain`'s profile again when the writer found its body was not JSON: a transport
   * fault (a body cut short with a consistent length, garbled bytes) that the client retries when
   * it parses a body itself, as `getDomain` does. At most `api.maxRetries` times per domain, as
   * the client would; false when those are spent or the run is stopping, and the text's failure
   * stands. The fetch joins the end of the queue, behind the profiles already waiting.
   */
  private refetch(domain: string): boolean {
    const done = this.refetches.get(domain) ?? 0;
    if (done >= this.ctx.config.api.maxRetries || this.stopError !== undefined || this.ctx.signal.aborted)
      return false;
    this.refetches.set(domain, done + 1);
    this.ctx.logger.debug('profile body not readable; fetching it again', { domain, attempt: done + 2 });
    this.queue.add(() => this.fetchProfile(domain));
    return true;
  }

  /**
   * A profile the mirror refused (a bad timestamp, a missing key, a body the client's check
   * refused) is an item failure, by domain; one whose body was not JSON is fetched again.
   */
  private recordRefused(failure: WriterFailure): void {
    this.stats.profilesFetched -= 1;
    if (failure.retryable === true && this.refetch(failure.item)) return;
    this.recordFailure(failure.item, failure.code, failure.message);
  }

  /** A profile not mirrored: kept for the summary (message redacted) and logged by domain. */
  private recordFailure(domain: string, code: string, message: string): void {
    this.failures.push({ item: domain, code, message: redactText(message) });
    this.ctx.logger.warn('profile not mirrored', { domain, code });
  }

  private noteStop(error: unknown): void {
    if (this.stopError === undefined) {
      this.stopError = error;
      this.queue.clear();
    }
  }

  private maybeLogProgress(): void {
    if (!this.progressDue()) return;
    const { pages, listed, profilesFetched } = this.stats;
    this.ctx.logger.info('sync progress', {
      pages,
      listed,
      profilesFetched,
      queued: this.queue.load,
      failed: this.failures.length,
    });
    this.writes.runStats(this.runId, { ...this.stats });
  }
}

function maxIso(a: string | null, b: string | null): string | null {
  if (a === null) return b;
  if (b === null) return a;
  return a > b ? a : b;
}

function describe(error: unknown): { code: string; message: string } {
  return {
    code: errorCode(error),
    message: redactText(error instanceof Error ? error.message : String(error)),
  };
}
