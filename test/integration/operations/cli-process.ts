import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';

/** The built CLI (`npm test` builds before vitest runs). */
export const CLI_MAIN = join(import.meta.dirname, '..', '..', '..', 'dist', 'src', 'cli', 'main.js');

/** One pino line of the child's stderr. */
export type LogEvent = Record<string, unknown> & { msg?: string; level?: number };

/** A child process of the built CLI with its output collected. */
export interface CliProcess {
  child: ChildProcess;
  pid: number;
  stdout(): string;
  stderr(): string;
  /** Every JSON log line written to stderr so far. */
  events(): LogEvent[];
  /** Resolves with the first event matching `predicate` (rejects on exit or after `timeoutMs`). */
  waitForEvent(predicate: (event: LogEvent) => boolean, timeoutMs?: number): Promise<LogEvent>;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The `--json` summary (last stdout line), once exited. */
  summary(): Record<string, unknown>;
}

/**
 * Starts `node dist/src/cli/main.js ARGS` in `cwd` with a clean environment plus `env` (no
 * inherited DOMAIN_SYNC_* variables). Killed with SIGKILL when the test finishes if still alive.
 */
export function startCli(
  args: readonly string[],
  options: { cwd: string; env?: Record<string, string> },
): CliProcess {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('DOMAIN_SYNC_') && value !== undefined) env[key] = value;
  }
  Object.assign(env, options.env ?? {});
  const child = spawn(process.execPath, [CLI_MAIN, ...args], {
    cwd: options.cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  let done = false;
  void exited.then(() => (done = true));
  onTestFinished(() => {
    if (!done) child.kill('SIGKILL');
  });
  const events = (): LogEvent[] =>
    stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as LogEvent];
        } catch {
          return [];
        }
      });
  return {
    child,
    pid: child.pid!,
    stdout: () => stdout,
    stderr: () => stderr,
    events,
    exited,
    summary: () => JSON.parse(stdout.trim().split('\n').pop() ?? 'null') as Record<string, unknown>,
    waitForEvent: (predicate, timeoutMs = 60_000) =>
      new Promise((resolve, reject) => {
        const started = Date.now();
        const poll = (): void => {
          const found = events().find(predicate);
          if (found) return resolve(found);
          if (done)
            return reject(new Error(`process exited before the event; stderr:\n${stderr.slice(-3000)}`));
          if (Date.now() - started > timeoutMs) {
            return reject(new Error(`timed out waiting for an event; stderr:\n${stderr.slice(-3000)}`));
          }
          setTimeout(poll, 50);
        };
        poll();
      }),
  };
}

/** Runs the CLI to its end. */
export async function runCli(
  args: readonly string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<{ code: number | null; stdout: string; stderr: string; events: LogEvent[]; pid: number }> {
  const cli = startCli(args, options);
  const { code } = await cli.exited;
  return { code, stdout: cli.stdout(), stderr: cli.stderr(), events: cli.events(), pid: cli.pid };
}
