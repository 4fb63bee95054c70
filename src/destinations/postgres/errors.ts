import { DomainSyncError } from '../../util/domain-sync-error.js';

/*
 * Errors of a PostgreSQL destination. Every message names the destination (and, for the
 * connection, host and port) and never the password: the messages are built here from the
 * server's SQLSTATE and message, never from a connection string.
 */

/** Stable codes of {@link PostgresDestinationError}. */
export type PostgresErrorCode =
  /** No connection within the connect timeout (refused, no answer, name not found). */
  | 'ERR_DESTINATION_UNREACHABLE'
  /** The server refused the credentials, or asked for a password and none was found. */
  | 'ERR_DESTINATION_AUTH'
  /** An existing table cannot hold the data (named table and column); nothing was changed. */
  | 'ERR_DESTINATION_SCHEMA'
  /** A lock (the schema's publish lock, or a table's) was not granted within the wait. */
  | 'ERR_DESTINATION_LOCKED'
  /** A bad `destinations.NAME.url` parameter or environment value. */
  | 'ERR_CONFIG'
  /** Anything else the server or the connection did: rolled back. */
  | 'ERR_DESTINATION_FAILED';

/** A failure of one PostgreSQL destination; the publish to it was rolled back. */
export class PostgresDestinationError extends DomainSyncError {
  /** The destination's name (`destinations.NAME`). */
  readonly destination: string;
  /** The server's SQLSTATE, or the socket error code (`ECONNREFUSED`), when there was one. */
  readonly sqlState: string | null;

  constructor(
    code: PostgresErrorCode,
    destination: string,
    message: string,
    options: { cause?: unknown; retryable?: boolean; sqlState?: string | null } = {},
  ) {
    super(code, `destination "${destination}": ${message}`, {
      cause: options.cause,
      retryable: options.retryable ?? false,
    });
    this.destination = destination;
    this.sqlState = options.sqlState ?? null;
  }
}

/** SQLSTATE classes and codes after which the whole publish may be tried again on a new connection. */
const RETRYABLE_STATES = new Set([
  '57P01', // admin_shutdown (pg_terminate_backend, a server restart)
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up)
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '53300', // too_many_connections
]);

/** Socket errors that mean the connection went away, not that the request was wrong. */
const RETRYABLE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ECONNREFUSED', 'EHOSTUNREACH']);

/** The SQLSTATE of a server error, or the socket code of a network error, if any. */
export function errorState(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : null;
}

/** Whether a failure mid-publish may be tried again (it was rolled back either way). */
export function isTransient(error: unknown): boolean {
  if (error instanceof PostgresDestinationError) return error.retryable;
  const state = errorState(error);
  if (
    state !== null &&
    (RETRYABLE_STATES.has(state) || state.startsWith('08') || RETRYABLE_SOCKET_CODES.has(state))
  )
    return true;
  const message = error instanceof Error ? error.message : '';
  // node-postgres reports a socket closed under it in words, without a code.
  return /Connection terminated|connection (?:was )?closed|Client has encountered a connection error/i.test(
    message,
  );
}

/** A short description of a server or socket error: its message, with the SQLSTATE when there is one. */
export function describePgError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const state = errorState(error);
  const detail = (error as { where?: unknown } | null)?.where;
  const where = typeof detail === 'string' && detail !== '' ? ` (${detail.split('\n')[0]})` : '';
  return state !== null && /^[0-9A-Z]{5}$/.test(state)
    ? `${message}${where} [SQLSTATE ${state}]`
    : `${message}${where}`;
}
