import { existsSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import type { z } from 'zod';
import { parseLogLevel } from '../log/logger.js';
import { BASE_PATH, checkServiceBaseUrl } from '../util/base-url.js';
import { parseDuration } from '../util/duration.js';
import type { Config, PipelineConfig, PipelineStepConfig } from './config.js';
import { DEFAULT_CONFIG_FILE, DEFAULTS } from './defaults.js';
import { resolveDestination, type DestinationConfig } from './destinations.js';
import { configFileSchema, type ConfigFile } from './schema.js';

export { BASE_PATH };

/** What the CLI passes in; nothing here reads globals. */
export interface LoadConfigOptions {
  /** `process.env` or a copy. */
  env: Readonly<Record<string, string | undefined>>;
  /** Directory relative paths are resolved against. */
  cwd: string;
  /** `--config FILE` */
  configPath?: string;
  /** `--db FILE` */
  dbPath?: string;
  /** `--base-url URL` */
  baseUrl?: string;
  /** `--log-level LEVEL` */
  logLevel?: string;
}

/** The outcome of {@link loadConfig}: `config` is null exactly when `errors` is not empty. */
export interface LoadConfigResult {
  config: Config | null;
  /** Each names the key path or the source: `api.timeoutMs: expected number, received string`. */
  errors: string[];
  warnings: string[];
}

/**
 * Loads the configuration: defaults, then the file (`--config`, `DOMAIN_SYNC_CONFIG` or
 * `./config.json` when present), then environment variables, then flags. Never throws for bad
 * input; every problem is returned in `errors` with the key path named.
 */
export function loadConfig(options: LoadConfigOptions): LoadConfigResult {
  const errors: string[] = [];
  const warnings: string[] = [];
  const { env, cwd } = options;

  // 1. Which file, if any.
  let sourcePath: string | null = null;
  let fileConfig: ConfigFile = {};
  const explicit = options.configPath ?? nonEmpty(env.DOMAIN_SYNC_CONFIG);
  const explicitSource = options.configPath !== undefined ? '--config' : 'DOMAIN_SYNC_CONFIG';
  if (explicit !== undefined) {
    sourcePath = resolve(cwd, explicit);
    if (!existsSync(sourcePath)) {
      return { config: null, errors: [`${explicitSource}: config file not found: ${sourcePath}`], warnings };
    }
  } else if (existsSync(resolve(cwd, DEFAULT_CONFIG_FILE))) {
    sourcePath = resolve(cwd, DEFAULT_CONFIG_FILE);
  }
  if (sourcePath !== null) {
    const parsed = readConfigFile(sourcePath);
    if ('error' in parsed) return { config: null, errors: [parsed.error], warnings };
    const result = configFileSchema.safeParse(parsed.value);
    if (!result.success) {
      return { config: null, errors: formatZodIssues(result.error.issues, sourcePath), warnings };
    }
    fileConfig = result.data;
    if (JSON.stringify(parsed.value).match(/client_[A-Za-z0-9]/)) {
      warnings.push(
        `${sourcePath}: contains something that looks like an API key; the key is only read from DOMAIN_SYNC_API_KEY, remove it from the file`,
      );
    }
  }

  // 2. Merge defaults ← file ← env ← flags.
  const api = { ...DEFAULTS.api, ...stripUndefined(fileConfig.api ?? {}) };
  const baseUrlFromEnv = nonEmpty(env.DOMAIN_SYNC_BASE_URL);
  let baseUrlSource = 'api.baseUrl';
  if (baseUrlFromEnv !== undefined) {
    api.baseUrl = baseUrlFromEnv;
    baseUrlSource = 'DOMAIN_SYNC_BASE_URL';
  }
  if (options.baseUrl !== undefined) {
    api.baseUrl = options.baseUrl;
    baseUrlSource = '--base-url';
  }
  let databasePath = fileConfig.database?.path ?? DEFAULTS.database.path;
  const dbFromEnv = nonEmpty(env.DOMAIN_SYNC_DB);
  if (dbFromEnv !== undefined) databasePath = dbFromEnv;
  if (options.dbPath !== undefined) databasePath = options.dbPath;

  // 3. Normalise and check rules.
  if (api.baseUrl !== null && api.baseUrl !== undefined) {
    const checked = checkBaseUrl(api.baseUrl);
    if (checked.error) errors.push(`${baseUrlSource}: ${checked.error}`);
    else api.baseUrl = checked.url ?? null;
  }
  const sync = { ...DEFAULTS.sync, ...stripUndefined(fileConfig.sync ?? {}) };
  const enrich = { ...DEFAULTS.enrich, ...stripUndefined(fileConfig.enrich ?? {}) };
  const overlapMs = durationOrError('sync.overlap', sync.overlap, errors);
  const staleAfterMs = durationOrError('enrich.staleAfter', enrich.staleAfter, errors);
  const waitMs = durationOrError('enrich.wait', enrich.wait, errors);
  const exportsInput = { ...DEFAULTS.exports, ...stripUndefined(fileConfig.exports ?? {}) };
  const exportPollDeadlineMs = durationOrError('exports.pollDeadline', exportsInput.pollDeadline, errors);
  const exportRetentionMs = durationOrError('exports.retention', exportsInput.retention, errors);
  const failureBackoffMs = durationOrError('enrich.failureBackoff', enrich.failureBackoff, errors);
  const lockInput = { ...DEFAULTS.lock, ...stripUndefined(fileConfig.lock ?? {}) };
  const lockLeaseMs = durationOrError('lock.lease', lockInput.lease, errors);
  const lockWaitMs = durationOrError('lock.wait', lockInput.wait, errors);
  // A lease shorter than a second would be renewed more often than SQLite can usefully commit.
  if (parseDuration(lockInput.lease) !== null && lockLeaseMs < 1000) {
    errors.push(`lock.lease: must be at least 1s, got "${lockInput.lease}"`);
  }
  const logFile = fileConfig.log?.file ?? DEFAULTS.log.file;

  const levelInput = options.logLevel ?? fileConfig.log?.level;
  const levelSource = options.logLevel !== undefined ? '--log-level' : 'log.level';
  const level = parseLogLevel(levelInput, levelSource, DEFAULTS.log.level as 'info');
  if (level.warning) {
    // A bad level on the command line is a usage error; in the file it is only a warning.
    if (options.logLevel !== undefined) errors.push(level.warning.replace(/; using .*$/, ''));
    else warnings.push(level.warning);
  }

  const pipelines: Record<string, PipelineConfig> = {};
  const pipelineInput = { ...DEFAULTS.pipelines, ...(fileConfig.pipelines ?? {}) };
  for (const [name, pipeline] of Object.entries(pipelineInput)) {
    const schedule = pipeline.schedule ?? null;
    if (schedule !== null && !looksLikeCron(schedule)) {
      errors.push(`pipelines.${name}.schedule: not a cron expression: "${schedule}"`);
    }
    pipelines[name] = {
      steps: pipeline.steps.map((step): PipelineStepConfig =>
        typeof step === 'string'
          ? { type: step as PipelineStepConfig['type'], options: {}, continueOnError: false }
          : {
              type: (step as { type: PipelineStepConfig['type'] }).type,
              options: (step as { options?: Record<string, unknown> }).options ?? {},
              continueOnError: (step as { continueOnError?: boolean }).continueOnError ?? false,
            },
      ),
      schedule,
      timezone: pipeline.timezone ?? null,
      catchUp: pipeline.catchUp ?? 'none',
    };
  }

  const destinations: Record<string, DestinationConfig> = {};
  for (const [name, input] of Object.entries(fileConfig.destinations ?? {})) {
    const destination = resolveDestination(name, input, errors);
    if (destination !== null) destinations[name] = destination;
  }
  const snapshotTo = fileConfig.snapshots?.to ?? DEFAULTS.snapshots.to;
  snapshotTo.forEach((name, index) => {
    const destination = fileConfig.destinations?.[name];
    if (destination === undefined) errors.push(`snapshots.to.${index}: no destination named "${name}"`);
    else if (destination.type !== 's3') {
      errors.push(`snapshots.to.${index}: destination "${name}" is of type ${destination.type}, not s3`);
    }
  });
  const credits = {
    maxPerDay: fileConfig.credits?.maxPerDay ?? DEFAULTS.credits.maxPerDay,
    maxPerMonth: fileConfig.credits?.maxPerMonth ?? DEFAULTS.credits.maxPerMonth,
  };

  if (errors.length > 0) return { config: null, errors, warnings };

  const config: Config = {
    api: { ...api, baseUrl: api.baseUrl ?? null, queryParams: { ...api.queryParams } },
    database: { path: absolute(cwd, databasePath) },
    exports: {
      dir: absolute(cwd, exportsInput.dir),
      creditsPerRowGuess: exportsInput.creditsPerRowGuess,
      pollDeadlineMs: exportPollDeadlineMs,
      retentionMs: exportRetentionMs,
    },
    snapshots: {
      dir: absolute(cwd, fileConfig.snapshots?.dir ?? DEFAULTS.snapshots.dir),
      retainDates: fileConfig.snapshots?.retainDates ?? DEFAULTS.snapshots.retainDates,
      to: [...new Set(snapshotTo)],
    },
    sync: { perPage: sync.perPage, overlapMs, concurrency: sync.concurrency },
    enrich: {
      budget: enrich.budget,
      staleAfterMs,
      concurrency: enrich.concurrency,
      strategy: enrich.strategy,
      waitMs,
      failureBackoffMs,
      maxPollIntervalMs: enrich.maxPollIntervalMs,
    },
    log: { level: level.level, file: logFile === null ? null : absolute(cwd, logFile) },
    lock: { leaseMs: lockLeaseMs, waitMs: lockWaitMs },
    credits,
    destinations,
    pipelines,
    sourcePath,
  };
  return { config: deepFreeze(config), errors, warnings };
}

/**
 * Checks and normalises a base URL by the rule of `src/util/base-url.ts` (http(s), ends in
 * `/api/v1/igaming`, a trailing `/` is dropped); the error is worded for a config message.
 */
export function checkBaseUrl(
  input: string,
): { url: string; error?: undefined } | { url?: undefined; error: string } {
  const { base, problem } = checkServiceBaseUrl(input);
  if (base !== undefined) return { url: base.href };
  switch (problem.rule) {
    case 'url':
      return { error: `not a URL: "${input}"` };
    case 'protocol':
      return { error: `must be an http or https URL, got "${problem.protocol}"` };
    case 'credentials':
      return { error: 'must not contain credentials' };
    case 'query':
      return { error: 'must not contain a query or fragment' };
    case 'path':
      return { error: `must end in ${BASE_PATH} (got "${problem.got}")` };
  }
}

/**
 * Reads `DOMAIN_SYNC_API_KEY`. The key never enters {@link Config}; it goes straight to the
 * client's options, which keeps `Config` safe to log and print.
 */
export function readApiKey(env: Readonly<Record<string, string | undefined>>): {
  apiKey?: string;
  warning?: string;
} {
  const apiKey = nonEmpty(env.DOMAIN_SYNC_API_KEY)?.trim();
  if (apiKey === undefined) return {};
  // docs/service-api.md "Authentication": keys start with client_. A different prefix is probably a
  // paste error, but the service is the judge, so only warn.
  if (!apiKey.startsWith('client_')) {
    return { apiKey, warning: 'DOMAIN_SYNC_API_KEY does not start with "client_"; is it the right value?' };
  }
  return { apiKey };
}

/** Warns when a config file that is readable by other users contains anything key-like. */
export function configFileWarnings(path: string): string[] {
  try {
    const mode = statSync(path).mode;
    const text = readFileSync(path, 'utf8');
    if (mode & 0o044 && /client_[A-Za-z0-9]/.test(text)) {
      return [`${path}: readable by other users and contains something key-like`];
    }
  } catch {
    // Reported elsewhere.
  }
  return [];
}

function readConfigFile(path: string): { value: unknown } | { error: string } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    return { error: `${path}: cannot read config file: ${(error as Error).message}` };
  }
  try {
    return { value: JSON.parse(text) };
  } catch (error) {
    return { error: `${path}: not valid JSON: ${(error as Error).message}` };
  }
}

function formatZodIssues(issues: readonly z.core.$ZodIssue[], source: string): string[] {
  return issues.flatMap((issue) => {
    const path = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => `${path ? `${path}.` : ''}${key}: unknown key (in ${source})`);
    }
    return [`${path || '(root)'}: ${issue.message} (in ${source})`];
  });
}

function durationOrError(key: string, value: string, errors: string[]): number {
  const ms = parseDuration(value);
  if (ms === null) {
    errors.push(`${key}: not a duration: "${value}" (write it like 90s, 15m, 12h or 30d)`);
    return 0;
  }
  return ms;
}

function looksLikeCron(expression: string): boolean {
  const fields = expression.trim().split(/\s+/);
  return (
    (fields.length === 5 || fields.length === 6) && fields.every((f) => /^[\d*/,\-A-Za-z?LW#]+$/.test(f))
  );
}

function absolute(cwd: string, path: string): string {
  return isAbsolute(path) ? path : resolve(cwd, path);
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

function stripUndefined<T extends object>(value: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as never;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
