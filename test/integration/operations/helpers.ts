import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunningSimulator } from '../../../src/simulator/index.js';
import { readMirror } from '../../helpers/mirror.js';
import { testConfigFile } from '../../helpers/test-context.js';

/** Writes `config.json` (test defaults + `overrides`) into `dir`; returns its path. */
export async function writeOperationsConfig(
  dir: string,
  overrides: Record<string, unknown> = {},
): Promise<string> {
  const path = join(dir, 'config.json');
  await writeFile(path, JSON.stringify(testConfigFile(dir, overrides), null, 2));
  return path;
}

/** The environment a child CLI needs to reach `sim`. */
export function simEnv(sim: RunningSimulator): Record<string, string> {
  return { DOMAIN_SYNC_API_KEY: sim.apiKey, DOMAIN_SYNC_BASE_URL: sim.baseUrl };
}

/** A `pipeline_runs` row as the tests read it (own connection, independent of the code under test). */
export interface RunRow {
  id: number;
  pipeline: string;
  status: string;
  started_at: string;
  finished_at: string | null;
  stats: string | null;
  error: string | null;
  pid: number | null;
}

/** `pipeline_runs` (by id) and `locks`, read from the mirror file in one go ({@link readMirror}). */
export function runsAndLocks(dbPath: string): { runs: RunRow[]; locks: Array<Record<string, unknown>> } {
  return readMirror(dbPath, (db) => ({
    runs: db.prepare('SELECT * FROM pipeline_runs ORDER BY id').all() as RunRow[],
    locks: db.prepare('SELECT * FROM locks').all() as Array<Record<string, unknown>>,
  }));
}

/** True when no two of `runs` overlap in time (each ends before the next one starts). */
export function noOverlap(runs: readonly RunRow[]): boolean {
  const sorted = [...runs].sort((a, b) => a.started_at.localeCompare(b.started_at));
  return sorted.every((run, i) => {
    const next = sorted[i + 1];
    return next === undefined || (run.finished_at !== null && run.finished_at <= next.started_at);
  });
}
