/**
 * vitest setup file of the suite-wide key scan (see `artifacts.ts`): in each worker, wraps
 * `child_process.spawn` so that the stdout and stderr of every child process a test starts (the
 * built CLI through any helper, or a test's own harness) are kept for the end-of-suite scan,
 * and the `DOMAIN_SYNC_API_KEY` it was given is registered.
 *
 * The child is not touched: same command, arguments and environment. Output is observed where
 * the test's own code receives it (every `'data'` event the stream emits, whether the test
 * listens, pipes, iterates or calls `read()`), so the stream's flowing mode is not changed.
 */
import childProcess, { type ChildProcess, type SpawnOptions } from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import { relative } from 'node:path';
import type { Readable } from 'node:stream';
import { expect } from 'vitest';
import { artifactsDir, recordCliRun } from './artifacts.js';

const WRAPPED = Symbol.for('domain-sync.key-scan.spawn-wrapped');
const registry = globalThis as { [WRAPPED]?: boolean };

if (artifactsDir() && !registry[WRAPPED]) {
  registry[WRAPPED] = true;
  const original = childProcess.spawn;
  const wrapped = function (this: unknown, ...params: unknown[]): ChildProcess {
    const child = (original as (...p: unknown[]) => ChildProcess).apply(this, params);
    observe(child, params);
    return child;
  };
  childProcess.spawn = wrapped as typeof childProcess.spawn;
  // ESM `import { spawn } from 'node:child_process'` sees the wrapper only after this.
  syncBuiltinESMExports();
}

function observe(child: ChildProcess, params: unknown[]): void {
  const command = String(params[0]);
  const args = Array.isArray(params[1]) ? (params[1] as unknown[]).map(String) : [];
  const options = ((Array.isArray(params[1]) ? params[2] : params[1]) ?? {}) as SpawnOptions;
  const env = (options.env ?? process.env) as Record<string, string | undefined>;
  const cwd = typeof options.cwd === 'string' ? options.cwd : process.cwd();
  const state = expect.getState();
  const test = `${state.testPath ? relative(process.cwd(), state.testPath) : '?'} > ${state.currentTestName ?? '?'}`;
  const stdout = tap(child.stdout);
  const stderr = tap(child.stderr);
  // The arguments after the script (for node children), so the command name can be found.
  const scriptAt = command === process.execPath ? args.findIndex((a) => !a.startsWith('-')) : -1;
  const shownArgs = scriptAt >= 0 ? args.slice(scriptAt + 1) : args;
  child.once('close', (code) => {
    recordCliRun(test, shownArgs, env, cwd, code, Buffer.concat(stdout), Buffer.concat(stderr));
  });
}

/** Collects every chunk the stream hands to its consumers. */
function tap(stream: Readable | null): Buffer[] {
  const chunks: Buffer[] = [];
  if (!stream) return chunks;
  const emit = stream.emit;
  stream.emit = function (this: Readable, event: string | symbol, ...rest: unknown[]): boolean {
    if (event === 'data') {
      const chunk = rest[0];
      chunks.push(Buffer.isBuffer(chunk) ? Buffer.from(chunk) : Buffer.from(String(chunk)));
    }
    return emit.call(this, event, ...rest);
  } as typeof stream.emit;
  return chunks;
}
