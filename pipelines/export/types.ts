import type { AllowanceState, AllowanceStatus } from '../../src/runtime/allowance.js';
import type { ExportFormat } from '../../src/api/index.js';
import type { RunContext } from '../../src/runtime/run-context.js';
import type { FirstLoad } from '../first-load.js';

/** Options of the export pipeline (`exportPipeline`); the CLI maps `export`'s flags onto these. */
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
  /** Rows per batch of the load, each in a savepoint. @default LOAD_BATCH_ROWS (load.ts) */
  batchSize?: number;
  /** Attempts of a download that breaks off (downloads are free). @default 5 */
  downloadAttempts?: number;
}

/**
 * Counts and facts of one export run, stored in `pipeline_runs.stats` and printed; with what its
 * load set up as the first load of an empty mirror ({@link FirstLoad}).
 */
export interface ExportStats extends FirstLoad {
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
  /** The credit allowances when the estimate was checked (null: none configured). */
  allowance: AllowanceStatus | null;
  /** The allowance that refused the export, with a sentence for people, or null. */
  stoppedByAllowance: (AllowanceState & { message: string }) | null;
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
  /**
   * Whether the file was loaded in one read, each row checked as it was written (into an empty
   * mirror: pipelines/export/load.ts); otherwise it was checked whole first.
   */
  onePass: boolean;
  /** Columns (or NDJSON keys) we do not map, kept in `domains.profile_extra`. */
  unknownColumns: string[];
  filesRemoved: number;
}

/** A fresh {@link ExportStats}: nothing done yet. */
export function newExportStats(format: ExportFormat, paramsHash: string): ExportStats {
  return {
    exportId: null,
    mode: 'none',
    format,
    paramsHash,
    matchingDomains: null,
    creditsPerRow: null,
    priceSource: null,
    estimatedCredits: null,
    availableCredits: null,
    allowance: null,
    stoppedByAllowance: null,
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
    onePass: false,
    unknownColumns: [],
    indexesDeferred: 0,
    baseline: false,
    filesRemoved: 0,
  };
}

/** What the parts of one export run (run, transfer, load, retention) share. */
export interface ExportScope {
  readonly ctx: RunContext;
  /** This run's `pipeline_runs.id`. */
  readonly runId: number;
  readonly stats: ExportStats;
  /** Our clock, as ISO text. */
  now(): string;
  /** An info line at most every few seconds: progress of long polls, downloads and loads. */
  progressLog(message: string, fields: Record<string, unknown>): void;
}
