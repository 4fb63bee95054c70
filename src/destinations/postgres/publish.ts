import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Logger } from '../../log/logger.js';
import type { PublishColumn, PublishReader, PublishTable } from '../../mirror/store/publish.js';
import { AbortedError } from '../../util/domain-sync-error.js';
import { sleep } from '../../util/sleep.js';
import { connectPostgres, type PostgresSession } from './client.js';
import { copyTextRow } from './copy-text.js';
import { PostgresDestinationError, describePgError, errorState, isTransient } from './errors.js';
import {
  addColumnSql,
  createTableSql,
  mergeSql,
  planSchema,
  qualified,
  quoteIdent,
  type ExistingColumn,
  type ExistingTable,
  type MirrorTableShape,
} from './schema-plan.js';
import { serverName, type PostgresConnectionSettings, type PostgresEnv } from './settings.js';
import { ANALYST_VIEWS, createViewSql, viewComment } from './views.js';

/*
 * One publish to one PostgreSQL destination (docs/destinations.md "How a publish works"):
 *
 *   BEGIN; advisory lock on the schema; read the catalog and check every table BEFORE any write;
 *   create the schema, tables and columns that are missing; per table, COPY the rows changed
 *   since that table's watermark into a temporary table and merge them by key (or COPY straight
 *   into a table that is still empty); move the watermarks; recreate the views that changed;
 *   COMMIT.
 *
 * Everything, watermarks included, is one transaction: a reader sees the publish whole or not at
 * all, and a crash at any point leaves the last committed publish and its watermarks, so the next
 * publish sends the same rows again and merges them by key (nothing lost, nothing twice).
 */

/** The table in the destination schema that keeps each mirror's watermark per table. */
export const WATERMARK_TABLE = '_domain_sync_publish';

/** The schema's publish lock is the two-key advisory lock (this constant, hashtext(schema name)). */
export const ADVISORY_LOCK_CLASS = 0x64_73_70_62; // "dspb"

/** Rows of COPY text per chunk written to the socket (about 64 KiB for typical rows). */
const CHUNK_CHARS = 64 * 1024;

/** What happened to one table in a publish. */
export interface TablePublishResult {
  /** Rows sent (changed since the table's watermark, or all of them). */
  rows: number;
  /** `full`: every row was sent (first publish, `--full`, new table or column); else `incremental`. */
  mode: 'full' | 'incremental';
  /** Rows the merge inserted or changed (identical rows sent again are not rewritten). */
  written: number;
}

/** The result of {@link publishToPostgres}. */
export interface PostgresPublishResult {
  server: string;
  database: string;
  schema: string;
  /** The mirror's change counter the publish covered: every table is current up to it. */
  changeSeq: number;
  mirrorId: string;
  /** When the transaction committed (the destination's clock). */
  publishedAt: string;
  tables: Record<string, TablePublishResult>;
  /** Tables created and columns added by this publish (`table` or `table.column`). */
  created: string[];
  /** Views created or recreated. */
  views: string[];
  attempts: number;
  tls: boolean;
}

/** Options of {@link publishToPostgres}. */
export interface PublishToPostgresOptions {
  settings: PostgresConnectionSettings;
  /** Opens a read snapshot of the mirror; one per attempt, closed by the callee. */
  openReader: () => PublishReader;
  tables: readonly PublishTable[];
  /** Send every row whatever the watermarks. @default false */
  full?: boolean;
  env: PostgresEnv;
  logger: Logger;
  signal: AbortSignal;
  /**
   * Give up when a transient failure (a dropped connection, a server restart) is still there this
   * long after the start, retries included. @default 60000
   */
  giveUpAfterMs?: number;
  /** Called with each table's row count before its rows are sent. */
  onTableStart?: (table: string, rows: number) => void;
  /** Called as rows are sent. */
  onRows?: (table: string, rows: number) => void;
  /** @default Date.now */
  now?: () => number;
}

/**
 * Publishes the changed rows of `tables` to one destination, in one transaction, retrying the
 * whole transaction after a transient failure until `giveUpAfterMs`. Throws
 * {@link PostgresDestinationError} naming the destination (nothing of the failed attempt is left
 * in the destination), or `AbortedError`.
 */
