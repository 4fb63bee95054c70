import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADVISORY_LOCK_CLASS } from '../../../src/destinations/postgres/index.js';
import { describeRun, startCli, summaryOf } from '../../helpers/cli.js';
import { queryMirror } from '../../helpers/mirror.js';
import { startTestPostgres, type TestPostgres } from '../../helpers/postgres.js';
import {
  changedRows,
  destinationSummary,
  expectDestinationEqualsMirror,
  publishWorkspace,
  readDestination,
  type PublishWorkspace,
} from './helpers.js';

/*
 * `publish` against a real PostgreSQL (started by this file, or DOMAIN_SYNC_TEST_PG_URL), through
 * the CLI as a user runs it, every table compared with the mirror value by value.
 */

let pg: TestPostgres;
beforeAll(async () => {
  pg = await startTestPostgres();
}, 120_000);
afterAll(async () => {
  await pg?.close();
});

async function syncAndPublish(ws: PublishWorkspace, publishArgs: string[] = []): Promise<{ runId: number }> {
  const sync = await ws.cli(['sync']);
  expect(sync.code, describeRun(sync)).toBe(0);
  const publish = await ws.cli(['publish', ...publishArgs]);
  expect(publish.code, describeRun(publish)).toBe(0);
  return { runId: Number(summaryOf(publish)?.runId) };
}

