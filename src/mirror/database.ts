import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import type * as KyselyModule from 'kysely';
import type { Kysely } from 'kysely';
import type { MigrationResultSet } from 'kysely/migration';
import type { Logger } from '../log/logger.js';
import { noopLogger } from '../log/logger.js';
import { DomainSyncError } from '../util/domain-sync-error.js';
import { MIRROR_MIGRATION_NAMES } from './migrations/names.js';
import type { MirrorSchema } from './schema.js';

/*
 * kysely is loaded only when something uses it: `mirror.db` (typed ad-hoc reads) or a pending
 * migration. The commands' work goes through prepared statements on the better-sqlite3 handle,
 * and importing kysely (about 250 modules) took 106–151 ms, which every command that opens a
 * mirror paid at start (migrations/names.ts).
 */
const requireModule = createRequire(import.meta.url);

/** Options of {@link openMirror}. */
export interface OpenMirrorOptions {
  /** Receives open/migration events. @default noopLogger */
  logger?: Logger;
  /** Open read-only: no pragmas that write, no migrations; the file must exist. @default false */
  readonly?: boolean;
  /** Run pending migrations on open (ignored when `readonly`). @default true */
  migrate?: boolean;
  /** better-sqlite3 busy timeout: how long a write waits for another writer's lock. @default 15000 */
  busyTimeoutMs?: number;
}

/**
 * An open mirror database. Pipelines use the store functions of `src/mirror/store/` with it and
 * never write SQL; `db` is there for typed ad-hoc reads.
 */
export interface Mirror {
  /** Absolute path of the SQLite file. */
  readonly path: string;
  /**
   * Typed kysely instance over the same connection, made (and kysely loaded) on first use; the
   * same instance every time.
   */
  readonly db: Kysely<MirrorSchema>;
  /** Whether the mirror was opened read-only. */
  readonly readonly: boolean;
  /** Logger given to {@link openMirror}. */
  readonly logger: Logger;
  /** Closes the connection. Idempotent. */
  close(): Promise<void>;
}

/** The part of better-sqlite3 the store uses; kept out of the public `Mirror` type on purpose. */
export interface MirrorInternals {
  readonly sqlite: Database.Database;
  /** Prepared statements by SQL text, built once per Mirror so no call prepares its statement again. */
  readonly statements: Map<string, Database.Statement>;
}

const INTERNALS = new WeakMap<Mirror, MirrorInternals>();

/**
 * Page size of a mirror file created by {@link openMirror}, bytes (SQLite's default is 4096). A
 * synced domain's row, with its raw profile, holds about 2.6 KB, so a 4 KiB page held one of
 * them and the rest of the page was lost: 30,000 synced domains took 29,083 pages (113 MB) of
 * `domains`, against 11,768 (92 MB) with 8 KiB pages. Every page a commit touches is written to
 * the WAL and later checkpointed, so fewer pages are less writing; with 8 KiB pages the mirror
 * writer spent measurably less CPU per profile (docs/benchmarks.md "sync"). A file that already
 * has pages keeps its size: SQLite ignores the pragma there (only a VACUUM outside WAL changes it).
 */
export const NEW_MIRROR_PAGE_SIZE = 8192;

/** Result of {@link migrateMirror}. */
export interface MigrateMirrorResult {
  /** Names of the migrations applied by this call, in order. */
  applied: string[];
}

/**
 * Opens (creating if needed) the SQLite mirror at `path` and brings its schema to the latest
 * migration.
 *
 * - Creates the parent directory.
 * - Sets WAL, `synchronous=NORMAL`, `foreign_keys=ON`, `temp_store=MEMORY` and a busy timeout;
 *   a new file gets {@link NEW_MIRROR_PAGE_SIZE}-byte pages.
 * - A file that is not SQLite fails with `ERR_MIRROR_OPEN` naming the path; a failed migration
 *   with `ERR_MIRROR_MIGRATION` naming the migration. Nothing stays open after a failure.
 *
 * Async because kysely's `Migrator` is.
 */
