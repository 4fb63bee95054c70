/**
 * A PostgreSQL password gets the API key's protection (docs/contract.md "Destinations"): it never
 * appears in output, logs, the mirror or snapshots. `publish` runs through the CLI at debug level
 * with a distinctive password (with `+`, `/` and `=`, so its encoded forms differ), half of the
 * runs logging to `log.file`: a good publish from PGPASSWORD, one from a password file, refused
 * credentials, an unreachable server, `status`, a named pipeline with a publish step, and a
 * snapshot. Then every byte of every stdout, stderr, log file, mirror file and snapshot is
 * searched for the password in every form (`key-scan.ts`); the suite-wide scan searches the
 * rest (the password is registered with it).
 */
import { randomBytes } from 'node:crypto';
import { chmod, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCli, type CliRun } from '../../helpers/cli.js';
import { startTestPostgres, type TestPostgres } from '../../helpers/postgres.js';
import { startTestSimulator } from '../../helpers/start-simulator.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { testConfigFile } from '../../helpers/test-context.js';
import { registerKey } from './artifacts.js';
import { describeHit, needlesFor, scanBuffer, scanPath } from './key-scan.js';

const ROLE = 'leak_scan_role';
const PASSWORD = `Pg+Leak/${randomBytes(9).toString('hex')}=x`;
const WRONG = `Pg+Wrong/${randomBytes(9).toString('hex')}=y`;

let pg: TestPostgres;
beforeAll(async () => {
  pg = await startTestPostgres();
  registerKey(PASSWORD, 'scenario');
  registerKey(WRONG, 'scenario');
  await pg.query(`CREATE ROLE ${ROLE} LOGIN PASSWORD '${PASSWORD.replaceAll("'", "''")}'`);
  await pg.query(`GRANT CREATE, TEMPORARY ON DATABASE ${pg.database} TO ${ROLE}`);
}, 120_000);
afterAll(async () => {
  await pg?.close();
});

it('the PostgreSQL password appears in no output, log, mirror or snapshot', async () => {
  const sim = await startTestSimulator({ domains: 60, seed: 5 });
  const dir = await tempDir('domain-sync-pg-leak-');
  const logFile = join(dir, 'logs', 'domain-sync.log');
  const url = pg.url().replace(`${pg.user}@`, `${ROLE}@`);
  const destinations = {
    warehouse: { type: 'postgres', url, schema: 'leak_scan' },
    nowhere: {
      type: 'postgres',
      url: `postgres://${ROLE}@127.0.0.1:1/x?connect_timeout=2`,
      schema: 'leak_scan',
    },
  };
  const pipelines = {
    'sync-publish': { steps: ['sync', { type: 'publish', options: { to: ['warehouse'] } }] },
  };
  const fileConfig = join(dir, 'file-log.json');
  await writeFile(
    fileConfig,
    JSON.stringify(testConfigFile(dir, { log: { level: 'debug', file: logFile }, destinations, pipelines })),
  );
  const stderrConfig = join(dir, 'stderr-log.json');
  await writeFile(
    stderrConfig,
    JSON.stringify(testConfigFile(dir, { log: { level: 'debug' }, destinations, pipelines })),
  );
  const passfile = join(dir, 'pgpass');
  await writeFile(passfile, `*:*:*:${ROLE}:${PASSWORD.replaceAll(':', '\\:')}\n`);
  await chmod(passfile, 0o600);

  const runs: Array<{ label: string; run: CliRun }> = [];
  const cli = async (
    label: string,
    args: string[],
    config: string,
    env: Record<string, string | undefined>,
    expectCode: number,
  ): Promise<void> => {
    const run = await runCli(['--config', config, '--log-level', 'debug', ...args], {
      cwd: dir,
      env: { DOMAIN_SYNC_API_KEY: sim.apiKey, DOMAIN_SYNC_BASE_URL: sim.baseUrl, ...env },
      isolatedEnv: true,
    });
    runs.push({ label, run });
    expect(run.code, `${label}: ${run.stderr.slice(-2000)}`).toBe(expectCode);
  };

  await cli('sync', ['sync'], fileConfig, {}, 0);
  await cli(
    'publish, PGPASSWORD',
    ['publish', '--to', 'warehouse', '--json'],
    stderrConfig,
    { PGPASSWORD: PASSWORD },
    0,
  );
  await cli(
    'publish, password file',
    ['publish', '--to', 'warehouse', '--full'],
    fileConfig,
    { PGPASSFILE: passfile },
    0,
  );
  await cli(
    'publish, refused',
    ['publish', '--to', 'warehouse', '--json'],
    stderrConfig,
    { PGPASSWORD: WRONG },
    1,
  );
  await cli(
    'publish, unreachable',
    ['publish', '--to', 'nowhere', '--json'],
    fileConfig,
    { PGPASSWORD: PASSWORD },
    1,
  );
  await cli('publish, every destination', ['publish'], stderrConfig, { PGPASSWORD: PASSWORD }, 1);
  await cli(
    'run with a publish step',
    ['run', 'sync-publish', '--json'],
    fileConfig,
    { PGPASSWORD: PASSWORD },
    0,
  );
  await cli('status', ['status', '--json'], stderrConfig, { PGPASSWORD: PASSWORD }, 0);
  await cli('snapshot', ['snapshot'], fileConfig, { PGPASSWORD: PASSWORD }, 0);

  const { needles } = needlesFor([PASSWORD, WRONG]);
  const hits: string[] = [];
  for (const { label, run } of runs) {
    for (const [stream, text] of [
      ['stdout', run.stdout],
      ['stderr', run.stderr],
    ] as const) {
      for (const hit of scanBuffer(Buffer.from(text), needles, `${label} ${stream}`))
        hits.push(describeHit(hit));
    }
  }
  // The log file, the mirror (with -wal/-shm), the snapshots: everything in the workspace but the
  // password file the test wrote itself and the config files.
  const scanned = scanPath(dir, needles);
  for (const hit of scanned.hits) {
    if (hit.file === passfile) continue;
    hits.push(describeHit(hit));
  }
  expect(scanned.files).toBeGreaterThan(3);
  expect(hits).toEqual([]);
  // The password file is the one place the password is meant to be: not for the suite-wide scan.
  await rm(passfile);
});