export async function publishToPostgres(options: PublishToPostgresOptions): Promise<PostgresPublishResult> {
  const now = options.now ?? Date.now;
  const started = now();
  const giveUpAt = started + (options.giveUpAfterMs ?? 60_000);
  const { settings, logger } = options;
  for (let attempt = 1; ; attempt++) {
    try {
      return { ...(await publishOnce(options, giveUpAt, now)), attempts: attempt };
    } catch (error) {
      if (error instanceof AbortedError || options.signal.aborted) {
        throw error instanceof AbortedError ? error : new AbortedError(undefined, { cause: error });
      }
      const wrapped = wrapError(settings, error);
      const backoff = Math.min(8_000, 500 * 2 ** (attempt - 1));
      if (!isTransient(error) || now() + backoff >= giveUpAt) {
        if (isTransient(error)) {
          throw new PostgresDestinationError(
            'ERR_DESTINATION_FAILED',
            settings.destination,
            `gave up after ${attempt} attempt${attempt === 1 ? '' : 's'} in ${Math.round((now() - started) / 1000)} s ` +
              `(rolled back, nothing of it is in the destination): ${describePgError(error)}`,
            { cause: error, sqlState: errorState(error) },
          );
        }
        throw wrapped;
      }
      logger.warn('publish attempt failed, rolled back; retrying', {
        destination: settings.destination,
        attempt,
        retryInMs: backoff,
        error: wrapped.message,
      });
      await sleep(backoff, options.signal);
    }
  }
}

/** Any failure as a {@link PostgresDestinationError} naming the destination. */
function wrapError(settings: PostgresConnectionSettings, error: unknown): PostgresDestinationError {
  if (error instanceof PostgresDestinationError) return error;
  const state = errorState(error);
  if (state === '55P03') {
    return new PostgresDestinationError(
      'ERR_DESTINATION_LOCKED',
      settings.destination,
      `a lock in schema ${settings.schema} was not granted in time (another publisher to the same schema, or a ` +
        `long query on a table this publish must change); rolled back, nothing was changed`,
      { cause: error, sqlState: state },
    );
  }
  const what = state === '57014' ? 'a statement was cancelled (statement timeout?)' : 'the publish failed';
  return new PostgresDestinationError(
    'ERR_DESTINATION_FAILED',
    settings.destination,
    `${what} on ${serverName(settings)}, database ${settings.database}, schema ${settings.schema}; rolled back, ` +
      `nothing of it is in the destination: ${describePgError(error)}`,
    { cause: error, sqlState: state, retryable: isTransient(error) },
  );
}

async function publishOnce(
  options: PublishToPostgresOptions,
  giveUpAt: number,
  now: () => number,
): Promise<Omit<PostgresPublishResult, 'attempts'>> {
  const { settings, logger, signal } = options;
  const reader = options.openReader();
  let session: PostgresSession | undefined;
  try {
    session = await connectPostgres(settings, { env: options.env, logger, signal, now });
    const { state } = reader;
    logger.info('publishing', {
      destination: settings.destination,
      server: serverName(settings),
      database: settings.database,
      schema: settings.schema,
      tls: session.tls,
      changeSeq: state.changeSeq,
    });
    await session.query('BEGIN');
    // Waits for another publisher to the same schema (they never interleave), but not forever.
    const lockWaitMs = Math.max(1_000, Math.min(30_000, giveUpAt - now()));
    await session.query(`SET LOCAL lock_timeout = ${Math.round(lockWaitMs)}`);
    await session.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [
      ADVISORY_LOCK_CLASS,
      settings.schema,
    ]);

    const shapes: MirrorTableShape[] = options.tables.map((table) => ({
      table,
      columns: reader.columns(table),
    }));
    const existing = await readExistingTables(session, settings.schema);
    // Every check before the first write: a table that cannot hold the data changes nothing.
    const plan = planSchema(settings.schema, shapes, existing);
    if (plan.problems.length > 0) {
      throw new PostgresDestinationError(
        'ERR_DESTINATION_SCHEMA',
        settings.destination,
        `${plan.problems.join('; ')}. Nothing was changed: alter or drop the table, or publish to another schema`,
      );
    }
    const schemaExists = existing.size > 0 || (await schemaPresent(session, settings.schema));
    if (!schemaExists) await sql.raw(`CREATE SCHEMA ${quoteIdent(settings.schema)}`).execute(session.db);
    await ensureWatermarkTable(session, settings.schema, existing.has(WATERMARK_TABLE));
    const created: string[] = [];
    for (const shape of plan.create) {
      await sql.raw(createTableSql(settings.schema, shape)).execute(session.db);
      created.push(shape.table);
    }
    const widened = new Set<string>();
    for (const { table, column } of plan.addColumns) {
      await sql.raw(addColumnSql(settings.schema, table, column)).execute(session.db);
      created.push(`${table}.${column.name}`);
      widened.add(table);
    }
    const watermarks = await readWatermarks(session, settings.schema, state.mirrorId);

    const tables: Record<string, TablePublishResult> = {};
    for (const shape of shapes) {
      const table = shape.table as PublishTable;
      const mark = watermarks.get(table);
      let afterSeq = -1;
      if (!options.full && mark !== undefined && !plan.create.includes(shape) && !widened.has(table)) {
        if (mark <= state.changeSeq) afterSeq = mark;
        else {
          // The mirror's counter is behind what this destination has from it: the mirror file was
          // restored from an older copy. Send everything, as for a first publish.
          logger.warn('mirror is behind the destination watermark; sending the whole table', {
            destination: settings.destination,
            table,
            watermark: mark,
            changeSeq: state.changeSeq,
          });
        }
      }
      tables[table] = await publishTable(
        session,
        options,
        reader,
        shape,
        afterSeq,
        plan.create.includes(shape),
      );
      signal.throwIfAborted();
    }
    for (const table of options.tables) {
      await session.query(
        `INSERT INTO ${qualified(settings.schema, WATERMARK_TABLE)} (mirror_id, table_name, change_seq, published_at, rows_sent)
         VALUES ($1, $2, $3, now(), $4)
         ON CONFLICT (mirror_id, table_name) DO UPDATE SET change_seq = EXCLUDED.change_seq,
           published_at = EXCLUDED.published_at, rows_sent = EXCLUDED.rows_sent`,
        [state.mirrorId, table, state.changeSeq, tables[table]!.rows],
      );
    }
    // The columns each table has in the destination now, which is what a view over it shows.
    const destinationColumns = (table: string): string[] | undefined => {
      const createdShape = plan.create.find((s) => s.table === table);
      if (createdShape !== undefined) return createdShape.columns.map((c) => c.name);
      const found = existing.get(table);
      if (found === undefined) return undefined;
      const added = plan.addColumns.filter((a) => a.table === table).map((a) => a.column.name);
      return [...found.columns.keys(), ...added];
    };
    const views = await refreshViews(session, settings.schema, destinationColumns);
    const committedAt = await session.query('SELECT now() AS at');
    await session.query('COMMIT');
    const at = committedAt.rows[0]?.at;
    return {
      server: serverName(settings),
      database: settings.database,
      schema: settings.schema,
      changeSeq: state.changeSeq,
      mirrorId: state.mirrorId,
      publishedAt: at instanceof Date ? at.toISOString() : new Date(now()).toISOString(),
      tables,
      created,
      views,
      tls: session.tls,
    };
  } finally {
    reader.close();
    // Closing without COMMIT rolls everything back (the server aborts the transaction).
    await session?.close();
  }
}

