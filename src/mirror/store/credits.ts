import type { Selectable } from 'kysely';
import { cachedStatement, inTransaction } from '../database.js';
import type { Mirror } from '../database.js';
import type { AccountInput } from '../inputs.js';
import type { AccountSnapshotsTable } from '../schema.js';
// The same column converters as store/enrichment.ts imports: a shared import list, not shared logic.
import {
  integerColumn,
  jsonColumn,
  keyColumn,
  requiredInteger,
  requiredTimestamp,
  textColumn,
  timestampColumn,
} from './values.js';

/** Known ledger operations; any other string is accepted too. */
export type CreditOperation = 'enrichment' | 'enrichment_cached' | 'export' | (string & {});

/** One credit-ledger entry to record. */
export interface CreditEntryInput {
  /** When the credits were spent (any ISO 8601 spelling). */
  at: string;
  operation: CreditOperation;
  /** Credits actually billed (0 for a cached enrichment). */
  credits: number | bigint;
  /** What the budget reserved for it. @default null */
  estimatedCredits?: number | bigint | null;
  /** @default null */
  pipelineRunId?: number | null;
  /** @default null */
  domain?: string | null;
  /** Service export id. @default null */
  exportId?: number | bigint | null;
  /** Service enrichment run id. @default null */
  runId?: number | bigint | null;
  /**
   * Idempotency key, e.g. `enrichment_run:123`: a second entry with the same key is ignored, so a
   * restart that settles the same call again does not count it twice. @default null (no dedupe)
   */
  entryKey?: string | null;
  /** @default null */
  note?: string | null;
}

/** Result of {@link recordCredits}. */
export interface RecordCreditsResult {
  /** False when an entry with the same `entryKey` already existed. */
  recorded: boolean;
  /** Id of the new ledger row, or `null` when not recorded. */
  id: number | null;
}

/**
 * Appends a ledger entry and, in the same transaction, adds its credits to the pipeline run's
 * `credits_spent`, so a crashed run still shows what it spent.
 */
export function recordCredits(mirror: Mirror, entry: CreditEntryInput): RecordCreditsResult {
  const row = [
    requiredTimestamp(entry.at, 'at'),
    entry.pipelineRunId ?? null,
    keyColumn(entry.operation, 'operation'),
    textColumn(entry.domain, 'domain'),
    integerColumn(entry.exportId, 'exportId'),
    integerColumn(entry.runId, 'runId'),
    requiredInteger(entry.credits, 'credits'),
    integerColumn(entry.estimatedCredits, 'estimatedCredits'),
    textColumn(entry.entryKey, 'entryKey'),
    textColumn(entry.note, 'note'),
  ] as const;
  return inTransaction(mirror, () => {
    const result = cachedStatement(
      mirror,
      `INSERT INTO credit_ledger (at, pipeline_run_id, operation, domain, export_id, run_id, credits,
                                  estimated_credits, entry_key, note)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (entry_key) DO NOTHING`,
    ).run(...row);
    if (result.changes === 0) return { recorded: false, id: null };
    if (entry.pipelineRunId !== undefined && entry.pipelineRunId !== null) {
      cachedStatement(mirror, 'UPDATE pipeline_runs SET credits_spent = credits_spent + ? WHERE id = ?').run(
        row[6],
        entry.pipelineRunId,
      );
    }
    return { recorded: true, id: Number(result.lastInsertRowid) };
  });
}

/** Filters of {@link creditsSpent}; all optional and combined with AND. */
export interface CreditsSpentOptions {
  /** Entries at or after this time. */
  since?: string;
  /** Entries before this time. */
  until?: string;
  /** Entries of runs of this pipeline. */
  pipeline?: string;
  pipelineRunId?: number;
  operation?: string;
}

/**
 * Total credits in the ledger matching the filters (0 when none). Returned as a number: sums
 * beyond 2^53 credits are not a realistic balance.
 */
export function creditsSpent(mirror: Mirror, options: CreditsSpentOptions = {}): number {
  const since = timestampColumn(options.since, 'since');
  const until = timestampColumn(options.until, 'until');
  const row = cachedStatement(
    mirror,
    `SELECT coalesce(sum(c.credits), 0) AS total FROM credit_ledger c
     LEFT JOIN pipeline_runs r ON r.id = c.pipeline_run_id
     WHERE (@since IS NULL OR c.at >= @since) AND (@until IS NULL OR c.at < @until)
       AND (@pipeline IS NULL OR r.pipeline = @pipeline) AND (@runId IS NULL OR c.pipeline_run_id = @runId)
       AND (@operation IS NULL OR c.operation = @operation)`,
  ).get({
    since,
    until,
    pipeline: options.pipeline ?? null,
    runId: options.pipelineRunId ?? null,
    operation: options.operation ?? null,
  }) as { total: number };
  return row.total;
}

