import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, startCli } from '../../helpers/cli.js';
import { startTestSimulator } from '../../helpers/start-simulator.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { writeTestConfig } from '../../helpers/test-context.js';

/** Exactly one JSON object on stdout, nothing else. */
function onlyJson(stdout: string): Record<string, unknown> {
  const lines = stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!) as Record<string, unknown>;
}

describe('domain-sync simulate + account', () => {
  it('serves, and account prints the account with any client_ key; --json prints one object', async () => {
    const dir = await tempDir();
    const sim = startCli(['simulate', '--port', '0', '--domains', '5000', '--seed', '1'], {
      cwd: dir,
    });
    const [, origin] = await sim.waitForOutput(/simulator listening on (http:\/\/127\.0\.0\.1:\d+)/);
    const baseUrl = `${origin}/api/v1/igaming`;
    const env = { DOMAIN_SYNC_API_KEY: 'client_x' };

    const human = await runCli(['account', '--base-url', baseUrl], { env, cwd: dir });
    expect(human.stderr).not.toContain('client_x');
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/plan\s+simulator/);
    expect(human.stdout).toMatch(/available credits\s+100000/);

    const json = await runCli(['account', '--json', '--base-url', baseUrl], { env, cwd: dir });
    expect(json.code).toBe(0);
    const summary = onlyJson(json.stdout);
    expect(summary).toMatchObject({ command: 'account', ok: true, exitCode: 0 });
    expect(summary.account).toMatchObject({
      plan: 'simulator',
      credits_granted: 100000,
      available_credits: 100000,
    });

    // Global flags before the command name work the same.
    const before = await runCli(['--json', '--base-url', baseUrl, 'account'], { env, cwd: dir });
    expect(onlyJson(before.stdout)).toMatchObject({ command: 'account', ok: true });

    sim.child.kill('SIGTERM');
    await new Promise((resolve) => sim.child.once('close', resolve));
    expect(sim.child.exitCode).toBe(0);
  });
});

describe('exit statuses and errors', () => {
  it('a missing DOMAIN_SYNC_API_KEY is exit 2 naming the variable', async () => {
    const dir = await tempDir();
    const run = await runCli(['account', '--base-url', 'http://127.0.0.1:9/api/v1/igaming'], {
      cwd: dir,
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('DOMAIN_SYNC_API_KEY');
    expect(run.stdout).toBe('');
  });

  it('a config error is exit 2 naming the key path, with --json printing one object', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'config.json'), JSON.stringify({ api: { timeoutMs: 'soon' }, extra: true }));
    const run = await runCli(['status', '--json'], { cwd: dir });
    expect(run.code).toBe(2);
    const summary = onlyJson(run.stdout);
    expect(summary).toMatchObject({ ok: false, exitCode: 2, error: { code: 'ERR_CONFIG' } });
    expect(String((summary.error as { message: string }).message)).toMatch(/api\.timeoutMs/);
    expect(run.stderr).toMatch(/extra: unknown key/);
  });

  it('bad usage is exit 2', async () => {
    const dir = await tempDir();
    expect((await runCli(['sync', '--concurrency', 'lots'], { cwd: dir })).code).toBe(2);
    expect((await runCli(['frobnicate'], { cwd: dir })).code).toBe(2);
    const badFilter = await runCli(['sync', '--filter', 'country=de'], {
      cwd: dir,
      env: { DOMAIN_SYNC_API_KEY: 'client_x', DOMAIN_SYNC_BASE_URL: 'http://127.0.0.1:9/api/v1/igaming' },
    });
    expect(badFilter.code).toBe(2);
    expect(badFilter.stderr).toMatch(/unknown filter "country"/);
    expect((await runCli(['--help'], { cwd: dir })).code).toBe(0);
  });

  it('--version prints the version of package.json and exits 0; with --json as a JSON object', async () => {
    const dir = await tempDir();
    const { version } = JSON.parse(
      readFileSync(join(import.meta.dirname, '..', '..', '..', 'package.json'), 'utf8'),
    ) as {
      version: string;
    };
    expect(version).toMatch(/^\d+\.\d+\.\d+/);
    for (const args of [['--version'], ['-V']]) {
      const run = await runCli(args, { cwd: dir });
      expect(run.code).toBe(0);
      expect(run.stdout).toBe(`${version}\n`);
      expect(run.stderr).toBe('');
    }
    const json = await runCli(['--json', '--version'], { cwd: dir });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ command: 'version', ok: true, exitCode: 0, version });
    expect(json.stderr).toBe('');
  });

  it('a rejected key is exit 3 and the key appears nowhere in the output', async () => {
    const sim = await startTestSimulator({ domains: 50, apiKeys: ['client_right'] });
    const dir = await tempDir();
    const secret = 'client_wrong_but_secret_123';
    const run = await runCli(['account', '--json', '--base-url', sim.baseUrl], {
      cwd: dir,
      env: { DOMAIN_SYNC_API_KEY: secret },
    });
    expect(run.code).toBe(3);
    expect(onlyJson(run.stdout)).toMatchObject({ ok: false, exitCode: 3, error: { code: 'ERR_AUTH' } });
    expect(run.stdout + run.stderr).not.toContain(secret);
  });

  it('sync through the CLI: exit 0, one JSON summary, and exit 1 with the failures listed when a profile fails', async () => {
    const sim = await startTestSimulator({ domains: 120, seed: 21 });
    const dir = await tempDir();
    const { path } = await writeTestConfig(dir, { api: { maxRetries: 1 } });
    const env = { DOMAIN_SYNC_API_KEY: sim.apiKey, DOMAIN_SYNC_BASE_URL: sim.baseUrl };
    const ok = await runCli(['sync', '--json', '--config', path], { cwd: dir, env });
    expect(ok.code).toBe(0);
    expect(onlyJson(ok.stdout)).toMatchObject({
      command: 'sync',
      status: 'done',
      stats: { listed: 120, profilesFetched: 120, indexesDeferred: 16 },
    });

    const bad = sim.control.truth.listDomains()[5]!;
    sim.control.mutate.reenrich(bad);
    sim.control.setFaults([
      { method: 'GET', path: `/domains/${encodeURIComponent(bad)}`, kind: 'malformed' },
    ]);
    const failed = await runCli(['--config', path, 'sync', '--json'], { cwd: dir, env });
    expect(failed.code).toBe(1);
    const summary = onlyJson(failed.stdout);
    expect(summary).toMatchObject({
      status: 'done',
      ok: false,
      failures: [{ item: bad, code: 'ERR_PROTOCOL' }],
    });
    expect(failed.stdout + failed.stderr).not.toContain(sim.apiKey);

    // Without --json, a first sync into an empty mirror says it built the indexes it set aside.
    const humanDir = await tempDir();
    const human = await runCli(['sync', '--config', (await writeTestConfig(humanDir)).path], {
      cwd: humanDir,
      env,
    });
    expect(human.code).toBe(1); // the malformed profile is still there
    expect(human.stdout).toContain(
      'first load: rows loaded first, then built 16 indexes of licences, payment methods, change_log and domains',
    );
  });
});
