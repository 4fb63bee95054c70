import type { CanonicalFilter } from './defaults.js';
import type { LogLevel } from '../log/logger.js';
import type { DestinationConfig } from './destinations.js';

/** One step of a named pipeline, normalised. */
export interface PipelineStepConfig {
  type: 'sync' | 'export' | 'enrich' | 'snapshot' | 'publish';
  /** Step options as given in the config (validated by the step when it runs). */
  options: Readonly<Record<string, unknown>>;
  /** Keep running the next steps when this one fails. @default false */
  continueOnError: boolean;
}

/** A named pipeline (`run NAME`, `schedule`). */
export interface PipelineConfig {
  steps: readonly PipelineStepConfig[];
  /** Cron expression, or null for "run by hand only". */
  schedule: string | null;
  /** IANA time zone of the cron expression. @default the machine's */
  timezone: string | null;
  /**
   * What `schedule` does at start when a scheduled time passed while it was not running:
   * `none` waits for the next time; `once` runs the pipeline once right away. @default 'none'
   */
  catchUp: 'none' | 'once';
}

/**
 * Service connection settings. Never holds the API key: the key goes from `DOMAIN_SYNC_API_KEY`
 * straight into the client's options, so a {@link Config} is safe to log.
 */
export interface ApiConfig {
  /** Base URL ending in `/api/v1/igaming`, or null when not configured. */
  baseUrl: string | null;
  /** @default 30000 */
  timeoutMs: number;
  /** Retries of a safe request. @default 5 */
  maxRetries: number;
  /** Requests in flight at most. @default 8 */
  concurrency: number;
  /** Client-side rate limit. @default 10 */
  requestsPerSecond: number;
  /** First poll interval for runs and exports. @default 5000 */
  pollIntervalMs: number;
  /** Which header carries the key. @default 'x-api-key' */
  authHeader: 'x-api-key' | 'bearer';
  /** Canonical filter name → wire name; identity for names not listed. */
  queryParams: Readonly<Partial<Record<CanonicalFilter, string>>>;
}

/** The loaded, normalised and frozen configuration. Safe to log: it holds no secret. */
export interface Config {
  api: Readonly<ApiConfig>;
  database: Readonly<{ path: string }>;
  /**
   * Export settings: `dir` for the files; `creditsPerRowGuess` prices an export before any was
   * made (@default 1); `pollDeadlineMs` bounds the wait for one (@default 30m); `retentionMs`
   * keeps a loaded file this long past its `expires_at` before it is deleted (@default 7d).
   */
  exports: Readonly<{ dir: string; creditsPerRowGuess: number; pollDeadlineMs: number; retentionMs: number }>;
  /** `to`: names of the s3 destinations every snapshot is also uploaded to. @default [] */
  snapshots: Readonly<{ dir: string; retainDates: number; to: readonly string[] }>;
  sync: Readonly<{ perPage: number; overlapMs: number; concurrency: number | null }>;
  enrich: Readonly<{
    budget: number;
    staleAfterMs: number;
    concurrency: number;
    strategy: string;
    waitMs: number;
    /** A domain whose run failed is not retried before this much time has passed. @default 24h */
    failureBackoffMs: number;
    /** Longest wait between two polls of a run (runs take 30–120 s). @default 30000 */
    maxPollIntervalMs: number;
  }>;
  /** `file`: JSON log lines go to this file (appended) instead of stderr. @default null */
  log: Readonly<{ level: LogLevel; file: string | null }>;
  /**
   * The mirror lock (docs/operations.md): `leaseMs` is how long a holder that stopped renewing
   * keeps it (@default 60s; renewed every quarter of it); `waitMs` is how long a writing command
   * waits for a lock held by another process before it fails with ERR_LOCKED (@default 0).
   */
  lock: Readonly<{ leaseMs: number; waitMs: number }>;
  /**
   * Allowances across every run and process sharing the mirror, per UTC calendar day and month
   * (docs/credits.md); null is no allowance. @default null, null
   */
  credits: Readonly<{ maxPerDay: number | null; maxPerMonth: number | null }>;
  /** `destinations.NAME`, normalised (docs/destinations.md). Holds no secret. */
  destinations: Readonly<Record<string, Readonly<DestinationConfig>>>;
  pipelines: Readonly<Record<string, Readonly<PipelineConfig>>>;
  /** The config file that was read, or null when only defaults/env/flags were used. */
  sourcePath: string | null;
}
