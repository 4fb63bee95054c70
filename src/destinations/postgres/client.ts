import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ConnectionOptions } from 'node:tls';
import { Kysely, PostgresDialect } from 'kysely';
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { registerSecret } from '../../log/redact.js';
import type { Logger } from '../../log/logger.js';
import { AbortedError } from '../../util/domain-sync-error.js';
import { sleep } from '../../util/sleep.js';
import { PostgresDestinationError, describePgError, errorState } from './errors.js';
import { serverName, type PostgresConnectionSettings, type PostgresEnv } from './settings.js';

/*
 * The only module that imports `pg` and `pg-copy-streams` (and kysely's PostgresDialect): one
 * connection per publish attempt, kysely over that same connection for DDL and queries, and
 * COPY FROM STDIN on it for the rows, so that everything runs in one transaction.
 *
 * The password is never a setting: PGPASSWORD from the environment given, else node-postgres
 * looks it up in the password file itself (PGPASSFILE or ~/.pgpass, as libpq does). Either way
 * it is registered with redact() once known, so no log line or message can carry it.
 */

/** One open connection to a destination. */
export interface PostgresSession {
  /** kysely over this connection (no pool: every query runs on it, inside its transaction). */
  readonly db: Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- the destination's tables are made at run time
  /** The server process id of this connection (for pg_terminate_backend in tests and logs). */
  readonly backendPid: number;
  /** Whether the connection is TLS-encrypted. */
  readonly tls: boolean;
  /** A plain query (transaction control, SET LOCAL). */
  query(
    text: string,
    values?: readonly unknown[],
  ): Promise<{ rows: Array<Record<string, unknown>>; rowCount: number }>;
  /**
   * Runs `copySql` (`COPY … FROM STDIN`) and streams `chunks` of COPY text into it, waiting
   * whenever the socket is full (memory stays at about one chunk). Resolves with the rows the
   * server counted; rejects with the server's error, the transaction then being aborted.
   */
  copyIn(copySql: string, chunks: Iterable<string>, signal: AbortSignal): Promise<number>;
  close(): Promise<void>;
}

/** Options of {@link connectPostgres}. */
export interface ConnectOptions {
  env: PostgresEnv;
  logger: Logger;
  signal: AbortSignal;
  /** Current time in ms. @default Date.now */
  now?: () => number;
}

/** TLS attempts in order for each sslmode: `prefer` tries TLS first, `allow` a plain connection. */
function tlsAttempts(settings: PostgresConnectionSettings): Array<ConnectionOptions | false> {
  const ca = settings.sslRootCert === null ? undefined : readFileSync(settings.sslRootCert);
  switch (settings.sslMode) {
    case 'disable':
      return [false];
    case 'allow':
      return [false, { rejectUnauthorized: false }];
    case 'prefer':
      return [{ rejectUnauthorized: false }, false];
    case 'require':
      // libpq's `require` checks the certificate only when a root certificate is given.
      return [
        { rejectUnauthorized: ca !== undefined, ...(ca ? { ca, checkServerIdentity: () => undefined } : {}) },
      ];
    case 'verify-ca':
      return [{ rejectUnauthorized: true, ...(ca ? { ca } : {}), checkServerIdentity: () => undefined }];
    case 'verify-full':
      return [{ rejectUnauthorized: true, ...(ca ? { ca } : {}), servername: settings.host }];
  }
}

/** Whether a failed attempt should fall through to the next TLS choice of `allow` / `prefer`. */
function tlsRefused(error: unknown): boolean {
  const message = error instanceof Error ? error.message : '';
  // `prefer` against a server without TLS; `allow` against pg_hba `hostssl` only (28000).
  return (
    /does not support SSL/i.test(message) ||
    (errorState(error) === '28000' && /no encryption|SSL off/i.test(message))
  );
}

/**
 * Connects to a destination, retrying a refused or timed-out connection with backoff for as
 * long as the connect timeout allows in total (so an unreachable server fails within it).
 * Throws {@link PostgresDestinationError}: `ERR_DESTINATION_UNREACHABLE` naming host and port,
 * or `ERR_DESTINATION_AUTH` for refused credentials or a missing password (not retried).
 */
