/**
 * Base class of every error domain-sync raises on purpose.
 *
 * Every error has a stable `code` (`ERR_…`) that tests, the `--json` summary and the CLI's
 * exit-code map match on; the message is for people and may change.
 */
export class DomainSyncError extends Error {
  /** Stable machine-readable code, e.g. `ERR_CONFIG`. */
  readonly code: string;
  /** Whether repeating the same operation may succeed (read by retry policies only). */
  readonly retryable: boolean;

  constructor(code: string, message: string, options: { cause?: unknown; retryable?: boolean } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = options.retryable ?? false;
  }
}

/** Bad command-line usage: exit status 2. */
export class UsageError extends DomainSyncError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super('ERR_USAGE', message, options);
  }
}

/** Invalid configuration (file, environment or flags): exit status 2. `issues` name key paths. */
export class ConfigError extends DomainSyncError {
  readonly issues: readonly string[];
  constructor(issues: readonly string[], options: { cause?: unknown } = {}) {
    super(
      'ERR_CONFIG',
      issues.length === 1 ? `invalid config: ${issues[0]}` : `invalid config:\n  ${issues.join('\n  ')}`,
      options,
    );
    this.issues = issues;
  }
}

/** An operation was cancelled through its AbortSignal. */
export class AbortedError extends DomainSyncError {
  constructor(message = 'operation aborted', options: { cause?: unknown } = {}) {
    super('ERR_ABORTED', message, options);
  }
}
