import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { onTestFinished } from 'vitest';
import { CLI } from '../../helpers/cli.js';

/** How one child process of the built CLI ended. */
export interface ChildOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  pid: number;
  stdout: string;
  stderr: string;
  /** Wall time from spawn to exit. */
  elapsedMs: number;
  /** True when this harness sent SIGKILL before the child exited on its own. */
  killedByUs: boolean;
  /** Time from spawn to the SIGKILL, when one was sent. */
  killedAtMs: number | null;
}

/** Decides, on every tick of the watcher, whether to kill the child now. */
export type KillTrigger = (elapsedMs: number) => boolean | Promise<boolean>;

/**
 * Runs `node dist/src/cli/main.js ARGS` with exactly `env` (plus PATH), and, when `trigger` is
 * given, polls it about every millisecond and sends SIGKILL the first time it says so. No
 * graceful signal is ever sent: SIGKILL cannot be caught, so the child gets no chance to clean up.
 */
export function runChild(
  args: readonly string[],
  options: {
    cwd: string;
    env: Record<string, string>;
    trigger?: KillTrigger;
    /** Preloaded with `node --import` (used only to move the child's clock forward). */
    importUrl?: string;
    timeoutMs?: number;
  },
): Promise<ChildOutcome> {
  const nodeArgs = options.importUrl === undefined ? [] : ['--import', options.importUrl];
  const started = performance.now();
  const child = spawn(process.execPath, [...nodeArgs, CLI, ...args], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let exited = false;
  let killedAtMs: number | null = null;
  onTestFinished(() => {
    if (!exited) child.kill('SIGKILL');
  });
  const overall = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 180_000);

  const trigger = options.trigger;
  if (trigger !== undefined) {
    const tick = async (): Promise<void> => {
      if (exited || killedAtMs !== null) return;
      const now = performance.now() - started;
      if (await trigger(now)) {
        if (exited) return;
        // exitCode/signalCode are still null: the process has not been reaped, so it gets the signal.
        if (child.exitCode === null && child.signalCode === null && child.kill('SIGKILL')) {
          killedAtMs = performance.now() - started;
        }
        return;
      }
      setTimeout(() => void tick(), 1);
    };
    void tick();
  }

  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      exited = true;
      clearTimeout(overall);
      resolve({
        code,
        signal,
        pid: child.pid!,
        stdout,
        stderr,
        elapsedMs: performance.now() - started,
        killedByUs: killedAtMs !== null && signal === 'SIGKILL',
        killedAtMs,
      });
    });
  });
}

/**
 * A `node --import` module (as a data: URL) that moves the child's wall clock `offsetMs` ahead:
 * `Date.now()` and `new Date()` only. It stands for "the next run happens later", which the
 * product's own waits are defined on (an unresolved enrichment intent is re-checked after 10
 * minutes, docs/enrich.md); nothing else in the child changes.
 */
export function clockAheadImport(offsetMs: number): string {
  // A Proxy rather than a subclass, so that `value instanceof Date` still holds for dates made
  // by native code (fs.Stats, better-sqlite3).
  const source = `
const offset = ${Math.trunc(offsetMs)};
const RealDate = Date;
const realNow = RealDate.now.bind(RealDate);
RealDate.now = () => realNow() + offset;
globalThis.Date = new Proxy(RealDate, {
  construct(target, args, newTarget) {
    return Reflect.construct(target, args.length === 0 ? [RealDate.now()] : args, newTarget);
  },
});
`;
  return `data:text/javascript,${encodeURIComponent(source)}`;
}

/** The `--json` summary (the last stdout line), or null when there is none (killed). */
export function summaryOf(outcome: ChildOutcome): Record<string, unknown> | null {
  const last = outcome.stdout.trim().split('\n').pop();
  if (!last) return null;
  try {
    return JSON.parse(last) as Record<string, unknown>;
  } catch {
    return null;
  }
}

/** The child's output, shortened for an assertion message. */
export function describeOutcome(outcome: ChildOutcome): string {
  return (
    `exit ${outcome.code} signal ${outcome.signal} after ${Math.round(outcome.elapsedMs)} ms\n` +
    `stdout: ${outcome.stdout.slice(-2000)}\nstderr: ${outcome.stderr.slice(-3000)}`
  );
}