export async function connectPostgres(
  settings: PostgresConnectionSettings,
  options: ConnectOptions,
): Promise<PostgresSession> {
  const now = options.now ?? Date.now;
  const started = now();
  const deadline = started + settings.connectTimeoutMs;
  const password = options.env.PGPASSWORD;
  registerSecret(password);
  const server = serverName(settings);
  let lastError: unknown;
  for (let attempt = 0; ; attempt++) {
    for (const ssl of tlsAttempts(settings)) {
      const remaining = deadline - now();
      if (remaining <= 0) break;
      const client = new pg.Client({
        host: settings.host,
        port: settings.port,
        user: settings.user,
        database: settings.database,
        // Undefined: node-postgres reads the password file (PGPASSFILE or ~/.pgpass) itself.
        ...(password === undefined ? {} : { password }),
        ssl,
        connectionTimeoutMillis: Math.max(1, Math.ceil(remaining)),
        application_name: settings.applicationName,
        ...(settings.options === null ? {} : { options: settings.options }),
        keepAlive: true,
      });
      // A connection that drops while idle emits 'error' on the client; the query in flight (if
      // any) rejects with it, so here it only has to be kept from crashing the process.
      client.on('error', (error) =>
        options.logger.debug('postgres connection error', { message: error.message }),
      );
      try {
        await client.connect();
        registerSecret((client as unknown as { password?: string }).password ?? undefined);
        return session(client, ssl !== false);
      } catch (error) {
        lastError = error;
        await client.end().catch(() => {});
        if (isAuthFailure(error)) throw authError(settings, error);
        if (tlsRefused(error)) continue;
        break;
      }
    }
    if (options.signal.aborted) throw new AbortedError();
    const backoff = Math.min(4_000, 250 * 2 ** attempt);
    if (now() + backoff >= deadline) break;
    await sleep(backoff, options.signal);
  }
  const why = lastError === undefined ? 'no answer' : describePgError(lastError);
  throw new PostgresDestinationError(
    'ERR_DESTINATION_UNREACHABLE',
    settings.destination,
    `cannot connect to PostgreSQL at ${server} (database ${settings.database}, user ${settings.user}) ` +
      `within ${Math.round(settings.connectTimeoutMs / 1000)} s: ${why}`,
    { cause: lastError, sqlState: errorState(lastError) },
  );
}

function isAuthFailure(error: unknown): boolean {
  const state = errorState(error);
  if (state === '28P01' || state === '28000') return !tlsRefused(error);
  const message = error instanceof Error ? error.message : '';
  return /password must be a string|no password|password authentication/i.test(message);
}

function authError(settings: PostgresConnectionSettings, error: unknown): PostgresDestinationError {
  const message = error instanceof Error ? error.message : String(error);
  const missing = /must be a string|no password/i.test(message);
  return new PostgresDestinationError(
    'ERR_DESTINATION_AUTH',
    settings.destination,
    missing
      ? `PostgreSQL at ${serverName(settings)} asks user ${settings.user} for a password and none was found: ` +
          'set PGPASSWORD, or add a line for this server to ~/.pgpass (or the file PGPASSFILE names)'
      : `PostgreSQL at ${serverName(settings)} refused the credentials of user ${settings.user} for database ` +
          `${settings.database}: ${describePgError(error)}`,
    { cause: error, sqlState: errorState(error) },
  );
}

function session(client: pg.Client, tls: boolean): PostgresSession {
  const poolClient = {
    query: (text: string, values: unknown[]) => client.query(text, values),
    release: () => {},
  } as unknown as PostgresPoolClient;
  const pool: PostgresPool = {
    connect: () => Promise.resolve(poolClient),
    end: () => Promise.resolve(),
    options: {},
  };
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) }); // eslint-disable-line @typescript-eslint/no-explicit-any
  let closed = false;
  return {
    db,
    backendPid: (client as unknown as { processID: number }).processID,
    tls,
    async query(text, values = []) {
      const result = await client.query(text, [...values]);
      return { rows: result.rows as Array<Record<string, unknown>>, rowCount: result.rowCount ?? 0 };
    },
    async copyIn(copySql, chunks, signal) {
      const stream = client.query(copyFrom(copySql));
      await pipeline(Readable.from(chunks, { objectMode: false }), stream, { signal });
      return Number(stream.rowCount ?? 0);
    },
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy().catch(() => {});
      await client.end().catch(() => {});
    },
  };
}
