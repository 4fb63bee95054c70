/**
 * `domain-sync ui` as a user starts it: no API key, a mirror that does not exist yet or has an
 * older schema, loopback by default, a warning for any other address, and a clean stop on
 * SIGTERM.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { startCli } from '../../helpers/cli.js';
import { queryMirror } from '../../helpers/mirror.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { httpRequest } from './http.js';

it('serves a fresh mirror on loopback without an API key, and stops on SIGTERM', async () => {
  const dir = await tempDir();
  const db = join(dir, 'mirror.sqlite');
  const cli = startCli(['ui', '--port', '0', '--db', db], { cwd: dir, isolatedEnv: true });
  const [, url] = await cli.waitForOutput(/on (http:\/\/127\.0\.0\.1:\d+\/) \(read-only/);
  const home = await httpRequest(url!, '/');
  expect(home.status).toBe(200);
  expect(home.body).toContain('No pipeline has run on this mirror yet.');
  // The schema was created, with the dashboard's indexes, before the read-only connection opened.
  expect(queryMirror(db, `SELECT name FROM kysely_migration ORDER BY name`).map((r) => r.name)).toContain(
    '0004_dashboard_read_indexes',
  );
  expect((await httpRequest(url!, '/domains', { method: 'POST' })).status).toBe(405);
  cli.kill('SIGTERM');
  const run = await cli.exited;
  expect(run.code).toBe(0);
  expect(run.stderr).not.toMatch(/warning/);
  expect(run.stdout).toContain('dashboard stopped');
});

it('warns when --host lets other machines in, and reports the address with --json', async () => {
  const dir = await tempDir();
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ database: { path: join(dir, 'm.sqlite') } }));
  const cli = startCli(['ui', '--port', '0', '--host', '0.0.0.0', '--config', config, '--json'], {
    cwd: dir,
    isolatedEnv: true,
  });
  const [line] = await cli.waitForOutput(/\{"event":"listening".*\}/);
  const event = JSON.parse(line!) as { url: string };
  expect(event.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+\/$/);
  expect(cli.stderr()).toContain('--host 0.0.0.0 lets other machines reach the dashboard');
  // Any Host is accepted once the operator chose a non-loopback address.
  const port = new URL(event.url).port;
  expect(
    (await httpRequest(`http://127.0.0.1:${port}`, '/runs', { headers: { host: `dashboard.lan:${port}` } }))
      .status,
  ).toBe(200);
  cli.kill('SIGTERM');
  const run = await cli.exited;
  expect(run.code).toBe(0);
  expect(cli.summary()).toMatchObject({ command: 'ui', ok: true, url: event.url });
});

it('fails with exit 1 naming the address when the port is taken', async () => {
  const dir = await tempDir();
  const first = startCli(['ui', '--port', '0', '--db', join(dir, 'a.sqlite')], {
    cwd: dir,
    isolatedEnv: true,
  });
  const [, port] = await first.waitForOutput(/127\.0\.0\.1:(\d+)\//);
  const second = startCli(['ui', '--port', port!, '--db', join(dir, 'b.sqlite')], {
    cwd: dir,
    isolatedEnv: true,
  });
  const run = await second.exited;
  expect(run.code).toBe(1);
  expect(run.stderr).toContain(`cannot serve the dashboard on 127.0.0.1:${port}`);
  expect(run.stderr).not.toMatch(/internal error|\n\s+at /);
  first.kill('SIGTERM');
  expect((await first.exited).code).toBe(0);
});
