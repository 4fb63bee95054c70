import { userInfo } from 'node:os';
import type { PostgresDestinationConfig } from '../../config/destinations.js';
import { PostgresDestinationError } from './errors.js';

/*
 * Where and how to connect, the libpq way (docs/destinations.md "Connection"): each setting from
 * the destination's url, else its libpq environment variable, else libpq's default. The password
 * is not a setting: it comes from PGPASSWORD or the password file only (see client.ts), so
 * these settings are safe to log and show.
 */

/** libpq's `sslmode` values. */
export const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const;
export type SslMode = (typeof SSL_MODES)[number];

/** The environment the libpq variables are read from (the CLI passes the process's). */
export type PostgresEnv = Readonly<Record<string, string | undefined>>;

/** How to reach one PostgreSQL destination. Holds no secret. */
export interface PostgresConnectionSettings {
  /** `destinations.NAME`. */
  destination: string;
  host: string;
  port: number;
  user: string;
  database: string;
  /** The schema the tables go to. */
  schema: string;
  /** @default 'prefer' (try TLS, fall back to a plain connection when the server has none) */
  sslMode: SslMode;
  /** CA file for `verify-ca` / `verify-full`, or null for the system's. */
  sslRootCert: string | null;
  /** From `connect_timeout` (seconds, at least 2 as in libpq). @default 10000 */
  connectTimeoutMs: number;
  /** Server options (`-c statement_timeout=…`), from `options` / PGOPTIONS. */
  options: string | null;
  /** @default 'domain-sync' */
  applicationName: string;
}

/** Query parameters a destination url may carry (libpq's names). */
const URL_PARAMS = new Set([
  'sslmode',
  'connect_timeout',
  'application_name',
  'options',
  'sslrootcert',
  'host',
  'port',
  'dbname',
  'user',
]);

/** Default of `connect_timeout` (docs/contract.md "Destinations"). */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/**
 * The connection settings of `destination`: url first, then `env` (PGHOST, PGPORT, PGUSER,
 * PGDATABASE, PGSSLMODE, PGSSLROOTCERT, PGCONNECT_TIMEOUT, PGOPTIONS, PGAPPNAME), then libpq's
 * defaults (localhost, 5432, the OS user, a database named like the user). Throws
 * `ERR_CONFIG` (exit 2) naming `destinations.NAME.url` for a parameter libpq would not accept.
 */
export function resolveConnectionSettings(
  destination: PostgresDestinationConfig,
  env: PostgresEnv,
): PostgresConnectionSettings {
  const key = `destinations.${destination.name}.url`;
  const bad = (message: string): PostgresDestinationError =>
    new PostgresDestinationError('ERR_CONFIG', destination.name, `${key}: ${message}`);
  let url: URL;
  try {
    url = new URL(destination.url);
  } catch {
    throw bad('not a postgres://user@host:port/database URL');
  }
  for (const name of url.searchParams.keys()) {
    if (!URL_PARAMS.has(name)) {
      throw bad(`unknown parameter "${name}" (known: ${[...URL_PARAMS].join(', ')})`);
    }
  }
  const param = (name: string): string | undefined => {
    const value = url.searchParams.get(name);
    return value === null || value === '' ? undefined : value;
  };
  const envValue = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value === '' ? undefined : value;
  };

  const host =
    decodeURIComponent(url.hostname).replace(/^\[(.*)\]$/, '$1') ||
    param('host') ||
    envValue('PGHOST') ||
    'localhost';
  const portText = url.port || param('port') || envValue('PGPORT') || '5432';
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 1 || port > 65_535)
    throw bad(`port "${portText}" is not a port number`);
  const user = decodeURIComponent(url.username) || param('user') || envValue('PGUSER') || osUser();
  const database =
    decodeURIComponent(url.pathname.replace(/^\//, '')) || param('dbname') || envValue('PGDATABASE') || user;

  const sslText = param('sslmode') ?? envValue('PGSSLMODE') ?? 'prefer';
  if (!(SSL_MODES as readonly string[]).includes(sslText)) {
    const from = param('sslmode') === undefined ? 'PGSSLMODE' : `${key} sslmode`;
    throw new PostgresDestinationError(
      'ERR_CONFIG',
      destination.name,
      `${from}: "${sslText}" is not an sslmode (one of ${SSL_MODES.join(', ')})`,
    );
  }

  const timeoutText = param('connect_timeout') ?? envValue('PGCONNECT_TIMEOUT');
  let connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_MS;
  if (timeoutText !== undefined) {
    const seconds = Number(timeoutText);
    if (!Number.isFinite(seconds)) throw bad(`connect_timeout "${timeoutText}" is not a number of seconds`);
    // libpq waits forever for 0 or less; a publish must give up within about a minute, so those
    // keep the default instead. Below 2 s libpq rounds up to 2 s, and so do we.
    if (seconds > 0) connectTimeoutMs = Math.max(2, seconds) * 1000;
  }

  return {
    destination: destination.name,
    host,
    port,
    user,
    database,
    schema: destination.schema,
    sslMode: sslText as SslMode,
    sslRootCert: param('sslrootcert') ?? envValue('PGSSLROOTCERT') ?? null,
    connectTimeoutMs,
    options: param('options') ?? envValue('PGOPTIONS') ?? null,
    applicationName: param('application_name') ?? envValue('PGAPPNAME') ?? 'domain-sync',
  };
}

function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'postgres';
  }
}

/** `host:port`, as messages name the server. */
export function serverName(settings: PostgresConnectionSettings): string {
  return settings.host.includes(':')
    ? `[${settings.host}]:${settings.port}`
    : `${settings.host}:${settings.port}`;
}
