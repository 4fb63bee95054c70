/** Log levels, most to least severe. `silent` turns logging off. */
export const LOG_LEVELS = ['silent', 'error', 'warn', 'info', 'debug', 'trace'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Structured fields attached to a log event. */
export type LogFields = Record<string, unknown>;

/**
 * What library code logs through: a short event message plus fields.
 * Library code receives one through its options and defaults to {@link noopLogger}.
 */
export interface Logger {
  error(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  debug(msg: string, fields?: LogFields): void;
  /** A logger that adds `bindings` to every event. */
  child(bindings: LogFields): Logger;
  /**
   * Whether events at `level` are written at all, so a hot path can skip building (and
   * redacting) fields nobody reads. A logger without it is taken to write every level.
   */
  levelEnabled?(level: 'error' | 'warn' | 'info' | 'debug'): boolean;
}

/** A logger that drops everything. */
export const noopLogger: Logger = {
  error() {},
  warn() {},
  info() {},
  debug() {},
  child() {
    return noopLogger;
  },
};

/**
 * Parses a log level name. Returns `{ level }`, or `{ level: fallback, warning }` naming where
 * the bad value came from (openai-node `parseLogLevel` does the same).
 */
export function parseLogLevel(
  value: string | undefined,
  source: string,
  fallback: LogLevel = 'info',
): { level: LogLevel; warning?: string } {
  if (value === undefined || value === '') return { level: fallback };
  const lower = value.toLowerCase();
  if ((LOG_LEVELS as readonly string[]).includes(lower)) return { level: lower as LogLevel };
  return {
    level: fallback,
    warning: `${source}: unknown log level "${value}" (expected one of ${LOG_LEVELS.join(', ')}); using "${fallback}"`,
  };
}

/** An in-memory logger for tests: records every event (after redaction by its owner). */
export class MemoryLogger implements Logger {
  readonly events: Array<{ level: Exclude<LogLevel, 'silent' | 'trace'>; msg: string; fields: LogFields }>;
  private readonly bindings: LogFields;

  constructor(bindings: LogFields = {}, events?: MemoryLogger['events']) {
    this.bindings = bindings;
    this.events = events ?? [];
  }
  error(msg: string, fields?: LogFields): void {
    this.events.push({ level: 'error', msg, fields: { ...this.bindings, ...fields } });
  }
  warn(msg: string, fields?: LogFields): void {
    this.events.push({ level: 'warn', msg, fields: { ...this.bindings, ...fields } });
  }
  info(msg: string, fields?: LogFields): void {
    this.events.push({ level: 'info', msg, fields: { ...this.bindings, ...fields } });
  }
  debug(msg: string, fields?: LogFields): void {
    this.events.push({ level: 'debug', msg, fields: { ...this.bindings, ...fields } });
  }
  child(bindings: LogFields): Logger {
    return new MemoryLogger({ ...this.bindings, ...bindings }, this.events);
  }
  /** Every event serialised, for "the key never appears" checks. */
  text(): string {
    return this.events.map((e) => JSON.stringify(e)).join('\n');
  }
}
