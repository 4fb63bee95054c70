import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/config.js';
import { MemoryLogger } from '../../src/log/logger.js';
import {
  openRunContext,
  type OpenRunContextOptions,
  type OwnedRunContext,
} from '../../src/runtime/run-context.js';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { tempDir } from './temp-dir.js';

/** A config file body tuned for tests: no client-side rate limit to speak of, fast polling. */
export function testConfigFile(
  dir: string,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  const api = (overrides.api ?? {}) as Record<string, unknown>;
  return {
    ...overrides,
    api: {
      requestsPerSecond: 100_000,
      concurrency: 8,
      pollIntervalMs: 50,
      maxRetries: 6,
      timeoutMs: 10_000,
      ...api,
    },
    database: { path: join(dir, 'mirror.sqlite'), ...((overrides.database as object) ?? {}) },
    exports: { dir: join(dir, 'exports'), ...((overrides.exports as object) ?? {}) },
    snapshots: { dir: join(dir, 'snapshots'), ...((overrides.snapshots as object) ?? {}) },
  };
}

/** Writes a test config file into `dir` and loads it the way the CLI does. */
export async function writeTestConfig(
  dir: string,
  overrides: Record<string, unknown> = {},
): Promise<{ path: string; config: Config }> {
  const path = join(dir, 'config.json');
  await writeFile(path, JSON.stringify(testConfigFile(dir, overrides), null, 2));
  const result = loadConfig({ env: {}, cwd: dir, configPath: path });
  if (result.config === null) throw new Error(`test config invalid: ${result.errors.join('; ')}`);
  return { path, config: result.config };
}

/**
 * A real RunContext (client over loopback HTTP to `sim`, mirror in a temp SQLite file) with a
 * MemoryLogger, closed when the test finishes. `profileWriter` picks where a sync's mirror writes
 * run (the worker thread by default, as in the product).
 */
export async function openTestContext(
  sim: RunningSimulator,
  options: {
    dir?: string;
    config?: Record<string, unknown>;
    signal?: AbortSignal;
    profileWriter?: OpenRunContextOptions['profileWriter'];
    /** The run context's clock (`Date.now` by default). */
    clock?: OpenRunContextOptions['clock'];
  } = {},
): Promise<OwnedRunContext & { dir: string; memoryLogger: MemoryLogger; configPath: string }> {
  const dir = options.dir ?? (await tempDir());
  const { path, config } = await writeTestConfig(dir, options.config);
  const memoryLogger = new MemoryLogger();
  const ctx = await openRunContext({
    config,
    apiKey: sim.apiKey,
    baseUrl: sim.baseUrl,
    logger: memoryLogger,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.profileWriter ? { profileWriter: options.profileWriter } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
  });
  onTestFinished(() => ctx.close());
  return Object.assign(ctx, { dir, memoryLogger, configPath: path });
}
