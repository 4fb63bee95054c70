import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect } from 'vitest';
import { describeRun, runCli, summaryOf } from '../../helpers/cli.js';
import { startTestPostgres, type TestPostgres } from '../../helpers/postgres.js';
import {
  expectDestinationEqualsMirror,
  PUBLISHED,
  readDestination,
} from '../../integration/publish/helpers.js';
import { describeCrashMatrix, runPipelineChild } from './matrix.js';
import type { CrashScenario, Workspace } from './matrix.js';

/*
 * `publish` killed with SIGKILL at seeded random points (time triggers: it makes no service
 * request and writes no local file), then run again. Each workspace publishes into its own
 * schema of one real PostgreSQL server. After the recovery every published table must equal the
 * mirror row for row and the fault-free run's destination: nothing lost (every row is there) and
 * nothing applied twice (every key once, the values the mirror's).
 */

let pg: TestPostgres;
beforeAll(async () => {
  pg = await startTestPostgres();
}, 120_000);
afterAll(async () => {
  await pg?.close();
});

/** The workspace's own schema, from its temp dir's unique name. */
function schemaOf(ws: Workspace): string {
  return `crash_${basename(ws.dir)
    .replace(/[^a-z0-9]/gi, '')
    .toLowerCase()}`;
}

/** Points the workspace's config at its own schema, and gives its commands the password. */
async function useOwnSchema(ws: Workspace): Promise<void> {
  const config = JSON.parse(await readFile(ws.configPath, 'utf8')) as Record<string, unknown>;
  config.destinations = { warehouse: { type: 'postgres', url: pg.url(), schema: schemaOf(ws) } };
  await writeFile(ws.configPath, JSON.stringify(config, null, 2));
  ws.env.PGPASSWORD = pg.password;
}

async function verify(
  trial: Workspace,
  baseline: Workspace,
  final: Awaited<ReturnType<typeof runPipelineChild>>,
  where: string,
): Promise<{ recovered: true }> {
  expect(final.code, `${where}: ${describeRun(final)}`).toBe(0);
  const runId = Number(summaryOf(final)?.runId);
  await expectDestinationEqualsMirror(
    pg,
    { schema: schemaOf(trial), dbPath: trial.dbPath },
    { skipPipelineRunIds: [runId] },
  );
  // The data tables equal the fault-free run's destination too (run bookkeeping aside).
  const got = await readDestination(pg, { schema: schemaOf(trial), dbPath: trial.dbPath });
  const want = await readDestination(pg, { schema: schemaOf(baseline), dbPath: baseline.dbPath });
  for (const table of PUBLISHED) {
    if (table === 'pipeline_runs') continue;
    expect(got.get(table), `${where}: ${table}`).toEqual(want.get(table));
  }
  const marks = await pg.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM "${schemaOf(trial)}"._domain_sync_publish`,
  );
  expect(marks[0]?.n, `${where}: one watermark per table`).toBe(PUBLISHED.length);
  return { recovered: true };
}

/** A first (full) publish of a synced 1,000-domain mirror. */
const FULL: CrashScenario = {
  pipeline: 'publish',
  args: ['publish'],
  sim: { domains: 1_000 },
  faults: [],
  triggers: ['time'],
  budget: 0,
  prepare: async (ws) => {
    const synced = await runPipelineChild({ ...FULL, args: ['sync'] }, ws);
    if (synced.code !== 0) throw new Error(`template sync failed: ${describeRun(synced)}`);
  },
  setUp: useOwnSchema,
  verify: ({ trial, baseline, final, where }) => verify(trial, baseline, final, where),
};

/** The mirror before the 1 % change, saved by INCREMENTAL's prepare (one self-contained file). */
let preChangeMirror: string | undefined;

/**
 * An incremental publish: the destination has the mirror as it was before 1 % of the domains
 * changed (published from a copy of it), and the mirror has the change synced. Every workspace
 * starts from the same two files, so trial and fault-free run publish the same rows.
 */
const INCREMENTAL: CrashScenario = {
  ...FULL,
  pipeline: 'publish (incremental)',
  prepare: async (ws) => {
    const synced = await runPipelineChild({ ...FULL, args: ['sync'] }, ws);
    if (synced.code !== 0) throw new Error(`template sync failed: ${describeRun(synced)}`);
    preChangeMirror = join(ws.dir, 'pre-change.sqlite');
    const db = new Database(ws.dbPath);
    try {
      db.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      db.close();
    }
    await copyFile(ws.dbPath, preChangeMirror);
    const all = ws.sim.control.truth.listDomains();
    for (let i = 0; i < all.length; i += 100) ws.sim.control.mutate.reenrich(all[i]!);
    const again = await runPipelineChild({ ...FULL, args: ['sync'] }, ws);
    if (again.code !== 0) throw new Error(`sync after the changes failed: ${describeRun(again)}`);
  },
  setUp: async (ws) => {
    await useOwnSchema(ws);
    // The template's own workspace is set up before `prepare` made the file: nothing to publish.
    if (preChangeMirror === undefined) return;
    const pre = join(ws.dir, 'pre-change.sqlite');
    await copyFile(preChangeMirror, pre);
    const config = JSON.parse(await readFile(ws.configPath, 'utf8')) as { database: { path: string } };
    config.database.path = pre;
    const preConfig = join(ws.dir, 'pre-change.json');
    await writeFile(preConfig, JSON.stringify(config));
    const first = await runCli(['--config', preConfig, '--json', 'publish'], {
      cwd: ws.dir,
      env: ws.env,
      isolatedEnv: true,
    });
    if (first.code !== 0)
      throw new Error(`publish of the mirror before the change failed: ${describeRun(first)}`);
  },
};

describeCrashMatrix(FULL, 'the destination equals the mirror and the fault-free destination');
describeCrashMatrix(INCREMENTAL, 'the destination equals the mirror and the fault-free destination');
