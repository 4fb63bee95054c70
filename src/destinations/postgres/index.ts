/** A PostgreSQL destination of `publish` (re-exports only; docs/destinations.md). */
export { ADVISORY_LOCK_CLASS, publishToPostgres, WATERMARK_TABLE } from './publish.js';
export type { PostgresPublishResult, PublishToPostgresOptions, TablePublishResult } from './publish.js';
export { resolveConnectionSettings, serverName, SSL_MODES, DEFAULT_CONNECT_TIMEOUT_MS } from './settings.js';
export type { PostgresConnectionSettings, PostgresEnv, SslMode } from './settings.js';
export { PostgresDestinationError } from './errors.js';
export type { PostgresErrorCode } from './errors.js';
export { POSTGRES_TYPE } from './types.js';
export { ANALYST_VIEWS } from './views.js';
