/**
 * The one way tests start child processes: the CLI (`runCli`, `startCli`) or another script of
 * the repository (`startNodeScript`), always on `process.execPath` and always from the
 * TypeScript sources (`SOURCE_NODE_ARGS`), so no build is needed and none can be stale.
 *
 * Every child started in a test is killed with SIGKILL when the test finishes if it is still
 * alive, and its output is recorded for the suite-wide key scan
 * (test/resilience/security/child-output.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { expect, onTestFinished } from 'vitest';
import { recordChildOutput } from '../resilience/security/child-output.js';

const ROOT = join(import.meta.dirname, '..', '..');

/**
 * Node options that run the repository's `.ts` files directly: Node strips the types, and
 * test/support/register-ts.ts resolves their `./x.js` imports to `./x.ts`. Worker threads the
 * child starts inherit them.
 */
export const SOURCE_NODE_ARGS: readonly string[] = Object.freeze([
  '--import',
  pathToFileURL(join(ROOT, 'test', 'support', 'register-ts.ts')).href,
]);

/** The CLI's entry point, as a source file. */
export const CLI_SOURCE = join(ROOT, 'src', 'cli', 'main.ts');

/** One pino line of the child's stderr. */
export type LogEvent = Record<string, unknown> & { msg?: string; level?: number };

/** Decides, on every tick of the watcher (about every millisecond), whether to kill the child now. */
export type KillTrigger = (elapsedMs: number) => boolean | Promise<boolean>;

/** Options of {@link startCli}, {@link runCli} and {@link startNodeScript}. */
export interface ChildOptions {
  /** @default process.cwd() */
  cwd?: string;
  /** Variables added to the environment (an `undefined` value is ignored). */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * Start from `PATH` alone instead of this process's environment without its `DOMAIN_SYNC_*`
   * variables (which a child never inherits: no key leaks in from the developer's shell).
   */
  isolatedEnv?: boolean;
  /** Node options after {@link SOURCE_NODE_ARGS}, before the script (another `--import`, say). */
  nodeArgs?: readonly string[];
  /** SIGKILL the first time this says so. No graceful signal: the child cannot clean up. */
  killWhen?: KillTrigger;
  /** SIGKILL after this long. @default 180000 */
  timeoutMs?: number;
}

/** How a child ended, with its whole output. */
export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  pid: number;
  stdout: string;
  stderr: string;
  /** Every JSON log line of stderr. */
  events: LogEvent[];
  /** Wall time from spawn to exit. */
  elapsedMs: number;
  /** True when this harness sent SIGKILL before the child exited on its own. */
  killedByUs: boolean;
  /** Time from spawn to the SIGKILL this harness sent, if it sent one. */
  killedAtMs: number | null;
}