export async function openMirror(path: string, options: OpenMirrorOptions = {}): Promise<Mirror> {
  const logger = options.logger ?? noopLogger;
  const readonly = options.readonly ?? false;
  const absolute = path === ':memory:' ? path : resolve(path);
  let sqlite: Database.Database;
  try {
    if (!readonly && absolute !== ':memory:') mkdirSync(dirname(absolute), { recursive: true });
    sqlite = new Database(absolute, { readonly, fileMustExist: readonly });
  } catch (error) {
    throw new DomainSyncError(
      'ERR_MIRROR_OPEN',
      `cannot open mirror database ${absolute}: ${messageOf(error)}`,
      {
        cause: error,
      },
    );
  }
  const busyTimeoutMs = Math.max(0, Math.trunc(options.busyTimeoutMs ?? 15_000));
  try {
    // better-sqlite3 opens lazily: "file is not a database" only surfaces on the first statement,
    // so the pragmas double as the format check.
    sqlite.pragma(`busy_timeout = ${busyTimeoutMs}`);
    if (!readonly) {
      // Before WAL: a new, empty file takes the page size now or never (a no-op on any other).
      sqlite.pragma(`page_size = ${NEW_MIRROR_PAGE_SIZE}`);
      // SQLite can answer SQLITE_BUSY at once, without the busy handler, while another process
      // sets up the same new file (switching it to WAL, recovering its WAL index): two commands
      // started together on a fresh mirror saw "database is locked" here. Wait and retry within
      // the busy timeout, as any other write would wait.
      retryWhileBusy(() => sqlite.pragma('journal_mode = WAL'), busyTimeoutMs);
      sqlite.pragma('synchronous = NORMAL');
    }
    sqlite.pragma('foreign_keys = ON');
    // Statement journals and temp b-trees in memory. Measured while the change_log triggers
    // (dropped by migration 0003) made every child upsert open a statement journal: on disk that
    // cost a temp file and about 70 extra pwrite calls per synced profile (strace of 30,000
    // profile upserts: 2.98 M pwrites with temp files, 0.79 M without).
    sqlite.pragma('temp_store = MEMORY');
    retryWhileBusy(() => sqlite.prepare('SELECT count(*) FROM sqlite_schema').get(), busyTimeoutMs);
  } catch (error) {
    sqlite.close();
    throw new DomainSyncError(
      'ERR_MIRROR_OPEN',
      `cannot open mirror database ${absolute}: ${messageOf(error)} (is it an SQLite file?)`,
      { cause: error },
    );
  }

  let db: Kysely<MirrorSchema> | undefined;
  let closed = false;
  const mirror: Mirror = {
    path: absolute,
    get db(): Kysely<MirrorSchema> {
      if (db === undefined) {
        // Synchronous, as a property must be: require() of an ES module (Node ≥ 22.12), the
        // same module instance a later `import` gets.
        const { Kysely: KyselyClass, SqliteDialect } = requireModule('kysely') as typeof KyselyModule;
        db = new KyselyClass<MirrorSchema>({ dialect: new SqliteDialect({ database: sqlite }) });
      }
      return db;
    },
    readonly,
    logger,
    async close() {
      if (closed) return;
      closed = true;
      await db?.destroy();
      // kysely only closes the connection if it ever used it.
      if (sqlite.open) sqlite.close();
    },
  };
  INTERNALS.set(mirror, { sqlite, statements: new Map() });

  if (!readonly && options.migrate !== false) {
    try {
      await migrateMirror(mirror);
    } catch (error) {
      await mirror.close();
      throw error;
    }
  }
  logger.debug('mirror opened', { path: absolute, readonly });
  return mirror;
}

/**
 * Applies every pending migration, all or nothing: on failure the schema is exactly as before.
 * Throws `ERR_MIRROR_MIGRATION` naming the failed migration and the database. Call it before
 * anything else uses the mirror (openMirror does).
 */