/** A row of {@link creditsPerDay}. */
export interface CreditsPerDayRow {
  /** UTC date `YYYY-MM-DD`. */
  day: string;
  /** Pipeline of the run that spent them, `(none)` outside a run. */
  pipeline: string;
  operation: string;
  credits: number;
  estimatedCredits: number;
  entries: number;
}

/** Ledger totals per UTC day, pipeline and operation (the `v_credits_per_day` view), oldest first. */
export function creditsPerDay(mirror: Mirror, options: { sinceDay?: string } = {}): CreditsPerDayRow[] {
  return cachedStatement(
    mirror,
    `SELECT day, pipeline, operation, credits, estimated_credits AS estimatedCredits, entries
       FROM v_credits_per_day WHERE (@sinceDay IS NULL OR day >= @sinceDay) ORDER BY day, pipeline, operation`,
  ).all({ sinceDay: options.sinceDay ?? null }) as CreditsPerDayRow[];
}

/** Ledger totals per pipeline (`(none)` outside a run). */
export function creditsPerPipeline(
  mirror: Mirror,
  options: { since?: string } = {},
): Array<{ pipeline: string; credits: number; entries: number }> {
  const since = timestampColumn(options.since, 'since');
  return cachedStatement(
    mirror,
    `SELECT coalesce(r.pipeline, '(none)') AS pipeline, sum(c.credits) AS credits, count(*) AS entries
     FROM credit_ledger c LEFT JOIN pipeline_runs r ON r.id = c.pipeline_run_id
     WHERE (@since IS NULL OR c.at >= @since) GROUP BY 1 ORDER BY 1`,
  ).all({ since }) as Array<{ pipeline: string; credits: number; entries: number }>;
}

/** Result of {@link creditsSummary}. */
export interface CreditsSummary {
  /** Since 00:00 UTC of `now`'s day. */
  today: number;
  /** Since the 1st of `now`'s month, UTC. */
  thisMonth: number;
  total: number;
}

/** Credits spent today, this month (UTC) and ever, for `status`. */
export function creditsSummary(mirror: Mirror, options: { now: string }): CreditsSummary {
  const now = requiredTimestamp(options.now, 'now');
  return {
    today: creditsSpent(mirror, { since: `${now.slice(0, 10)}T00:00:00.000Z` }),
    thisMonth: creditsSpent(mirror, { since: `${now.slice(0, 7)}-01T00:00:00.000Z` }),
    total: creditsSpent(mirror),
  };
}

/** An `account_snapshots` row as {@link latestAccountSnapshot} reads it (all but `raw`). */
export type AccountSnapshotRecord = Omit<Selectable<AccountSnapshotsTable>, 'raw'>;

/**
 * Stores a `GET /account` answer (docs/service-api.md "Account"). `credits_granted` null means no quota
 * is enforced and is stored as NULL. Returns the row id.
 */
export function recordAccountSnapshot(
  mirror: Mirror,
  account: AccountInput,
  options: { at: string; pipelineRunId?: number | null },
): number {
  // Same shape as recordCredits' row: one column converter per bound parameter, different columns.
  const row = [
    requiredTimestamp(options.at, 'at'),
    textColumn(account.plan, 'account.plan'),
    integerColumn(account.credits_granted, 'account.credits_granted'),
    integerColumn(account.credits_used, 'account.credits_used'),
    integerColumn(account.credits_reserved, 'account.credits_reserved'),
    integerColumn(account.available_credits, 'account.available_credits'),
    options.pipelineRunId ?? null,
    jsonColumn(account),
  ];
  const result = cachedStatement(
    mirror,
    `INSERT INTO account_snapshots (at, plan, credits_granted, credits_used, credits_reserved, available_credits,
                                    pipeline_run_id, raw) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(...row);
  return Number(result.lastInsertRowid);
}

/** The most recent account snapshot, or `undefined`. */
export function latestAccountSnapshot(mirror: Mirror): AccountSnapshotRecord | undefined {
  return cachedStatement(
    mirror,
    `SELECT id, at, plan, credits_granted, credits_used, credits_reserved, available_credits, pipeline_run_id
     FROM account_snapshots ORDER BY at DESC, id DESC LIMIT 1`,
  ).get() as AccountSnapshotRecord | undefined;
}
