import type { Catalogue } from './catalogue.js';
import { unitFor } from './catalogue.js';
import type { DomainFilters } from './filters.js';
import type { Ledger } from './ledger.js';
import type { SectionName, TruthProfile, UsageEntry } from './types.js';

/** Credits reserved by a new enrichment run (docs/service-api.md "POST /enrichments"). */
export const ENRICHMENT_CREDITS = 10;

const SALT_RUN_DURATION = 101;
const SALT_RUN_FAIL = 102;
const SALT_RUN_ERROR = 103;

/** An enrichment run as the simulator keeps it. */
export interface RunRecord {
  id: number;
  domain: string;
  domainId: number;
  strategy: string;
  startedMs: number;
  dueMs: number;
  status: 'pending' | 'completed' | 'failed';
  willFail: boolean;
  completedMs: number | null;
  lastEnrichedAt: string | null;
  error: { error: string; error_type: string } | null;
  /** The POST's usage entry, so a refund can be noted on it. */
  usage?: UsageEntry;
}

/** An export as the simulator keeps it. */
export interface ExportRecord {
  id: number;
  format: 'csv' | 'json';
  filters: DomainFilters;
  fields: SectionName[];
  createdMs: number;
  readyMs: number;
  cost: number;
  status: 'pending' | 'completed';
  completedMs: number | null;
  expiresMs: number | null;
  /** Snapshot at completion: matching ids and the overlay of mutated profiles. */
  ids: Int32Array | null;
  snapshot: Map<number, TruthProfile> | null;
}

/** Settings of {@link Jobs}. */
export interface JobsOptions {
  seed: number;
  quirks: boolean;
  timeScale: number;
  runFailureRate: number;
  /** Shortest and longest run before timeScale. */
  runDurationMs: readonly [number, number];
  exportReadyMs: number;
  exportTtlMs: number;
}

/**
 * Enrichment runs and exports. Nothing runs on timers: {@link Jobs.tick} settles every job whose
 * due time has passed on the simulator clock, and every request and control call ticks first,
 * so `advanceClock` and real time behave the same and results are deterministic.
 */
export class Jobs {
  readonly runs = new Map<number, RunRecord>();
  readonly exports = new Map<number, ExportRecord>();
  private nextRunId = 1;
  private nextExportId = 1;
  // tick() runs before every request; scanning only unsettled jobs keeps a request's cost flat
  // after thousands of enrichment runs. Insertion order matches the maps', so ties settle alike.
  private readonly pendingRuns = new Set<RunRecord>();
  private readonly pendingExports = new Set<ExportRecord>();

  private readonly options: JobsOptions;
  private readonly catalogue: Catalogue;
  private readonly ledger: Ledger;

  constructor(options: JobsOptions, catalogue: Catalogue, ledger: Ledger) {
    this.options = options;
    this.catalogue = catalogue;
    this.ledger = ledger;
  }

  /**
   * Starts a run whose credits are already reserved. It lasts `runDurationMs` (by default the
   * service's 30–120 s, docs/service-api.md "Limits and credits") × timeScale.
   */
  startRun(domainId: number, domain: string, strategy: string, nowMs: number): RunRecord {
    const id = this.nextRunId++;
    const [shortest, longest] = this.options.runDurationMs;
    const durationMs =
      (shortest + unitFor(this.options.seed, SALT_RUN_DURATION, id) * (longest - shortest)) *
      this.options.timeScale;
    const run: RunRecord = {
      id,
      domain,
      domainId,
      strategy,
      startedMs: nowMs,
      dueMs: nowMs + Math.round(durationMs),
      status: 'pending',
      willFail: unitFor(this.options.seed, SALT_RUN_FAIL, id) < this.options.runFailureRate,
      completedMs: null,
      lastEnrichedAt: null,
      error: null,
    };
    this.runs.set(id, run);
    this.pendingRuns.add(run);
    return run;
  }

  /** Creates an export whose cost is already reserved. */
  createExport(
    input: { format: 'csv' | 'json'; filters: DomainFilters; fields: SectionName[]; cost: number },
    nowMs: number,
  ): ExportRecord {
    const record: ExportRecord = {
      id: this.nextExportId++,
      ...input,
      createdMs: nowMs,
      readyMs: nowMs + Math.round(this.options.exportReadyMs * this.options.timeScale),
      status: 'pending',
      completedMs: null,
      expiresMs: null,
      ids: null,
      snapshot: null,
    };
    this.exports.set(record.id, record);
    this.pendingExports.add(record);
    return record;
  }

  /** Settles every run and export due at or before `nowMs`, in due order. */
  tick(nowMs: number): void {
    if (this.pendingRuns.size === 0 && this.pendingExports.size === 0) return;
    const due: Array<{ at: number; apply: () => void }> = [];
    for (const run of this.pendingRuns) {
      if (run.dueMs <= nowMs) due.push({ at: run.dueMs, apply: () => this.finishRun(run) });
    }
    for (const record of this.pendingExports) {
      if (record.readyMs <= nowMs) due.push({ at: record.readyMs, apply: () => this.finishExport(record) });
    }
    due.sort((a, b) => a.at - b.at);
    for (const job of due) job.apply();
  }

  private finishRun(run: RunRecord): void {
    this.pendingRuns.delete(run);
    run.completedMs = run.dueMs;
    if (run.willFail) {
      run.status = 'failed';
      // A failed run gives its reservation back (docs/simulator.md "GET /enrichment_runs/:id").
      this.ledger.release(ENRICHMENT_CREDITS);
      if (run.usage) run.usage.refundedCredits = ENRICHMENT_CREDITS;
      run.error = this.errorFor(run.id);
      return;
    }
    run.status = 'completed';
    this.ledger.settle(ENRICHMENT_CREDITS);
    const at = new Date(run.dueMs).toISOString();
    run.lastEnrichedAt = at;
    if (this.catalogue.isListed(run.domainId)) reconfirm(this.catalogue, run.domainId, at);
  }

  private errorFor(id: number): { error: string; error_type: string } {
    const errors = [
      { error_type: 'timeout', error: 'Enrichment timed out after 120 seconds' },
      { error_type: 'provider_error', error: 'Upstream data provider returned an error' },
      { error_type: 'dns_error', error: 'Domain did not resolve' },
    ];
    // 'timeout' is the only error_type the spec shows; quirks mode adds unseen ones.
    if (!this.options.quirks) return errors[0] as { error: string; error_type: string };
    return errors[Math.floor(unitFor(this.options.seed, SALT_RUN_ERROR, id) * errors.length)] as {
      error: string;
      error_type: string;
    };
  }

  private finishExport(record: ExportRecord): void {
    this.pendingExports.delete(record);
    record.status = 'completed';
    record.completedMs = record.readyMs;
    record.expiresMs = record.readyMs + this.options.exportTtlMs;
    // "Data is a snapshot as of completion": freeze the matching ids and the overlay.
    record.ids = this.catalogue.list(record.filters).slice();
    record.snapshot = this.catalogue.overlaySnapshot();
    this.ledger.settle(record.cost);
  }
}

/** What a completed enrichment does to a domain: `last_enriched_at` and every confirmation = `at`. */
export function reconfirm(catalogue: Catalogue, id: number, at: string): void {
  catalogue.update(id, (p) => ({
    ...p,
    last_enriched_at: at,
    licenses: p.licenses.map((l) => ({ ...l, last_confirmed_at: at })),
    payment_methods: p.payment_methods.map((m) => ({ ...m, last_confirmed_at: at })),
  }));
}