async function publishTable(
  session: PostgresSession,
  options: PublishToPostgresOptions,
  reader: PublishReader,
  shape: MirrorTableShape,
  afterSeq: number,
  createdNow: boolean,
): Promise<TablePublishResult> {
  const { settings } = options;
  const table = shape.table as PublishTable;
  const mode = afterSeq < 0 ? 'full' : 'incremental';
  const count = reader.countChanged(table, afterSeq);
  options.onTableStart?.(table, count);
  if (count === 0) return { rows: 0, mode, written: 0 };
  const target = qualified(settings.schema, table);
  const columnList = shape.columns.map((c) => quoteIdent(c.name)).join(', ');
  // A table that is still empty takes the rows straight from COPY: nothing to merge with, and
  // half the work of staging. (A table this transaction created is empty by definition.)
  const empty =
    createdNow ||
    (afterSeq < 0 &&
      (await session.query(`SELECT NOT EXISTS (SELECT 1 FROM ${target}) AS empty`)).rows[0]?.empty === true);
  // The SQLite iterator is opened when COPY starts pulling, not before: a statement that fails
  // first (a lock timeout) must not leave it open on the reader.
  const chunks = copyChunks(
    () => reader.rows(table, afterSeq),
    shape.columns,
    (n) => options.onRows?.(table, n),
  );
  if (empty) {
    const rows = await session.copyIn(`COPY ${target} (${columnList}) FROM STDIN`, chunks, options.signal);
    return { rows, mode, written: rows };
  }
  const stage = `_stage_${table}`;
  await session.query(
    `CREATE TEMP TABLE ${quoteIdent(stage)} (LIKE ${target} INCLUDING DEFAULTS) ON COMMIT DROP`,
  );
  const rows = await session.copyIn(
    `COPY ${quoteIdent(stage)} (${columnList}) FROM STDIN`,
    chunks,
    options.signal,
  );
  const merged = await session.query(mergeSql(settings.schema, shape, stage));
  await session.query(`DROP TABLE ${quoteIdent(stage)}`);
  return { rows, mode, written: merged.rowCount };
}

/** The rows as COPY text in chunks of about {@link CHUNK_CHARS}, reporting progress per chunk. */
function* copyChunks(
  openRows: () => IterableIterator<unknown[]>,
  columns: readonly PublishColumn[],
  onRows: (n: number) => void,
): Generator<string, void, undefined> {
  const types = columns.map((c) => c.type);
  const rows = openRows();
  let chunk = '';
  let pending = 0;
  try {
    for (const row of rows) {
      chunk += copyTextRow(row, types);
      pending++;
      if (chunk.length >= CHUNK_CHARS) {
        yield chunk;
        onRows(pending);
        chunk = '';
        pending = 0;
      }
    }
    if (chunk.length > 0) {
      yield chunk;
      onRows(pending);
    }
  } finally {
    // An early stop (a failed COPY) must release the SQLite statement.
    rows.return?.();
  }
}

