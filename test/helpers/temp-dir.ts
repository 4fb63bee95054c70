import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, onTestFinished } from 'vitest';
import { scanTempDirBeforeRemoval } from '../resilience/security/artifacts.js';

/**
 * A fresh directory under the OS temp dir, removed when the current test finishes. In a suite
 * run, its files are first searched for every registered API key (test/resilience/security).
 */
export async function tempDir(prefix = 'domain-sync-test-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const state = expect.getState();
  const test = `${state.testPath ?? '?'} > ${state.currentTestName ?? '?'}`;
  onTestFinished(async () => {
    scanTempDirBeforeRemoval(test, dir);
    await rm(dir, { recursive: true, force: true });
  });
  return dir;
}
