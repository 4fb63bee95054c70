import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { SNAPSHOT_TABLES } from '../../../src/mirror/store/snapshot.js';
import { duckdbQuery, sqlString } from '../../helpers/read-parquet.js';
import { describeRun, summaryOf } from '../../helpers/cli.js';
import { describeCrashMatrix, runPipelineChild } from './matrix.js';
import type { CrashScenario, Workspace } from './matrix.js';
import { diffSnapshots, listFiles, snapshotLayout, withoutDates } from './mirror-checks.js';
import type { TableSpec } from './mirror-checks.js';
import { queryMirror } from '../../helpers/mirror.js';

/**
 * The tables `snapshot` writes by default (docs/contract.md "Snapshots": the contract's tables), less the
 * bookkeeping `pipeline_runs` (see below). Taken from the product's list so a new snapshot table
 * is compared too.
 */
const DATA_TABLES: readonly string[] = SNAPSHOT_TABLES.filter((table) => table !== 'pipeline_runs');

/**
 * Every workspace starts from a copy of the same mirror, so the data tables are compared whole.
 * `pipeline_runs` is bookkeeping: its snapshot holds this run (still `running`) and the killed
 * ones, so only its row count is checked against the mirror.
 */
const SAME_MIRROR_SPECS: readonly TableSpec[] = DATA_TABLES.map((table) => ({ table }));

/** Rows per table in the snapshot of `date`, read back with DuckDB. */
export async function snapshotCounts(
  ws: Workspace,
  tables: readonly string[],
): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of tables) {
    const glob = sqlString(join(ws.snapshotsDir, table, '*', '*.parquet'));
    const { rows } = await duckdbQuery(`SELECT count(*) AS n FROM read_parquet(${glob})`);
    out[table] = Number(rows[0]!.n);
  }
  return out;
}

/** The manifest's table entries without what differs between any two runs (bytes, times, run ids, date). */
export function manifestTables(ws: Workspace, file: string): Record<string, unknown> {
  const manifest = JSON.parse(readFileSync(join(ws.snapshotsDir, file), 'utf8')) as {
    tables: Record<string, Record<string, unknown>>;
  };
  return Object.fromEntries(
    Object.entries(manifest.tables)
      .filter(([table]) => table !== 'pipeline_runs')
      .map(([table, entry]) => {
        const { bytes: _bytes, written_at: _writtenAt, pipeline_run_id: _runId, ...kept } = entry;
        return [table, JSON.parse(withoutDates(JSON.stringify(kept))) as unknown];
      }),
  );
}

/**
 * `snapshot` of a synced 1,000-domain mirror: seven Parquet files and a manifest. No request is
 * made, so kills are drawn in time and on the appearance of a temporary file.
 */
const SNAPSHOT: CrashScenario = {
  pipeline: 'snapshot',
  args: ['snapshot'],
  sim: { domains: 1_000 },
  faults: [],
  triggers: ['time', 'time', 'file'],
  budget: 0,
  prepare: async (ws) => {
    const synced = await runPipelineChild({ ...SNAPSHOT, args: ['sync'] }, ws);
    if (synced.code !== 0) throw new Error(`template sync failed: ${describeRun(synced)}`);
  },
  verify: async ({ trial, baseline, final, where }) => {
    expect(final.code, `${where}: ${describeRun(final)}`).toBe(0);
    expect(await diffSnapshots(trial.snapshotsDir, baseline.snapshotsDir, SAME_MIRROR_SPECS), where).toEqual(
      [],
    );
    const tables = [...DATA_TABLES, 'pipeline_runs'];
    const mirrorCounts = Object.fromEntries(
      tables.map((t) => [
        t,
        queryMirror<{ n: number }>(trial.dbPath, `SELECT count(*) AS n FROM ${t}`)[0]!.n,
      ]),
    );
    expect(await snapshotCounts(trial, tables), where).toEqual(mirrorCounts);
    expect(await snapshotLayout(trial.snapshotsDir), where).toEqual(
      await snapshotLayout(baseline.snapshotsDir),
    );
    const manifestOf = async (ws: Workspace): Promise<string> =>
      (await listFiles(ws.snapshotsDir)).find((f) => f.startsWith('_manifests/'))!;
    const manifest = await manifestOf(trial);
    expect(manifestTables(trial, manifest), where).toEqual(
      manifestTables(baseline, await manifestOf(baseline)),
    );
    expect((summaryOf(final)?.stats as { snapshotDate?: string }).snapshotDate, where).toBe(
      /snapshot_date=(\d{4}-\d{2}-\d{2})/.exec(manifest)?.[1],
    );
    return { recovered: true };
  },
};

describeCrashMatrix(SNAPSHOT, 'the files equal the fault-free ones');