/** A running child. */
export interface CliProcess {
  child: ChildProcess;
  pid: number;
  stdout(): string;
  stderr(): string;
  /** Every JSON log line written to stderr so far. */
  events(): LogEvent[];
  /** Resolves with the first match of `re` in stdout or stderr (rejects on exit or timeout). */
  waitForOutput(re: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Resolves with the first event `predicate` accepts (rejects on exit or timeout). */
  waitForEvent(predicate: (event: LogEvent) => boolean, timeoutMs?: number): Promise<LogEvent>;
  /** Sends `signal` (SIGKILL by default) if the child is still running. */
  kill(signal?: NodeJS.Signals): void;
  /** Resolves when the child has exited and its streams are closed. */
  exited: Promise<CliRun>;
  /** The `--json` summary (the last stdout line), once exited. */
  summary(): Record<string, unknown>;
}

/** Starts the CLI from source with `args`. */
export function startCli(args: readonly string[], options: ChildOptions = {}): CliProcess {
  return startNodeScript(CLI_SOURCE, args, options);
}

/** Runs the CLI from source to its end (or until `killWhen` or the timeout kills it). */
export function runCli(args: readonly string[], options: ChildOptions = {}): Promise<CliRun> {
  return startCli(args, options).exited;
}

/** Starts `node SCRIPT ARGS` on this Node, with the sources runnable (see the file comment). */
export function startNodeScript(
  script: string,
  args: readonly string[],
  options: ChildOptions = {},
): CliProcess {
  const cwd = options.cwd ?? process.cwd();
  const env = childEnv(options);
  const started = performance.now();
  const child = spawn(process.execPath, [...SOURCE_NODE_ARGS, ...(options.nodeArgs ?? []), script, ...args], {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  recordChildOutput(child, { args, env, cwd });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const text = (chunks: Buffer[]): string => Buffer.concat(chunks).toString('utf8');
  const watchers = new Set<() => void>();
  const notify = (): void => {
    for (const check of [...watchers]) check();
  };
  child.stdout!.on('data', (chunk: Buffer) => (out.push(chunk), notify()));
  child.stderr!.on('data', (chunk: Buffer) => (err.push(chunk), notify()));

  let done = false;
  let killedAtMs: number | null = null;
  const kill = (signal: NodeJS.Signals = 'SIGKILL'): void => {
    // exitCode/signalCode are still null until the process is reaped, so it gets the signal.
    if (done || child.exitCode !== null || child.signalCode !== null) return;
    if (child.kill(signal) && signal === 'SIGKILL') killedAtMs ??= performance.now() - started;
  };
  const overall = setTimeout(() => kill(), options.timeoutMs ?? 180_000);
  if (insideTest()) onTestFinished(() => kill());

  const exited = new Promise<CliRun>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      done = true;
      clearTimeout(overall);
      notify();
      const stderr = text(err);
      resolve({
        code,
        signal,
        pid: child.pid!,
        stdout: text(out),
        stderr,
        events: logEvents(stderr),
        elapsedMs: performance.now() - started,
        killedByUs: killedAtMs !== null && signal === 'SIGKILL',
        killedAtMs,
      });
    });
  });

  const trigger = options.killWhen;
  if (trigger !== undefined) {
    const tick = async (): Promise<void> => {
      if (done || killedAtMs !== null) return;
      if (await trigger(performance.now() - started)) return kill();
      setTimeout(() => void tick(), 1);
    };
    void tick();
  }

  /** Resolves with `check()`'s first non-undefined answer, checked after every chunk of output. */
  const waitUntil = <T>(check: () => T | undefined, what: string, timeoutMs: number): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const finish = (settle: () => void): void => {
        watchers.delete(watcher);
        clearTimeout(timer);
        settle();
      };
      const watcher = (): void => {
        const found = check();
        if (found !== undefined) finish(() => resolve(found));
        else if (done) {
          const message = `the process exited (${child.exitCode ?? child.signalCode}) before ${what}`;
          finish(() => reject(new Error(`${message}; stderr:\n${text(err).slice(-3000)}`)));
        }
      };
      const timer = setTimeout(
        () =>
          finish(() =>
            reject(new Error(`timed out waiting for ${what}; stderr:\n${text(err).slice(-3000)}`)),
          ),
        timeoutMs,
      );
      watchers.add(watcher);
      watcher();
    });

  return {
    child,
    pid: child.pid!,
    stdout: () => text(out),
    stderr: () => text(err),
    events: () => logEvents(text(err)),
    waitForOutput: (re, timeoutMs = 30_000) =>
      waitUntil(() => re.exec(text(out)) ?? re.exec(text(err)) ?? undefined, String(re), timeoutMs),
    waitForEvent: (predicate, timeoutMs = 60_000) =>
      waitUntil(() => logEvents(text(err)).find(predicate), 'the event', timeoutMs),
    kill,
    exited,
    summary: () => JSON.parse(text(out).trim().split('\n').pop() ?? 'null') as Record<string, unknown>,
  };
}

/** The JSON log lines of a stderr text (pino writes one object per line). */
export function logEvents(stderr: string): LogEvent[] {
  return stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as LogEvent];
      } catch {
        return [];
      }
    });
}

/** The `--json` summary (the last stdout line), or null when there is none (killed). */
export function summaryOf(run: CliRun): Record<string, unknown> | null {
  const last = run.stdout.trim().split('\n').pop();
  if (!last) return null;
  try {
    return JSON.parse(last) as Record<string, unknown>;
  } catch {
    return null;
  }
}

/** The child's ending and output, shortened for an assertion message. */
export function describeRun(run: CliRun): string {
  return (
    `exit ${run.code} signal ${run.signal} after ${Math.round(run.elapsedMs)} ms\n` +
    `stdout: ${run.stdout.slice(-2000)}\nstderr: ${run.stderr.slice(-3000)}`
  );
}

/** False in a `beforeAll` hook, where the caller awaits the child (the timeout still applies). */
function insideTest(): boolean {
  return expect.getState().currentTestName !== undefined;
}

function childEnv(options: ChildOptions): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  if (options.isolatedEnv) env.PATH = process.env.PATH ?? '';
  else {
    for (const [key, value] of Object.entries(process.env)) {
      if (!key.startsWith('DOMAIN_SYNC_') && value !== undefined) env[key] = value;
    }
  }
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (value !== undefined) env[key] = value;
  }
  return env;
}
