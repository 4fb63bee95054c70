import { createHash } from 'node:crypto';
import { chmod, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { publishPipeline } from '../../../pipelines/publish.js';
import { loadConfig } from '../../../src/config/load.js';
import { MemoryLogger } from '../../../src/log/logger.js';
import { openMirror } from '../../../src/mirror/database.js';
import { noopProgress } from '../../../src/runtime/progress.js';
import { describeRun, startCli, summaryOf } from '../../helpers/cli.js';
import { readMirror } from '../../helpers/mirror.js';
import { startTestPostgres, type TestPostgres } from '../../helpers/postgres.js';
import {
  destinationSummary,
  expectDestinationEqualsMirror,
  publishWorkspace,
  readDestination,
  type PublishWorkspace,
} from './helpers.js';

/*
 * The bad inputs of a PostgreSQL destination: a server that cannot be reached or does not answer,
 * credentials refused or missing, a statement timeout and a connection dropped mid-publish, a
 * destination that keeps failing, and the config's password rule. Each leaves the destination as
 * it was (rolled back) and the next publish converges.
 */

let pg: TestPostgres;
beforeAll(async () => {
  pg = await startTestPostgres();
}, 120_000);
afterAll(async () => {
  await pg?.close();
});

/** sha256 of every data table of the mirror (pipeline_runs aside): "the mirror is untouched". */
function mirrorDataHash(dbPath: string): string {
  return readMirror(dbPath, (db) => {
    const hash = createHash('sha256');
    for (const table of [
      'domains',
      'licenses',
      'payment_methods',
      'domain_sections',
      'change_log',
      'sync_state',
    ]) {
      for (const row of db.prepare(`SELECT * FROM ${table} ORDER BY rowid`).raw(true).all())
        hash.update(JSON.stringify(row));
    }
    return hash.digest('hex');
  });
}

async function listen(onConnection: (socket: Socket) => void): Promise<{ port: number; server: Server }> {
  const server = createServer(onConnection);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const address = server.address();
  return { port: typeof address === 'object' && address !== null ? address.port : 0, server };
}

async function synced(options: Parameters<typeof publishWorkspace>[1] = {}): Promise<PublishWorkspace> {
  const ws = await publishWorkspace(pg, { domains: 80, ...options });
  const sync = await ws.cli(['sync']);
  expect(sync.code, describeRun(sync)).toBe(0);
  return ws;
}

describe('publish: bad input', () => {
  it('a server that refuses connections: exit 1 within the connect timeout, host and port named, mirror untouched', async () => {
    const { port, server } = await listen((s) => s.destroy());
    await new Promise<void>((resolve) => server.close(() => resolve())); // nothing listens there now
    const ws = await synced({
      destination: { url: `postgres://someone@127.0.0.1:${port}/db?connect_timeout=2` },
    });
    const hash = mirrorDataHash(ws.dbPath);
    const run = await ws.cli(['publish']);
    expect(run.code, describeRun(run)).toBe(1);
    const d = destinationSummary(run);
    expect(d.error?.code).toBe('ERR_DESTINATION_UNREACHABLE');
    expect(d.error?.message).toContain('destination "warehouse"');
    expect(d.error?.message).toContain(`127.0.0.1:${port}`);
    expect(d.error?.message).toContain('within 2 s');
    // Start-up of the CLI from source included; the connection attempts stop inside 2 s.
    expect(run.elapsedMs).toBeLessThan(2_000 + 8_000);
    expect(mirrorDataHash(ws.dbPath)).toBe(hash);
  });

  it('a server that accepts and never answers: exit 1 within the connect timeout', async () => {
    const sockets: Socket[] = [];
    const { port } = await listen((s) => sockets.push(s));
    onTestFinished(() => sockets.forEach((s) => s.destroy()));
    const ws = await synced({
      destination: { url: `postgres://someone@127.0.0.1:${port}/db?connect_timeout=2&sslmode=disable` },
    });
    const started = Date.now();
    const run = await ws.cli(['publish']);
    expect(run.code, describeRun(run)).toBe(1);
    expect(destinationSummary(run).error?.code).toBe('ERR_DESTINATION_UNREACHABLE');
    expect(destinationSummary(run).error?.message).toContain(`127.0.0.1:${port}`);
    expect(Date.now() - started).toBeLessThan(2_000 + 8_000);
  });

  it('credentials refused: a clear message naming the server and user, never the password', async () => {
    const ws = await synced();
    const wrong = `wrong_${Date.now()}_password`;
    const run = await ws.cli(['publish'], { PGPASSWORD: wrong });
    expect(run.code, describeRun(run)).toBe(1);
    const d = destinationSummary(run);
    expect(d.error?.code).toBe('ERR_DESTINATION_AUTH');
    expect(d.error?.message).toMatch(
      /refused the credentials of user postgres .*password authentication failed/,
    );
    expect(run.stdout + run.stderr).not.toContain(wrong);
    expect(run.stdout + run.stderr).not.toContain(pg.password);
  });

  it('no password anywhere: says where to put one; the password file works', async () => {
    const ws = await synced();
    const passfile = join(ws.dir, 'pgpass');
    await writeFile(passfile, '# no entry for this server\n');
    await chmod(passfile, 0o600);
    const none = await ws.cli(['publish'], { PGPASSWORD: undefined, PGPASSFILE: passfile });
    // PGPASSWORD is in the workspace env: the child gets exactly the given env, so drop it.
    expect(none.code, describeRun(none)).toBe(1);
    expect(destinationSummary(none).error?.code).toBe('ERR_DESTINATION_AUTH');
    expect(destinationSummary(none).error?.message).toContain(
      'set PGPASSWORD, or add a line for this server to ~/.pgpass',
    );

    await writeFile(passfile, `${pg.host}:${pg.port}:${pg.database}:${pg.user}:${pg.password}\n`);
    await chmod(passfile, 0o600);
    const withFile = await ws.cli(['publish'], { PGPASSWORD: undefined, PGPASSFILE: passfile });
    expect(withFile.code, describeRun(withFile)).toBe(0);
    expect(withFile.stdout + withFile.stderr).not.toContain(pg.password);
    // The password file is the one place the password belongs: not for the suite-wide scan.
    await rm(passfile);
  });

  it('a url that carries a password is refused before anything runs: exit 2 naming the key', async () => {
    const ws = await publishWorkspace(pg, {
      destination: { url: `postgres://${pg.user}:not-here@${pg.host}:${pg.port}/${pg.database}` },
    });
    const run = await ws.cli(['publish']);
    expect(run.code, describeRun(run)).toBe(2);
    expect(run.stdout + run.stderr).toContain('destinations.warehouse.url: must not carry a password');
    expect(run.stdout + run.stderr).not.toContain('not-here');
  });

  it('unknown destinations, tables and url parameters are usage errors (exit 2)', async () => {
    const ws = await publishWorkspace(pg, { destination: { url: `${pg.url()}?sslmode=sometimes` } });
    const unknownTo = await ws.cli(['publish', '--to', 'nowhere']);
    expect(unknownTo.code).toBe(2);
    expect(unknownTo.stdout).toContain(
      '--to \\"nowhere\\": no destination of that name (configured: warehouse)',
    );
    const unknownTable = await ws.cli(['publish', '--tables', 'domains,nope']);
    expect(unknownTable.code).toBe(2);
    expect(unknownTable.stdout).toContain('unknown table \\"nope\\"');
    const badSsl = await ws.cli(['publish']);
    expect(badSsl.code, describeRun(badSsl)).toBe(2);
    expect(badSsl.stdout).toContain('is not an sslmode');
  });

  it('a statement timeout mid-publish rolls it back; the next publish converges', async () => {
    const ws = await synced({ destination: { url: pg.url({ options: '-c statement_timeout=1500' }) } });
    const first = await ws.cli(['publish']);
    expect(first.code, describeRun(first)).toBe(0);
    const reenrich = ws.sim.control.truth.listDomains().slice(0, 3);
    for (const domain of reenrich) ws.sim.control.mutate.reenrich(domain);
    expect((await ws.cli(['sync'])).code).toBe(0);
    const before = await readDestination(pg, ws);
    const marks = await pg.query(`SELECT * FROM "${ws.schema}"._domain_sync_publish ORDER BY table_name`);
    // A lock that lets readers in but holds writers: the publish's merge into the table waits,
    // then times out.
    const blocker = await pg.client();
    try {
      await blocker.query('BEGIN');
      await blocker.query(`LOCK TABLE "${ws.schema}".licenses IN SHARE MODE`);
      const run = await ws.cli(['publish']);
      expect(run.code, describeRun(run)).toBe(1);
      const d = destinationSummary(run);
      expect(d.error?.code).toBe('ERR_DESTINATION_FAILED');
      expect(d.error?.message).toMatch(/statement timeout|canceling statement/);
      expect(d.error?.message).toContain('rolled back');
    } finally {
      await blocker.query('ROLLBACK');
      await blocker.end();
    }
    expect(await readDestination(pg, ws)).toEqual(before);
    expect(await pg.query(`SELECT * FROM "${ws.schema}"._domain_sync_publish ORDER BY table_name`)).toEqual(
      marks,
    );
    const next = await ws.cli(['publish']);
    expect(next.code, describeRun(next)).toBe(0);
    await expectDestinationEqualsMirror(pg, ws, { skipPipelineRunIds: [Number(summaryOf(next)?.runId)] });
  });

  it('a connection dropped mid-publish is rolled back and tried again on a new one; the result equals the mirror', async () => {
    const ws = await synced();
    const first = await ws.cli(['publish']);
    expect(first.code).toBe(0);
    for (const domain of ws.sim.control.truth.listDomains().slice(0, 4))
      ws.sim.control.mutate.reenrich(domain);
    expect((await ws.cli(['sync'])).code).toBe(0);
    const before = await readDestination(pg, ws);
    const blocker = await pg.client();
    let released = false;
    try {
      await blocker.query('BEGIN');
      await blocker.query(`LOCK TABLE "${ws.schema}".domains IN SHARE MODE`);
      const child = startCli(['--config', ws.configPath, '--json', 'publish'], {
        cwd: ws.dir,
        env: ws.env,
        isolatedEnv: true,
      });
      const pid = await waitForWaitingPublisher().catch((e: unknown) => {
        throw new Error(`${String(e)}; publisher stderr: ${child.stderr().slice(-3000)}`);
      });
      // The publisher has sent the changed domains into its temporary table and waits to merge
      // them into the table we hold: drop its connection, mid-publish.
      await pg.query('SELECT pg_terminate_backend($1)', [pid]);
      await waitForWaitingPublisher(pid).catch((e: unknown) => {
        throw new Error(`${String(e)}; publisher stderr: ${child.stderr().slice(-3000)}`);
      });
      // Its first attempt left nothing: the destination is as before.
      expect(await readDestination(pg, ws)).toEqual(before);
      await blocker.query('ROLLBACK');
      released = true;
      const run = await child.exited;
      expect(run.code, describeRun(run)).toBe(0);
      expect(destinationSummary(run).attempts).toBe(2);
      await expectDestinationEqualsMirror(pg, ws, { skipPipelineRunIds: [Number(summaryOf(run)?.runId)] });
    } finally {
      if (!released) await blocker.query('ROLLBACK');
      await blocker.end();
    }
  });

  it('a destination that keeps failing is given up with a message naming it', async () => {
    const ws = await synced();
    expect((await ws.cli(['publish'])).code).toBe(0);
    for (const domain of ws.sim.control.truth.listDomains().slice(0, 2))
      ws.sim.control.mutate.reenrich(domain);
    expect((await ws.cli(['sync'])).code).toBe(0);
    const loaded = loadConfig({ env: {}, cwd: ws.dir, configPath: ws.configPath });
    const mirror = await openMirror(loaded.config!.database.path);
    onTestFinished(() => mirror.close());
    const blocker = await pg.client();
    await blocker.query('BEGIN');
    await blocker.query(`LOCK TABLE "${ws.schema}".domains IN SHARE MODE`);
    let stop = false;
    // Every attempt is dropped as soon as it waits on the table.
    const killer = (async () => {
      while (!stop) {
        await pg.query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'domain-sync' AND wait_event_type = 'Lock'",
        );
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const logger = new MemoryLogger();
    const started = Date.now();
    try {
      const result = await publishPipeline(
        {
          config: loaded.config!,
          mirror,
          logger,
          signal: new AbortController().signal,
          progress: noopProgress,
          clock: Date.now,
        },
        { env: { PGPASSWORD: pg.password }, giveUpAfterMs: 3_000 },
      );
      expect(result.status).toBe('failed');
      expect(result.error?.code).toBe('ERR_DESTINATION_FAILED');
      expect(result.error?.message).toMatch(/^destination "warehouse": gave up after \d+ attempts in \d+ s/);
      expect(Date.now() - started).toBeLessThan(3_000 + 10_000);
    } finally {
      stop = true;
      await killer;
      await blocker.query('ROLLBACK');
      await blocker.end();
    }
  });
});

/** The pid of the publisher's backend once it waits on a lock (another one than `not`). */
async function waitForWaitingPublisher(not?: number): Promise<number> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const rows = await pg.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE application_name = 'domain-sync' AND wait_event_type = 'Lock'",
    );
    const found = rows.find((r) => r.pid !== not);
    if (found) return found.pid;
    if (Date.now() > deadline) throw new Error('no publisher waiting on a lock');
    await new Promise((r) => setTimeout(r, 50));
  }
}
