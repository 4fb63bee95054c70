/**
 * The dashboard never shows a secret (docs/ui.md "Security"): started with the API key and
 * destination credentials in its environment (`DOMAIN_SYNC_API_KEY`, `PGPASSWORD`, the AWS
 * variables) and a config with destinations, no page, error page or header it serves, and
 * nothing it prints, holds any of them in any form the key scan knows (key-scan.ts).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { runCli, startCli } from '../../helpers/cli.js';
import { queryMirror } from '../../helpers/mirror.js';
import { startTestSimulator } from '../../helpers/start-simulator.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { testConfigFile } from '../../helpers/test-context.js';
import { httpRequest } from '../../integration/ui/http.js';
import { registerKey } from './artifacts.js';
import { describeHit, needlesFor, scanBuffer } from './key-scan.js';

const KEY = `client_UiScan+${process.pid}/Zq=`;
const PG_PASSWORD = `pg-secret-${process.pid}-Ui`;
const AWS_SECRET = `aws/secret+${process.pid}UiScanKey=`;

it('no page, header or output of `ui` holds the API key or a destination credential', async () => {
  registerKey(PG_PASSWORD, 'scenario');
  registerKey(AWS_SECRET, 'scenario');
  const sim = await startTestSimulator({ domains: 60, seed: 5, apiKeys: [KEY] });
  const dir = await tempDir('domain-sync-ui-secrets-');
  const config = join(dir, 'config.json');
  writeFileSync(
    config,
    JSON.stringify(
      testConfigFile(dir, {
        destinations: {
          warehouse: { type: 'postgres', url: 'postgres://loader@127.0.0.1:5432/catalogue?sslmode=disable' },
          lake: {
            type: 's3',
            url: 's3://bucket/prefix',
            endpoint: 'http://127.0.0.1:9000',
            forcePathStyle: true,
          },
        },
      }),
    ),
  );
  const env = {
    DOMAIN_SYNC_API_KEY: KEY,
    DOMAIN_SYNC_BASE_URL: sim.baseUrl,
    PGPASSWORD: PG_PASSWORD,
    AWS_ACCESS_KEY_ID: 'AKIAUISCANTEST',
    AWS_SECRET_ACCESS_KEY: AWS_SECRET,
  };
  expect((await runCli(['sync', '--config', config], { cwd: dir, env })).code).toBe(0);
  expect((await runCli(['account', '--config', config], { cwd: dir, env })).code).toBe(0);
  expect((await runCli(['snapshot', '--config', config], { cwd: dir, env })).code).toBe(0);

  const ui = startCli(['ui', '--port', '0', '--config', config, '--log-level', 'debug'], { cwd: dir, env });
  const [, origin] = await ui.waitForOutput(/on (http:\/\/127\.0\.0\.1:\d+)\//);
  const domains = queryMirror<{ d: string }>(
    join(dir, 'mirror.sqlite'),
    'SELECT domain_normalized AS d FROM domains LIMIT 5',
  );
  const paths = [
    '/',
    '/runs',
    '/runs/1',
    '/credits',
    '/changes',
    '/domains',
    '/snapshots',
    ...domains.map((r) => `/domains/${encodeURIComponent(r.d)}`),
    '/nope',
    '/changes?from=bad',
  ];
  const { needles } = needlesFor([KEY, PG_PASSWORD, AWS_SECRET]);
  const hits: string[] = [];
  let bytes = 0;
  for (const path of paths) {
    for (const method of ['GET', 'POST']) {
      const answer = await httpRequest(origin!, path, { method });
      const text = `${JSON.stringify(answer.headers)}\n${answer.body}`;
      bytes += text.length;
      hits.push(...scanBuffer(Buffer.from(text), needles, `${method} ${path}`).map(describeHit));
    }
  }
  ui.kill('SIGTERM');
  const run = await ui.exited;
  expect(run.code).toBe(0);
  hits.push(...scanBuffer(Buffer.from(run.stdout + run.stderr), needles, 'ui output').map(describeHit));
  expect(hits).toEqual([]);
  // Not vacuous: the pages were drawn, and the debug log shows the requests.
  expect(bytes).toBeGreaterThan(50_000);
  expect(run.stderr).toContain('ui request');
});
