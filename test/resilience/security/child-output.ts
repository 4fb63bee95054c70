/**
 * How the output of child processes reaches the suite-wide key scan (see `artifacts.ts`): each
 * child a test starts is recorded explicitly, where it is started.
 *
 * - The one runner, `test/helpers/cli.ts` (`runCli`, `startCli`, `startNodeScript`), records every
 *   child it starts: tests that go through it have nothing to do.
 * - A test that starts a child another way calls {@link recordChildOutput} with the child right
 *   after `spawn`, or {@link recordFinishedChild} with the result of `spawnSync`.
 * - `test/unit/repo/child-processes.test.ts` reads every file under `test/` and fails for a child
 *   whose output is not passed to one of these, so a new test cannot slip past the scan.
 *
 * Recording keeps the raw bytes of stdout and stderr and registers the `DOMAIN_SYNC_API_KEY` the
 * child was given. Outside a suite run with the global setup (no artifact directory) it does
 * nothing.
 */
import type { ChildProcess } from 'node:child_process';
import { relative } from 'node:path';
import type { Readable } from 'node:stream';
import { expect } from 'vitest';
import { artifactsDir, recordCliRun } from './artifacts.js';

/** What a child was started with, as far as the scan cares. */
export interface StartedChild {
  /** Its arguments after the script: the first lower-case word is recorded as the command. */
  args: readonly string[];
  /** The environment it was given; `process.env` when it inherited this process's. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Its working directory. @default process.cwd() */
  cwd?: string;
}

/**
 * Keeps every chunk `child`'s stdout and stderr emit, and records them when it closes. The child
 * and the test's own reading are untouched: the chunks are observed where the streams hand them
 * to their consumers, so whether the test listens, pipes, iterates or calls `read()` (the
 * stream's flowing mode) does not change.
 */
export function recordChildOutput(child: ChildProcess, started: StartedChild): void {
  if (!artifactsDir()) return;
  const test = currentTest();
  const stdout = tap(child.stdout);
  const stderr = tap(child.stderr);
  child.once('close', (code) => {
    record(test, started, code, Buffer.concat(stdout), Buffer.concat(stderr));
  });
}

/** Records a child that already ended (`spawnSync`): its exit status and its whole output. */
export function recordFinishedChild(
  started: StartedChild,
  result: { status: number | null; stdout: string | Buffer | null; stderr: string | Buffer | null },
): void {
  if (!artifactsDir()) return;
  record(currentTest(), started, result.status, bytes(result.stdout), bytes(result.stderr));
}

function record(test: string, started: StartedChild, code: number | null, out: Buffer, err: Buffer): void {
  recordCliRun(test, started.args, started.env ?? process.env, started.cwd ?? process.cwd(), code, out, err);
}

/** `file > test name` of the test running now, for the scan's report. */
function currentTest(): string {
  const state = expect.getState();
  return `${state.testPath ? relative(process.cwd(), state.testPath) : '?'} > ${state.currentTestName ?? '?'}`;
}

function bytes(output: string | Buffer | null): Buffer {
  if (output === null) return Buffer.alloc(0);
  return Buffer.isBuffer(output) ? output : Buffer.from(output);
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
