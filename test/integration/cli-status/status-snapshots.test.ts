import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { snapshotPipeline } from '../../../pipelines/snapshot.js';
import { noopLogger } from '../../../src/log/logger.js';
import { openMirror } from '../../../src/mirror/database.js';
import { SNAPSHOT_TABLES } from '../../../src/mirror/store/snapshot.js';
import { noopProgress } from '../../../src/runtime/progress.js';
import { buildSnapshotFixture, cli } from '../snapshot/fixture.js';
import type { SnapshotFixture } from '../snapshot/fixture.js';
import { queryMirrorExact } from '../../helpers/mirror.js';

let fx: SnapshotFixture;

beforeAll(async () => {
  fx = await buildSnapshotFixture({ domains: 150, seed: 5 });
}, 120_000);

afterAll(async () => {
  await fx?.close();
});

interface SnapshotsStatusJson {
  dir: string;
  latestDate: string | null;
  tables: Record<string, { snapshotDate: string; rows: number | null; bytes: number | null }>;
  lastRunDir: string | null;
}

const status = (...extra: string[]) =>
  cli(['--config', fx.configPath, '--log-level', 'warn', ...extra, 'status'], fx.dir);

describe('status: snapshots and exports in progress', () => {
  it('says "none yet" before any snapshot, and lists the unfinished export', async () => {
    const run = await status('--json');
    expect(run.exitCode).toBe(0);
    const summary = run.json!;
    // What status showed before this issue is still there.
    for (const key of ['database', 'counts', 'freshness', 'lastRuns', 'running', 'credits', 'account']) {
      expect(summary).toHaveProperty(key);
    }
    expect(summary.snapshots).toEqual({
      dir: fx.config.snapshots.dir,
      latestDate: null,
      tables: {},
      lastRunDir: null,
    });
    // The fixture's completed export was never downloaded, so `export` would resume it too.
    expect(summary.exportsInProgress).toEqual([
      expect.objectContaining({ status: 'completed', download_status: 'pending', format: 'csv' }),
      expect.objectContaining({ id: fx.pendingExportId, status: 'pending', download_status: null }),
    ]);
    const human = await status();
    expect(human.stdout).toContain(`snapshots          none yet in ${fx.config.snapshots.dir}`);
    expect(human.stdout).toContain('exports in progress');
    expect(human.stdout).toContain(`export ${fx.pendingExportId} pending`);
  });

  it('shows the latest snapshot date and row counts per table, from the manifests', async () => {
    // Every table yesterday (through the pipeline with a clock), then licences alone today.
    const mirror = await openMirror(fx.mirrorPath);
    const yesterday = await snapshotPipeline({
      config: fx.config,
      mirror,
      logger: noopLogger,
      signal: new AbortController().signal,
      progress: noopProgress,
      clock: () => Date.now() - 86_400_000,
    });
    await mirror.close();
    expect(yesterday.status).toBe('done');
    const today = await cli(
      ['--config', fx.configPath, '--json', '--log-level', 'warn', 'snapshot', '--tables', 'licenses'],
      fx.dir,
    );
    expect(today.exitCode).toBe(0);
    const todayDate = (today.json!.stats as { snapshotDate: string }).snapshotDate;
    const licences = Number(queryMirrorExact(fx.mirrorPath, 'SELECT count(*) AS n FROM licenses')[0]!.n);

    const run = await status('--json');
    expect(run.exitCode).toBe(0);
    const snapshots = run.json!.snapshots as SnapshotsStatusJson;
    expect(snapshots.latestDate).toBe(todayDate);
    expect(Object.keys(snapshots.tables).sort()).toEqual([...SNAPSHOT_TABLES].sort());
    expect(snapshots.tables.licenses).toMatchObject({ snapshotDate: todayDate, rows: licences });
    for (const table of SNAPSHOT_TABLES.filter((t) => t !== 'licenses')) {
      expect(snapshots.tables[table]).toEqual({
        snapshotDate: yesterday.stats.snapshotDate,
        rows: yesterday.stats.tables[table]!.rows,
        bytes: yesterday.stats.tables[table]!.bytes,
      });
    }

    const human = (await status()).stdout;
    expect(human).toContain(`snapshots          latest ${todayDate} in ${fx.config.snapshots.dir}`);
    expect(human).toMatch(new RegExp(`\\n  licenses\\s+${todayDate}  ${licences} rows\\n`));
    expect(human).toMatch(
      new RegExp(
        `\\n  domains\\s+${yesterday.stats.snapshotDate}  ${yesterday.stats.tables.domains!.rows} rows\\n`,
      ),
    );
  });

  it('points at the dir of the latest snapshot run when it used --out', async () => {
    const out = join(fx.dir, 'elsewhere');
    const run = await cli(
      ['--config', fx.configPath, '--log-level', 'warn', 'snapshot', '--out', out, '--tables', 'domains'],
      fx.dir,
    );
    expect(run.exitCode).toBe(0);
    const summary = (await status('--json')).json!;
    expect((summary.snapshots as SnapshotsStatusJson).lastRunDir).toBe(out);
    expect((await status()).stdout).toContain(`the latest snapshot run wrote to ${out}`);
  });
});
