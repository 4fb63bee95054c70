import type { PostgresDestinationConfig } from '../src/config/destinations.js';
import {
  publishToPostgres,
  resolveConnectionSettings,
  serverName,
  type PostgresConnectionSettings,
  type PostgresEnv,
  type TablePublishResult,
} from '../src/destinations/postgres/index.js';
import { redactText } from '../src/log/redact.js';
import { openPublishReader, type PublishTable } from '../src/mirror/store/publish.js';
import { getSyncState, setSyncState } from '../src/mirror/store/sync-state.js';
import { throttledProgressLog, type ProgressTask } from '../src/runtime/progress.js';
import { errorCode, runPipeline } from '../src/runtime/run.js';
import type { MirrorRunContext } from '../src/runtime/run.js';
import type { ItemFailure, RunResult } from '../src/runtime/run-result.js';
import { AbortedError, ConfigError, UsageError } from '../src/util/domain-sync-error.js';
import { isoFromMs } from '../src/util/time.js';
import { PUBLISH_STATE, type PublishRecord } from './publish-state.js';
import { resolvePublishTables } from './tables.js';

/** Options of {@link publishPipeline}; the CLI maps `publish`'s flags onto these. */
export interface PublishOptions {
  /** Destination names (`--to`, repeatable). @default every destination of type postgres */
  to?: readonly string[];
  /** Tables to publish (`--tables`). @default every table of {@link PUBLISH_TABLES} */
  tables?: readonly string[];
  /** Send every row, not only those changed since the last publish (`--full`). @default false */
  full?: boolean;
  /**
   * libpq's environment (PGPASSWORD, PGHOST, PGSSLMODE, …). The CLI passes its own; a program
   * that leaves it out gets the process's, which is where node-postgres itself would look.
   */
  env?: PostgresEnv;
  /** Give up on a destination that keeps failing this long after its start. @default 60000 */
  giveUpAfterMs?: number;
}

/** What one destination got, in the run's stats and the `--json` summary. */
export interface DestinationPublishStats {
  status: 'published' | 'failed';
  /** `host:port`, database and schema (never a password). */
  server: string | null;
  database: string | null;
  schema: string;
  /** The mirror's change counter the destination is now current up to (null when it failed). */
  changeSeq: number | null;
  publishedAt: string | null;
  /** Rows sent per table (and how: `full` or `incremental`; rows the merge wrote). */
  tables: Record<string, TablePublishResult>;
  /** Rows sent in all. */
  rows: number;
  created: string[];
  views: string[];
  attempts: number;
  error?: { code: string; message: string };
}

/** Counts of one publish run, stored in `pipeline_runs.stats` and printed in the summary. */
export interface PublishStats {
  tables: string[];
  full: boolean;
  destinations: Record<string, DestinationPublishStats>;
}

const PIPELINE = 'publish';
const PROGRESS_EVERY_ROWS = 1_000;

/**
 * The PostgreSQL destinations to publish to: those named (in order, once each), or every
 * destination of type postgres. Throws {@link UsageError} (exit 2) for an unknown name or one of
 * another type, and {@link ConfigError} when none is configured.
 */
export function resolvePublishDestinations(
  destinations: MirrorRunContext['config']['destinations'],
  names: readonly string[] | undefined,
): PostgresDestinationConfig[] {
  const postgres = Object.values(destinations).filter(
    (d): d is Readonly<PostgresDestinationConfig> => d.type === 'postgres',
  );
  if (names === undefined || names.length === 0) {
    if (postgres.length === 0) {
      throw new ConfigError([
        'destinations: no destination of type postgres; add one, e.g. "destinations": { "warehouse": ' +
          '{ "type": "postgres", "url": "postgres://user@host:5432/db" } } (docs/destinations.md)',
      ]);
    }
    return postgres;
  }
  const out: PostgresDestinationConfig[] = [];
  for (const name of new Set(names)) {
    const destination = Object.hasOwn(destinations, name) ? destinations[name] : undefined;
    if (destination === undefined) {
      const known = Object.keys(destinations);
      throw new UsageError(
        `--to "${name}": no destination of that name (configured: ${known.length ? known.join(', ') : 'none'})`,
      );
    }
    if (destination.type !== 'postgres') {
      throw new UsageError(
        `--to "${name}": destination "${name}" is of type ${destination.type}, not postgres`,
      );
    }
    out.push(destination);
  }
  return out;
}

/**
 * `publish`: sends the mirror rows changed since the last publish to each PostgreSQL destination
 * (docs/destinations.md), one transaction per destination with its watermark.
 *
 * - Destinations are published one after the other; one that fails (unreachable, credentials
 *   refused, a table that cannot hold the data, still failing after about a minute of retries)
 *   is an item failure naming it, and the others are still published. When every destination
 *   failed, the run is `failed` with the first one's error.
 * - Reads the mirror through a read snapshot; writes to it only its `pipeline_runs` row and, after
 *   a destination committed, that destination's record in `sync_state` (pipeline `publish`),
 *   which `status` shows. The destination's own watermark table is the truth.
 * - Throws {@link UsageError} / `ConfigError` (exit 2) for bad destinations, tables or urls before
 *   anything is recorded; never throws after that.
 */
