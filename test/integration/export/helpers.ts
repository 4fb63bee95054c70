import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../../src/config/load.js';
import type { Mirror } from '../../../src/mirror/database.js';
import { markExportDownloaded } from '../../../src/mirror/store/exports.js';
import { openRunContext, type OwnedRunContext } from '../../../src/runtime/run-context.js';
import type { Progress } from '../../../src/runtime/progress.js';
import type { RunningSimulator } from '../../../src/simulator/index.js';
import type { Clock } from '../../../src/util/time.js';

/** Writes a config.json in `dir` (fast polling, exports in `dir/exports`) and returns its path. */
export function writeTestConfig(dir: string, extra: Record<string, unknown> = {}): string {
  const path = join(dir, 'config.json');
  const { api, exports, ...rest } = extra as { api?: object; exports?: object };
  writeFileSync(
    path,
    JSON.stringify({
      api: { pollIntervalMs: 20, maxRetries: 2, ...api },
      database: { path: join(dir, 'mirror.sqlite') },
      exports: { dir: join(dir, 'exports'), ...exports },
      ...rest,
    }),
  );
  return path;
}

/** A run context on the simulator with the config written by {@link writeTestConfig}. */
export async function openTestContext(
  sim: RunningSimulator,
  dir: string,
  options: { extra?: Record<string, unknown>; clock?: Clock; signal?: AbortSignal; progress?: Progress } = {},
): Promise<OwnedRunContext> {
  const configPath = writeTestConfig(dir, options.extra);
  const { config, errors } = loadConfig({ env: {}, cwd: dir, configPath });
  if (config === null) throw new Error(errors.join('; '));
  return openRunContext({
    config,
    apiKey: sim.apiKey,
    baseUrl: sim.baseUrl,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.progress ? { progress: options.progress } : {}),
  });
}

/** How many `POST /exports` the simulator saw. */
export function exportPosts(sim: RunningSimulator): number {
  return sim.control.usage().filter((u) => u.endpoint === 'POST /exports').length;
}

/** sha256 hex of a file. */
export function sha256File(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/**
 * Replaces an export's downloaded file and its recorded checksum, as a service that sent this
 * content would have: lets a test feed the loader a file of its choice through the pipeline.
 */
export function replaceDownloadedFile(mirror: Mirror, id: number, path: string, content: string): void {
  writeFileSync(path, content);
  markExportDownloaded(mirror, id, {
    filePath: path,
    downloadedAt: new Date().toISOString(),
    checksum: sha256File(path),
    byteCount: Buffer.byteLength(content),
  });
}
