import { pino, type DestinationStream } from 'pino';
import { createRequire } from 'node:module';
import type * as PinoPrettyModule from 'pino-pretty';
import type { LogFields, Logger, LogLevel } from './logger.js';
import { redact, redactText } from './redact.js';

/**
 * pino-pretty, loaded on first use (it is CommonJS, so synchronously): only a terminal gets
 * pretty lines, and a command whose logs are JSON (a pipe, a scheduler, a benchmark) should not
 * pay for loading it at start-up.
 */
function loadPinoPretty(): typeof PinoPrettyModule.PinoPretty {
  return (createRequire(import.meta.url)('pino-pretty') as typeof PinoPrettyModule).PinoPretty;
}

/** Options of {@link createPinoLogger}. */
export interface PinoLoggerOptions {
  /** @default 'info' */
  level?: LogLevel;
  /** Where JSON lines go. @default stderr (fd 2) */
  destination?: DestinationStream | number | string;
  /** Fields on every line. */
  base?: LogFields;
  /**
   * Human-readable lines (pino-pretty) instead of JSON; meant for a terminal on stderr.
   * Ignored when `destination` is given.
   * @default false
   */
  pretty?: boolean;
}

/**
 * A {@link Logger} writing one JSON object per line through pino (stderr by default), with
 * {@link redact} applied to every message and field so the API key cannot leak into logs.
 */
export function createPinoLogger(options: PinoLoggerOptions = {}): Logger {
  const destination =
    typeof options.destination === 'object'
      ? options.destination
      : options.pretty && options.destination === undefined
        ? loadPinoPretty()({
            destination: 2,
            sync: true,
            colorize: true,
            translateTime: 'SYS:HH:MM:ss',
            ignore: 'pid,hostname',
            singleLine: true,
          })
        : pino.destination({ dest: options.destination ?? 2, sync: true });
  const instance = pino(
    { level: options.level ?? 'info', base: options.base ?? {}, timestamp: pino.stdTimeFunctions.isoTime },
    destination,
  );
  return wrap(instance);
}

function wrap(instance: pino.Logger): Logger {
  const emit = (level: 'error' | 'warn' | 'info' | 'debug', msg: string, fields?: LogFields): void => {
    if (!instance.isLevelEnabled(level)) return;
    instance[level](fields ? redact(serializeErrors(fields)) : {}, redactText(msg));
  };
  return {
    error: (msg, fields) => emit('error', msg, fields),
    warn: (msg, fields) => emit('warn', msg, fields),
    info: (msg, fields) => emit('info', msg, fields),
    debug: (msg, fields) => emit('debug', msg, fields),
    child: (bindings) => wrap(instance.child(redact(bindings))),
    levelEnabled: (level) => instance.isLevelEnabled(level),
  };
}

function serializeErrors(fields: LogFields): LogFields {
  const out: LogFields = {};
  for (const [key, value] of Object.entries(fields)) {
    if (value instanceof Error) {
      const code = (value as { code?: unknown }).code;
      out[key] = { type: value.name, message: value.message, ...(code === undefined ? {} : { code }) };
    } else {
      out[key] = value;
    }
  }
  return out;
}