export async function publishPipeline(
  ctx: MirrorRunContext,
  options: PublishOptions = {},
): Promise<RunResult<PublishStats>> {
  const destinations = resolvePublishDestinations(ctx.config.destinations, options.to);
  const tables = resolvePublishTables(options.tables);
  // Only config/ and the CLI read the environment otherwise; libpq's variables are read here
  // (when not given) as node-postgres itself would, like the AWS SDK's default chain for s3.
  const env = options.env ?? process.env;
  const settings = destinations.map((d) => resolveConnectionSettings(d, env));
  const stats: PublishStats = { tables, full: options.full === true, destinations: {} };
  return runPipeline(
    ctx,
    PIPELINE,
    async (run) => {
      const failures: ItemFailure[] = [];
      for (const target of settings) {
        if (run.ctx.signal.aborted) throw new AbortedError();
        const outcome = await publishOne(run.ctx, run.id, target, tables, options, env);
        stats.destinations[target.destination] = outcome;
        if (outcome.error) {
          if (outcome.error.code === 'ERR_ABORTED') throw new AbortedError(outcome.error.message);
          failures.push({
            item: target.destination,
            code: outcome.error.code,
            message: outcome.error.message,
          });
        }
      }
      if (failures.length > 0 && failures.length === settings.length) {
        return {
          status: 'failed',
          stats,
          failures,
          creditsSpent: 0,
          error: { code: failures[0]!.code, message: failures[0]!.message },
        };
      }
      return { status: 'done', stats, failures, creditsSpent: 0 };
    },
    () => stats,
  );
}

async function publishOne(
  ctx: MirrorRunContext,
  runId: number,
  settings: PostgresConnectionSettings,
  tables: readonly PublishTable[],
  options: PublishOptions,
  env: PostgresEnv,
): Promise<DestinationPublishStats> {
  const logger = ctx.logger.child({ destination: settings.destination });
  /**
   * Each table's progress in this attempt: its bar, the rows sent (`of` its rows to send) and
   * those not yet added to the bar.
   */
  const progress = new Map<string, { task: ProgressTask; sent: number; of: number; unshown: number }>();
  // Where no bar shows it (a cron job's log): a first publish of a large mirror runs for minutes.
  const progressLog = throttledProgressLog(logger, ctx.clock);
  try {
    const result = await publishToPostgres({
      settings,
      openReader: () => openPublishReader(ctx.mirror),
      tables,
      full: options.full === true,
      env,
      logger,
      signal: ctx.signal,
      ...(options.giveUpAfterMs === undefined ? {} : { giveUpAfterMs: options.giveUpAfterMs }),
      now: ctx.clock,
      onTableStart: (table, rows) => {
        // A retry starts the tables over: a fresh bar rather than one past its total.
        progress.get(table)?.task.done();
        const task = ctx.progress.task(`${settings.destination}.${table}`, rows, 'rows');
        progress.set(table, { task, sent: 0, of: rows, unshown: 0 });
      },
      onRows: (table, rows) => {
        const state = progress.get(table);
        if (state === undefined) return;
        state.sent += rows;
        progressLog('publish progress', { table, rows: state.sent, of: state.of });
        state.unshown += rows;
        if (state.unshown >= PROGRESS_EVERY_ROWS) {
          state.task.increment(state.unshown);
          state.unshown = 0;
        }
      },
    });
    for (const { task, unshown } of progress.values()) {
      task.increment(unshown);
      task.done();
    }
    const rows = Object.values(result.tables).reduce((sum, t) => sum + t.rows, 0);
    logger.info('published', {
      rows,
      changeSeq: result.changeSeq,
      attempts: result.attempts,
      tables: result.tables,
    });
    rememberPublish(
      ctx,
      runId,
      settings,
      result.mirrorId,
      result.server,
      result.database,
      result.publishedAt,
      result.changeSeq,
      result.tables,
    );
    return {
      status: 'published',
      server: result.server,
      database: result.database,
      schema: result.schema,
      changeSeq: result.changeSeq,
      publishedAt: result.publishedAt,
      tables: result.tables,
      rows,
      created: result.created,
      views: result.views,
      attempts: result.attempts,
    };
  } catch (error) {
    for (const { task } of progress.values()) task.done();
    const code = errorCode(error);
    const message = redactText(error instanceof Error ? error.message : String(error));
    logger.error('publish failed', { code, error: message });
    return {
      status: 'failed',
      server: serverName(settings),
      database: settings.database,
      schema: settings.schema,
      changeSeq: null,
      publishedAt: null,
      tables: {},
      rows: 0,
      created: [],
      views: [],
      attempts: 0,
      error: { code, message },
    };
  }
}

/** Keeps the destination's last publish in the mirror's `sync_state` (for `status`). */
function rememberPublish(
  ctx: MirrorRunContext,
  runId: number,
  settings: PostgresConnectionSettings,
  mirrorId: string,
  server: string,
  database: string,
  publishedAt: string,
  changeSeq: number,
  tables: Record<string, TablePublishResult>,
): void {
  const previous = getSyncState(ctx.mirror, PUBLISH_STATE, settings.destination)?.cursor as
    PublishRecord | null | undefined;
  const sameTarget =
    previous?.mirrorId === mirrorId &&
    previous.server === server &&
    previous.database === database &&
    previous.schema === settings.schema;
  const record: PublishRecord = {
    mirrorId,
    server,
    database,
    schema: settings.schema,
    tables: { ...(sameTarget ? previous.tables : {}) },
  };
  for (const [table, t] of Object.entries(tables))
    record.tables[table] = { changeSeq, rows: t.rows, publishedAt };
  setSyncState(ctx.mirror, {
    pipeline: PUBLISH_STATE,
    scopeKey: settings.destination,
    watermark: String(changeSeq),
    cursor: record,
    pipelineRunId: runId,
    updatedAt: isoFromMs(ctx.clock()),
  });
}