async function schemaPresent(session: PostgresSession, schema: string): Promise<boolean> {
  const result = await session.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
  return result.rows.length > 0;
}

/** The tables of `schema` with their columns and unique keys, from the catalog. */
async function readExistingTables(
  session: PostgresSession,
  schema: string,
): Promise<Map<string, ExistingTable>> {
  const columns = await session.query(
    `SELECT c.relname AS table_name, a.attname AS column_name, format_type(a.atttypid, a.atttypmod) AS type,
            a.attnotnull AS not_null, a.atthasdef AS has_default
     FROM pg_class c
     JOIN pg_namespace n ON n.oid = c.relnamespace
     JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
     WHERE n.nspname = $1 AND c.relkind IN ('r', 'p')
     ORDER BY c.relname, a.attnum`,
    [schema],
  );
  const keys = await session.query(
    `SELECT c.relname AS table_name,
            array(SELECT a.attname FROM unnest(i.indkey) AS k(attnum)
                  JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum)::text[] AS columns
     FROM pg_index i
     JOIN pg_class c ON c.oid = i.indrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND i.indisunique AND i.indpred IS NULL AND i.indexprs IS NULL`,
    [schema],
  );
  const tables = new Map<string, { columns: Map<string, ExistingColumn>; uniqueKeys: string[][] }>();
  for (const row of columns.rows) {
    const name = String(row.table_name);
    let table = tables.get(name);
    if (table === undefined) tables.set(name, (table = { columns: new Map(), uniqueKeys: [] }));
    table.columns.set(String(row.column_name), {
      type: String(row.type),
      notNull: row.not_null === true,
      hasDefault: row.has_default === true,
    });
  }
  for (const row of keys.rows) {
    tables.get(String(row.table_name))?.uniqueKeys.push((row.columns as string[]).map(String));
  }
  return tables;
}

async function ensureWatermarkTable(
  session: PostgresSession,
  schema: string,
  exists: boolean,
): Promise<void> {
  if (exists) return;
  await sql
    .raw(
      `CREATE TABLE ${qualified(schema, WATERMARK_TABLE)} (
        mirror_id text NOT NULL,
        table_name text NOT NULL,
        change_seq bigint NOT NULL,
        published_at timestamp with time zone NOT NULL,
        rows_sent bigint NOT NULL,
        PRIMARY KEY (mirror_id, table_name)
      )`,
    )
    .execute(session.db);
  await sql
    .raw(
      `COMMENT ON TABLE ${qualified(schema, WATERMARK_TABLE)} IS ` +
        `'domain-sync publish: per mirror and table, the mirror change_seq the table is current up to'`,
    )
    .execute(session.db);
}

async function readWatermarks(
  session: PostgresSession,
  schema: string,
  mirrorId: string,
): Promise<Map<string, number>> {
  const result = await session.db
    .withSchema(schema)
    .selectFrom(WATERMARK_TABLE)
    .select(['table_name', 'change_seq'])
    .where('mirror_id', '=', mirrorId)
    .execute();
  return new Map(result.map((r) => [String(r.table_name), Number(r.change_seq)]));
}

/**
 * Creates or replaces each analyst view whose tables are all in the schema, when its definition
 * or its tables' columns changed since publish last made it (told by the comment it left), so
 * that a publish does not lock a view that readers are using for nothing.
 */
async function refreshViews(
  session: PostgresSession,
  schema: string,
  columnsOf: (table: string) => readonly string[] | undefined,
): Promise<string[]> {
  const comments = await session.query(
    `SELECT c.relname AS name, obj_description(c.oid, 'pg_class') AS comment
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relkind = 'v'`,
    [schema],
  );
  const current = new Map(
    comments.rows.map((r) => [String(r.name), r.comment === null ? null : String(r.comment)]),
  );
  const done: string[] = [];
  for (const view of ANALYST_VIEWS) {
    const sourceColumns = view.sources.map(columnsOf);
    if (sourceColumns.some((columns) => columns === undefined)) continue;
    const fingerprint = createHash('sha256')
      .update(createViewSql(schema, view))
      .update(JSON.stringify(sourceColumns))
      .digest('hex')
      .slice(0, 16);
    const comment = viewComment(fingerprint);
    if (current.get(view.name) === comment) continue;
    await sql.raw(createViewSql(schema, view)).execute(session.db);
    await sql.raw(`COMMENT ON VIEW ${qualified(schema, view.name)} IS '${comment}'`).execute(session.db);
    done.push(view.name);
  }
  return done;
}