describe('publish to PostgreSQL', () => {
  it('the section query in docs/destinations.md runs on a published schema and finds the domains the mirror says', async () => {
    const ws = await publishWorkspace(pg);
    await syncAndPublish(ws);
    const doc = readFileSync(new URL('../../../docs/destinations.md', import.meta.url), 'utf8');
    const start = doc.indexOf('-- domains with a NetEnt game');
    expect(start).toBeGreaterThan(0);
    const query = doc.slice(start, doc.indexOf(';', start) + 1);
    const client = await pg.client();
    let found: string[];
    try {
      await client.query(`SET search_path TO "${ws.schema}"`);
      found = (await client.query<{ domain_normalized: string }>(query)).rows.map((r) => r.domain_normalized);
    } finally {
      await client.end();
    }
    const expected = queryMirror<{ domain_normalized: string; data: string }>(
      ws.dbPath,
      "SELECT domain_normalized, data FROM domain_sections WHERE section = 'game_providers'",
    )
      .filter((r) =>
        (JSON.parse(r.data) as Array<{ normalized_name?: string }>).some(
          (p) => p.normalized_name === 'netent',
        ),
      )
      .map((r) => r.domain_normalized);
    expect(expected.length).toBeGreaterThan(0);
    expect(found.sort()).toEqual(expected.sort());
  });

  it('after sync + publish every published table equals the mirror row for row, with the promised types', async () => {
    const ws = await publishWorkspace(pg);
    const { runId } = await syncAndPublish(ws);
    // The publish's own pipeline_runs row went out as `running`: it is the next publish's to send.
    await expectDestinationEqualsMirror(pg, ws, { skipPipelineRunIds: [runId] });
    const [own] = await pg.query(`SELECT status FROM "${ws.schema}".pipeline_runs WHERE id = $1`, [runId]);
    expect(own?.status).toBe('running');

    // Timestamps are instants: the same moment whatever the session's time zone.
    const client = await pg.client();
    let utc: string | undefined;
    try {
      await client.query("SET TIME ZONE 'Asia/Kolkata'");
      const result = await client.query<{ utc: string }>(
        `SELECT to_char(min(first_synced_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS utc FROM "${ws.schema}".domains`,
      );
      utc = result.rows[0]?.utc;
    } finally {
      await client.end();
    }
    const [mirrorMin] = queryMirror<{ v: string }>(
      ws.dbPath,
      'SELECT min(first_synced_at) AS v FROM domains',
    );
    expect(utc).toBe(mirrorMin?.v);

    // The analyst views answer over the published tables.
    const views = await pg.query<{ table_name: string }>(
      'SELECT table_name FROM information_schema.views WHERE table_schema = $1 ORDER BY table_name',
      [ws.schema],
    );
    expect(views.map((v) => v.table_name)).toEqual([
      'v_credits_per_day',
      'v_domain_overview',
      'v_last_pipeline_runs',
      'v_licence_changes',
      'v_payment_method_changes',
      'v_stale_domains',
    ]);
    const overview = await pg.query<{
      domain_normalized: string;
      active_jurisdictions: string | null;
      license_count: string;
    }>(`SELECT domain_normalized, active_jurisdictions, license_count FROM "${ws.schema}".v_domain_overview`);
    const mirrorOverview = queryMirror<{
      domain_normalized: string;
      active_jurisdictions: string | null;
      license_count: number;
    }>(ws.dbPath, 'SELECT domain_normalized, active_jurisdictions, license_count FROM v_domain_overview');
    const byDomain = new Map(overview.map((r) => [r.domain_normalized, r]));
    expect(overview.length).toBe(mirrorOverview.length);
    for (const m of mirrorOverview) {
      const p = byDomain.get(m.domain_normalized);
      expect(p?.active_jurisdictions ?? null, m.domain_normalized).toBe(m.active_jurisdictions);
      expect(Number(p?.license_count), m.domain_normalized).toBe(m.license_count);
    }
    const stale = await pg.query(`SELECT count(*)::int AS n FROM "${ws.schema}".v_stale_domains`);
    expect(stale[0]?.n).toBe(
      queryMirror<{ n: number }>(ws.dbPath, 'SELECT count(*) AS n FROM v_stale_domains')[0]?.n,
    );
  });

  it('after the simulator changes 1 % of domains, sync + publish moves only the changed rows and the tables equal the mirror again', async () => {
    const ws = await publishWorkspace(pg, { domains: 400 });
    await syncAndPublish(ws);
    const before = await readDestination(pg, ws);
    const all = ws.sim.control.truth.listDomains();
    const changed = all.filter((_, i) => i % 100 === 7); // 1 %
    for (const domain of changed) ws.sim.control.mutate.reenrich(domain);
    const { runId } = await syncAndPublish(ws);
    const after = await readDestination(pg, ws);
    const summary = await ws.cli(['status']); // (also checks status reads the record, below)
    expect(summary.code).toBe(0);

    const differing = changedRows(before, after);
    const totalChanged = Object.values(differing).reduce((a, b) => a + b, 0);
    const runs = queryMirror<{ stats: string }>(
      ws.dbPath,
      'SELECT stats FROM pipeline_runs WHERE id = ?',
      runId,
    );
    const stats = JSON.parse(runs[0]!.stats) as {
      destinations: Record<
        string,
        { tables: Record<string, { rows: number; mode: string; written: number }> }
      >;
    };
    const sent = stats.destinations.warehouse!.tables;
    const totalSent = Object.values(sent).reduce((a, t) => a + t.rows, 0);
    for (const t of Object.values(sent)) expect(t.mode).toBe('incremental');
    // Rows moved: only what changed (plus nothing else); rows changed counted independently, by
    // comparing the destination before and after.
    expect(totalSent).toBeLessThanOrEqual(Math.ceil(1.05 * totalChanged));
    expect(totalSent).toBeGreaterThanOrEqual(totalChanged);
    // The changed domains are all there, and the untouched ones did not move.
    expect(sent.domains!.rows).toBeGreaterThanOrEqual(changed.length);
    expect(sent.domains!.rows).toBeLessThan(all.length / 10);
    await expectDestinationEqualsMirror(pg, ws, { skipPipelineRunIds: [runId] });
  });

  it('a publish with nothing changed moves only the run bookkeeping; --full sends everything and rewrites nothing equal', async () => {
    const ws = await publishWorkspace(pg);
    await syncAndPublish(ws);
    const again = await ws.cli(['publish']);
    expect(again.code, describeRun(again)).toBe(0);
    const d = destinationSummary(again);
    for (const [table, t] of Object.entries(d.tables)) {
      // The previous publish's row (now finished) and this publish's own row.
      expect(t.rows, table).toBe(table === 'pipeline_runs' ? 2 : 0);
    }
    const full = await ws.cli(['publish', '--full']);
    expect(full.code, describeRun(full)).toBe(0);
    const f = destinationSummary(full);
    const mirrorDomains = queryMirror<{ n: number }>(ws.dbPath, 'SELECT count(*) AS n FROM domains')[0]!.n;
    expect(f.tables.domains).toEqual({ rows: mirrorDomains, mode: 'full', written: 0 });
    // Its log says how far it has got (at most every 5 s; the first time at once).
    const progress = full.events.filter((e) => e.msg === 'publish progress');
    expect(progress.length).toBeGreaterThan(0);
    expect(progress[0]).toMatchObject({ destination: 'warehouse', table: 'domains', of: mirrorDomains });
    expect(Number(progress[0]!.rows)).toBeGreaterThan(0);
    expect(Number(progress[0]!.rows)).toBeLessThanOrEqual(mirrorDomains);
    await expectDestinationEqualsMirror(pg, ws, { skipPipelineRunIds: [Number(summaryOf(full)?.runId)] });
  });

  it('--tables publishes only those; a later publish sends the other tables whole', async () => {
    const ws = await publishWorkspace(pg);
    const sync = await ws.cli(['sync']);
    expect(sync.code, describeRun(sync)).toBe(0);
    const some = await ws.cli(['publish', '--tables', 'domains,licenses']);
    expect(some.code, describeRun(some)).toBe(0);
    expect(Object.keys(destinationSummary(some).tables)).toEqual(['domains', 'licenses']);
    const tables = await pg.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE' ORDER BY 1",
      [ws.schema],
    );
    expect(tables.map((t) => t.table_name)).toEqual(['_domain_sync_publish', 'domains', 'licenses']);
    const rest = await ws.cli(['publish']);
    expect(rest.code, describeRun(rest)).toBe(0);
    const d = destinationSummary(rest);
    expect(d.tables.domains?.mode).toBe('incremental');
    expect(d.tables.payment_methods?.mode).toBe('full');
    await expectDestinationEqualsMirror(pg, ws, { skipPipelineRunIds: [Number(summaryOf(rest)?.runId)] });
  });

  it('a column a later mirror migration adds is added on the next publish, with its values', async () => {
    const ws = await publishWorkspace(pg);
    await syncAndPublish(ws);
    // What a later migration would do: a new column, filled for existing rows without touching
    // their change_seq.
    const db = new Database(ws.dbPath);
    try {
      db.exec('ALTER TABLE licenses ADD COLUMN review_note TEXT');
      db.exec('ALTER TABLE licenses ADD COLUMN reviewed_at TEXT');
      db.exec(
        "UPDATE licenses SET review_note = 'checked ' || jurisdiction, reviewed_at = '2026-01-02T03:04:05.678Z'",
      );
    } finally {
      db.close();
    }
    const publish = await ws.cli(['publish']);
    expect(publish.code, describeRun(publish)).toBe(0);
    const d = destinationSummary(publish);
    expect(d.created).toEqual(['licenses.review_note', 'licenses.reviewed_at']);
    expect(d.tables.licenses?.mode).toBe('full');
    await expectDestinationEqualsMirror(pg, ws, {
      tables: ['licenses'],
    });
  });

  it('an existing table that cannot hold the data is a clear error naming table and column, and nothing is changed', async () => {
    const ws = await publishWorkspace(pg);
    await pg.query(`CREATE SCHEMA "${ws.schema}"`);
    await pg.query(
      `CREATE TABLE "${ws.schema}".domains (domain_normalized text PRIMARY KEY, first_synced_at integer, legacy text)`,
    );
    await pg.query(`INSERT INTO "${ws.schema}".domains VALUES ('keep.example', 1, 'x')`);
    const sync = await ws.cli(['sync']);
    expect(sync.code).toBe(0);
    const publish = await ws.cli(['publish']);
    expect(publish.code, describeRun(publish)).toBe(1);
    const d = destinationSummary(publish);
    expect(d.error?.code).toBe('ERR_DESTINATION_SCHEMA');
    expect(d.error?.message).toContain(
      `table ${ws.schema}.domains, column first_synced_at: its type integer cannot hold timestamps`,
    );
    expect(d.error?.message).toContain('destination "warehouse"');
    expect(d.error?.message).toContain('Nothing was changed');
    // Nothing changed: no other table, no watermark table, the row as it was.
    const tables = await pg.query<{ table_name: string }>(
      'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1',
      [ws.schema],
    );
    expect(tables.map((t) => t.table_name)).toEqual(['domains']);
    expect(await pg.query(`SELECT * FROM "${ws.schema}".domains`)).toEqual([
      { domain_normalized: 'keep.example', first_synced_at: 1, legacy: 'x' },
    ]);
  });

  it('two publishers to one schema never interleave: the second waits for the advisory lock', async () => {
    const ws = await publishWorkspace(pg);
    const sync = await ws.cli(['sync']);
    expect(sync.code).toBe(0);
    // Hold the schema's publish lock as another publisher would.
    const holder = await pg.client();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [ADVISORY_LOCK_CLASS, ws.schema]);
      const child = startCli(['--config', ws.configPath, '--json', 'publish'], {
        cwd: ws.dir,
        env: ws.env,
        isolatedEnv: true,
      });
      // It connects, then waits on the lock: nothing of it is visible meanwhile.
      await waitFor(async () => {
        const waiting = await pg.query(
          "SELECT 1 FROM pg_stat_activity WHERE application_name = 'domain-sync' AND wait_event_type = 'Lock'",
        );
        return waiting.length > 0;
      });
      const visible = await pg.query('SELECT 1 FROM information_schema.tables WHERE table_schema = $1', [
        ws.schema,
      ]);
      expect(visible).toEqual([]);
      await holder.query('COMMIT');
      const run = await child.exited;
      expect(run.code, describeRun(run)).toBe(0);
      await expectDestinationEqualsMirror(pg, ws, { skipPipelineRunIds: [Number(summaryOf(run)?.runId)] });
    } finally {
      await holder.end();
    }
  });

  it('status shows each destination: its last publish, rows per table and how far the mirror moved since', async () => {
    const ws = await publishWorkspace(pg);
    const before = await ws.cli(['status']);
    expect(
      (summaryOf(before)?.destinations as Record<string, { lastPublishAt: unknown }>).warehouse
        ?.lastPublishAt,
    ).toBeNull();
    await syncAndPublish(ws);
    const status = await ws.cli(['status']);
    expect(status.code).toBe(0);
    const d = (summaryOf(status)?.destinations as Record<string, Record<string, unknown>>).warehouse!;
    expect(d.lastPublishAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(d.schema).toBe(ws.schema);
    const domains = queryMirror<{ n: number }>(ws.dbPath, 'SELECT count(*) AS n FROM domains')[0]!.n;
    expect((d.tables as Record<string, { rows: number }>).domains?.rows).toBe(domains);
    // Since the publish: its own run row finished, and `status` itself changes nothing.
    expect(d.rowsBehind).toBe(1);
  });

  it('a publish step in a named pipeline means what the flags mean', async () => {
    const ws = await publishWorkspace(pg, {
      config: {
        pipelines: {
          'sync-publish': {
            steps: ['sync', { type: 'publish', options: { to: ['warehouse'], tables: ['domains'] } }],
            schedule: null,
          },
        },
      },
    });
    const run = await ws.cli(['run', 'sync-publish']);
    expect(run.code, describeRun(run)).toBe(0);
    const rows = await pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${ws.schema}".domains`);
    expect(rows[0]?.n).toBe(queryMirror<{ n: number }>(ws.dbPath, 'SELECT count(*) AS n FROM domains')[0]!.n);
    const tables = await pg.query(
      'SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = $2',
      [ws.schema, 'licenses'],
    );
    expect(tables).toEqual([]);
  });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}
