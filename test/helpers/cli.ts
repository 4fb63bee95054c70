import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';

/** The built CLI entry point (`npm test` builds before running vitest). */
export const CLI = join(import.meta.dirname, '..', '..', 'dist', 'src', 'cli', 'main.js');

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI to completion with `env` added to a clean environment (no inherited key). */
export function runCliProcess(
  args: readonly string[],
  options: { env?: Record<string, string | undefined>; cwd?: string; timeoutMs?: number } = {},
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: options.cwd ?? process.cwd(),
      env: cleanEnv(options.env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Starts a long-running CLI command; killed when the test finishes. */
export function startCliProcess(
  args: readonly string[],
  options: { env?: Record<string, string | undefined>; cwd?: string } = {},
): {
  child: ChildProcess;
  output: () => { stdout: string; stderr: string };
  waitFor: (re: RegExp, timeoutMs?: number) => Promise<RegExpMatchArray>;
} {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: options.cwd ?? process.cwd(),
    env: cleanEnv(options.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const waitFor = (re: RegExp, timeoutMs = 30_000): Promise<RegExpMatchArray> =>
    new Promise((resolve, reject) => {
      const started = Date.now();
      const poll = (): void => {
        const match = re.exec(stdout) ?? re.exec(stderr);
        if (match) return resolve(match);
        if (child.exitCode !== null)
          return reject(new Error(`process exited (${child.exitCode}) before ${re}: ${stderr}`));
        if (Date.now() - started > timeoutMs) return reject(new Error(`timed out waiting for ${re}`));
        setTimeout(poll, 25);
      };
      poll();
    });
  return { child, output: () => ({ stdout, stderr }), waitFor };
}

function cleanEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('DOMAIN_SYNC_') && value !== undefined) env[key] = value;
  }
  for (const [key, value] of Object.entries(extra)) {
    if (value !== undefined) env[key] = value;
  }
  return env;
}
