import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Config } from '../config/config.js';
import { awsSecretsFromEnv } from '../config/destinations.js';
import { configFileWarnings, loadConfig, readApiKey } from '../config/load.js';
import type { Logger, LogLevel } from '../log/logger.js';
import { createPinoLogger } from '../log/pino-logger.js';
import { registerSecret } from '../log/redact.js';
import { ConfigError, DomainSyncError } from '../util/domain-sync-error.js';
import { Output, type CliIo } from './output.js';

/** Global flags (docs/contract.md "Command line"), valid before or after the command name. */
export interface GlobalFlags {
  config?: string;
  db?: string;
  baseUrl?: string;
  json?: boolean;
  logLevel?: string;
}

/** Raised when a command needs the API key and `DOMAIN_SYNC_API_KEY` is not set: exit 2. */
export class MissingApiKeyError extends DomainSyncError {
  constructor() {
    super(
      'ERR_MISSING_API_KEY',
      'DOMAIN_SYNC_API_KEY is not set; this command calls the service and needs an API key',
    );
  }
}

/** What a command returns to the CLI: its exit status, its JSON summary and its text. */
export interface CommandResult {
  exitCode: number;
  summary: Record<string, unknown>;
  human: string[];
}

/**
 * Everything a command needs from the outside world, created once per invocation.
 * Config and logger are built lazily so `--help` and `simulate` need no config.
 */
export class CommandContext {
  readonly io: CliIo;
  readonly flags: GlobalFlags;
  readonly output: Output;
  readonly signal: AbortSignal;
  readonly commandName: string;
  private cachedConfig: Config | undefined;
  private cachedLogger: Logger | undefined;
  private readonly warnings: string[] = [];

  constructor(io: CliIo, flags: GlobalFlags, signal: AbortSignal, commandName: string) {
    this.io = io;
    this.flags = flags;
    this.signal = signal;
    this.commandName = commandName;
    this.output = new Output(io, flags.json === true);
  }

  /** The loaded config; throws {@link ConfigError} (exit 2) listing every problem. */
  get config(): Config {
    if (this.cachedConfig) return this.cachedConfig;
    const result = loadConfig({
      env: this.io.env,
      cwd: this.io.cwd,
      configPath: this.flags.config,
      dbPath: this.flags.db,
      baseUrl: this.flags.baseUrl,
      logLevel: this.flags.logLevel,
    });
    if (result.config === null) throw new ConfigError(result.errors);
    // Destination secrets are redacted like the API key (the AWS SDK reads them itself).
    for (const secret of awsSecretsFromEnv(this.io.env)) registerSecret(secret);
    this.cachedConfig = result.config;
    this.warnings.push(...result.warnings);
    if (result.config.sourcePath) this.warnings.push(...configFileWarnings(result.config.sourcePath));
    for (const warning of this.warnings) this.logger.warn('config warning', { warning });
    return result.config;
  }

  /**
   * The pino logger: JSON lines appended to `log.file` when the config sets one, stderr otherwise.
   * On a terminal without `--log-level`, stderr shows only warnings (bars show progress).
   */
  get logger(): Logger {
    if (this.cachedLogger) return this.cachedLogger;
    let level: LogLevel = this.cachedConfig?.log.level ?? 'info';
    const file = this.cachedConfig?.log.file ?? null;
    // On a terminal the progress bars show progress; info lines would interleave with them.
    if (file === null && this.flags.logLevel === undefined && this.output.interactive && level === 'info')
      level = 'warn';
    if (file !== null) mkdirSync(dirname(file), { recursive: true });
    this.cachedLogger = createPinoLogger({
      level,
      base: { command: this.commandName, ...(file === null ? {} : { pid: process.pid }) },
      ...(file === null
        ? { pretty: this.io.stderr.isTTY === true && !this.output.json }
        : { destination: file }),
    });
    return this.cachedLogger;
  }

  /** The API key from `DOMAIN_SYNC_API_KEY`; throws {@link MissingApiKeyError} (exit 2) when unset. */
  requireApiKey(): string {
    const { apiKey, warning } = readApiKey(this.io.env);
    if (apiKey === undefined) throw new MissingApiKeyError();
    registerSecret(apiKey);
    if (warning) this.logger.warn(warning);
    return apiKey;
  }

  /** The base URL from config/env/flags; a usage error (exit 2) naming all three when missing. */
  requireBaseUrl(): string {
    const baseUrl = this.config.api.baseUrl;
    if (baseUrl === null) {
      throw new ConfigError([
        'api.baseUrl is not set: set it in the config file, DOMAIN_SYNC_BASE_URL, or --base-url (it ends in /api/v1/igaming)',
      ]);
    }
    return baseUrl;
  }
}