export async function migrateMirror(mirror: Mirror): Promise<MigrateMirrorResult> {
  const { sqlite } = mirrorInternals(mirror);
  // The common case (already up to date) takes no write lock at all.
  if (pendingMigrationNames(sqlite).length === 0) return { applied: [] };
  const [{ Migrator }, { mirrorMigrationProvider }] = await Promise.all([
    import('kysely/migration'),
    import('./migrations/index.js'),
  ]);
  const migrator = new Migrator({ db: mirror.db, provider: mirrorMigrationProvider });
  // kysely's SQLite adapter reports no transactional DDL, so its Migrator runs migrations outside
  // any transaction and a failure halfway would leave a half-built schema. One IMMEDIATE
  // transaction around the whole run (same connection: kysely's driver wraps this handle) makes
  // it atomic, and also serialises two processes migrating the same file (busy_timeout waits).
  sqlite.exec('BEGIN IMMEDIATE');
  let outcome: MigrationResultSet;
  try {
    outcome = await migrator.migrateToLatest();
  } catch (error) {
    if (sqlite.inTransaction) sqlite.exec('ROLLBACK');
    throw new DomainSyncError(
      'ERR_MIRROR_MIGRATION',
      `migrating mirror ${mirror.path} failed: ${messageOf(error)}`,
      {
        cause: error,
      },
    );
  }
  const { error, results } = outcome;
  if (sqlite.inTransaction) sqlite.exec(error === undefined ? 'COMMIT' : 'ROLLBACK');
  const applied = (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  if (error !== undefined) {
    const failed = (results ?? []).find((r) => r.status === 'Error')?.migrationName;
    throw new DomainSyncError(
      'ERR_MIRROR_MIGRATION',
      `migration ${failed ?? '(before any migration)'} of mirror ${mirror.path} failed: ${messageOf(error)}`,
      { cause: error },
    );
  }
  for (const name of applied)
    mirror.logger.info('mirror migration applied', { migration: name, path: mirror.path });
  return { applied };
}

function pendingMigrationNames(sqlite: Database.Database): string[] {
  const hasTable = sqlite
    .prepare(`SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'kysely_migration'`)
    .get();
  const done = new Set(
    hasTable === undefined
      ? []
      : (sqlite.prepare('SELECT name FROM kysely_migration').all() as Array<{ name: string }>).map(
          (r) => r.name,
        ),
  );
  return MIRROR_MIGRATION_NAMES.filter((name) => !done.has(name));
}

/**
 * The better-sqlite3 handle and statement cache behind a mirror. For `src/mirror/` only: the
 * index does not re-export it.
 */
export function mirrorInternals(mirror: Mirror): MirrorInternals {
  const internals = INTERNALS.get(mirror);
  if (internals === undefined || !internals.sqlite.open) {
    throw new DomainSyncError('ERR_MIRROR_CLOSED', `mirror ${mirror.path} is closed`);
  }
  return internals;
}

/** A statement prepared once per mirror and cached by its SQL text. */
export function cachedStatement(mirror: Mirror, sqlText: string): Database.Statement {
  const internals = mirrorInternals(mirror);
  let statement = internals.statements.get(sqlText);
  if (statement === undefined) {
    statement = internals.sqlite.prepare(sqlText);
    internals.statements.set(sqlText, statement);
  }
  return statement;
}

/**
 * The `n` column of the one row `sqlText` answers (a `SELECT count(*) AS n …`) with `params`
 * bound, the statement cached as above.
 */
export function countOf(mirror: Mirror, sqlText: string, ...params: unknown[]): number {
  return (cachedStatement(mirror, sqlText).get(...params) as { n: number }).n;
}

/**
 * `INDEXED BY <index>`, for a query's FROM clause, while the mirror has that index; nothing while
 * it does not. A first load sets indexes aside until its rows are in (store/deferred-indexes.ts),
 * and SQLite refuses to prepare a query that names a missing index, so a reader running meanwhile
 * (the dashboard, `status`) would fail; without the clause it gets the same answer from a scan.
 * With the index there, the clause keeps its purpose: a query whose conditions no longer fit the
 * index fails to prepare instead of scanning. Call it inside the read transaction that runs the
 * query, so that both see the same schema.
 */
export function indexedBy(mirror: Mirror, index: string): string {
  if (!/^[a-z_]+$/.test(index)) throw new Error(`indexedBy: not an index name: ${index}`);
  const exists = cachedStatement(mirror, "SELECT 1 FROM sqlite_schema WHERE type = 'index' AND name = ?").get(
    index,
  );
  return exists === undefined ? '' : `INDEXED BY ${index}`;
}

/**
 * Runs `fn` in one better-sqlite3 transaction (rolled back if it throws). Inside a transaction
 * that is already open, `fn` joins it instead of opening a savepoint: a savepoint made profile
 * upserts several times slower in CPU (CPU per profile today: docs/benchmarks.md "sync"). An
 * error thrown by `fn` then rolls back the whole outer transaction when it leaves it, so a caller
 * must not catch it inside the outer transaction and go on writing.
 */
export function inTransaction<T>(mirror: Mirror, fn: () => T): T {
  const { sqlite } = mirrorInternals(mirror);
  return sqlite.inTransaction ? fn() : sqlite.transaction(fn)();
}

/**
 * Runs `fn` in a `BEGIN IMMEDIATE` transaction: the write lock is taken before `fn` reads, so a
 * read-then-write decision (a lock, an allowance) is atomic across processes; another writer
 * waits up to the busy timeout. Inside an open transaction `fn` joins it, as in
 * {@link inTransaction}.
 */
export function inImmediateTransaction<T>(mirror: Mirror, fn: () => T): T {
  const { sqlite } = mirrorInternals(mirror);
  return sqlite.inTransaction ? fn() : sqlite.transaction(fn).immediate();
}

/** The message of a thrown value, whatever was thrown. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Whether `error` is SQLite's SQLITE_BUSY: another connection holds the lock it needed. */
export function isBusyError(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'SQLITE_BUSY';
}

/** Runs `fn`, again every 25 ms while it fails with SQLITE_BUSY, for at most `timeoutMs`. */
function retryWhileBusy<T>(fn: () => T, timeoutMs: number): T {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return fn();
    } catch (error) {
      if (!isBusyError(error) || Date.now() >= deadline) throw error;
      // A synchronous wait: opening the mirror is synchronous, and nothing else may run meanwhile.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 25);
    }
  }
}
