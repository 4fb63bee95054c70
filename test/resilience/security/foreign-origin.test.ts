/**
 * The key is never sent to a host other than the configured service (docs/contract.md "Behaviour
 * details": `poll_url` and `download_url` may be paths or absolute URLs; only the base URL's
 * origin is followed, anything else is refused with a clear error and never receives the key).
 *
 * The simulator hands out URLs on a "foreign" relay that forwards to the simulator itself, so a
 * client that followed them would succeed: only a refusal keeps the relay's log empty.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../../src/simulator/index.js';
import { runCli, type CliRun } from '../../helpers/cli.js';
import { queryMirror } from '../../helpers/mirror.js';
import { startTestSimulator } from '../../helpers/start-simulator.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { writeTestConfig } from '../../helpers/test-context.js';
import { scale } from '../mode.js';
import { needlesFor, scanBuffer } from './key-scan.js';
import { startRelay, type Relay } from './relay.js';

const KEY = `client_foreign_origin_${process.pid}_Zq8`;

interface Setup {
  sim: RunningSimulator;
  foreign: Relay;
  dir: string;
  configPath: string;
  env: Record<string, string>;
}

async function setup(): Promise<Setup> {
  const sim = await startTestSimulator({ domains: 60, seed: 3, timeScale: 0.001, apiKeys: [KEY] });
  const foreign = await startRelay(sim.origin);
  const dir = await tempDir('domain-sync-foreign-');
  const { path } = await writeTestConfig(dir, { api: { maxRetries: 1 } });
  return {
    sim,
    foreign,
    dir,
    configPath: path,
    env: { DOMAIN_SYNC_API_KEY: KEY, DOMAIN_SYNC_BASE_URL: sim.baseUrl },
  };
}

function summary(run: CliRun): Record<string, unknown> {
  return JSON.parse(run.stdout.trim().split('\n').pop() ?? 'null') as Record<string, unknown>;
}

/** The foreign relay saw no connection at all, and (belt and braces) nothing it saw holds the key. */
function expectUntouched(foreign: Relay): void {
  expect(foreign.connections()).toBe(0);
  expect(foreign.requests()).toEqual([]);
  expect(scanBuffer(foreign.receivedBytes(), needlesFor([KEY]).needles)).toEqual([]);
}

function expectRefused(run: CliRun, foreignOrigin: string, name: string): void {
  expect(run.code, `${name}: ${run.stderr}`).toBe(1);
  const s = summary(run);
  expect(s.ok, name).toBe(false);
  expect(s.error, name).toMatchObject({ code: 'ERR_FOREIGN_ORIGIN' });
  const message = (s.error as { message: string }).message;
  expect(message, name).toContain(foreignOrigin);
  expect(message, name).toMatch(/refused/);
  expect(run.stdout + run.stderr, name).not.toContain(KEY);
}

describe('the relay used as a foreign host', () => {
  it('records a request that reaches it (so an empty log means the client never came)', async () => {
    const { foreign } = await setup();
    const res = await fetch(`${foreign.origin}/api/v1/igaming/account`, { headers: { 'X-Probe': 'p1' } });
    expect(res.status).toBe(401); // forwarded to the simulator, which wants a key
    expect(foreign.connections()).toBe(1);
    expect(foreign.requests()[0]).toMatchObject({ method: 'GET', url: '/api/v1/igaming/account' });
    expect(foreign.receivedBytes().toString()).toContain('p1');
  });
});

describe('export: download_url and poll_url on another origin', () => {
  // Spellings a service (or anything in its path) could use for another host.
  // `npm test` tries the first three; `npm run test:resilience` all of them.
  const allSpellings: Array<[string, (s: Setup) => string]> = [
    ['an absolute URL, same host, other port', (s) => s.foreign.origin],
    ['protocol-relative //host:port', (s) => `//127.0.0.1:${s.foreign.port}`],
    [
      'userinfo naming the service host',
      (s) => `http://127.0.0.1:${new URL(s.sim.origin).port}@127.0.0.1:${s.foreign.port}`,
    ],
    ['localhost instead of 127.0.0.1', (s) => `http://localhost:${s.foreign.port}`],
    ['a backslash path /\\host:port', (s) => `/\\127.0.0.1:${s.foreign.port}`],
    ['an upper-case scheme', (s) => `HTTP://127.0.0.1:${s.foreign.port}`],
  ];
  const spellings = allSpellings.slice(0, scale(3, allSpellings.length));
  const exportArgs = (s: Setup): string[] => [
    'export',
    '--json',
    '--config',
    s.configPath,
    '--filter',
    'jurisdiction=mga',
  ];

  it(`download_url on another origin, in ${spellings.length} spellings: refused with ERR_FOREIGN_ORIGIN naming it, the foreign host never contacted, nothing downloaded`, async () => {
    const setups = await Promise.all(spellings.map(() => setup()));
    await Promise.all(
      spellings.map(async ([name, origin], i) => {
        const s = setups[i]!;
        s.sim.control.setUrlStyle({ downloadUrl: { origin: origin(s) } });
        const run = await runCli(exportArgs(s), { cwd: s.dir, env: s.env });
        expectRefused(run, new URL(`${origin(s)}/x`, s.sim.baseUrl).origin, name);
        expectUntouched(s.foreign);
        expect(existsSync(join(s.dir, 'exports')) ? readdirSync(join(s.dir, 'exports')) : [], name).toEqual(
          [],
        );
      }),
    );

    // Once the service hands out a path again, the recorded export is resumed and downloaded,
    // not paid for again.
    const s = setups[0]!;
    s.sim.control.setUrlStyle({ downloadUrl: 'path' });
    const again = await runCli(exportArgs(s), { cwd: s.dir, env: s.env });
    expect(again.code, again.stderr).toBe(0);
    expect(s.sim.control.usage().filter((u) => u.endpoint === 'POST /exports')).toHaveLength(1);
    const loaded = queryMirror<{ n: number }>(
      join(s.dir, 'mirror.sqlite'),
      'SELECT count(*) AS n FROM domains',
    );
    expect(loaded[0]!.n).toBe(s.sim.control.truth.listDomains({ jurisdiction: 'mga' }).length);
    expectUntouched(s.foreign);
  });

  it('poll_url on another origin is never used (the export is polled by id) and an absolute download_url on the service origin is followed', async () => {
    const s = await setup();
    s.sim.control.setUrlStyle({ pollUrl: { origin: s.foreign.origin }, downloadUrl: 'absolute' });
    const run = await runCli(exportArgs(s), { cwd: s.dir, env: s.env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout + run.stderr).not.toContain(KEY);
    const polls = s.sim.control.usage().filter((u) => u.endpoint === 'GET /exports/:id');
    const downloads = s.sim.control.usage().filter((u) => u.endpoint === 'GET /exports/:id/download');
    expect(polls.length).toBeGreaterThan(0);
    expect(downloads).toHaveLength(1);
    expect(readdirSync(join(s.dir, 'exports'))).toHaveLength(1);
    expectUntouched(s.foreign);
  });
});

describe('enrich: poll_url on another origin', () => {
  it('is never used: runs are polled by id on the service origin and the foreign host is never contacted', async () => {
    const sim = await startTestSimulator({
      domains: 60,
      seed: 3,
      timeScale: 0.001,
      apiKeys: [KEY],
      runFailureRate: 0,
    });
    const foreign = await startRelay(sim.origin);
    const dir = await tempDir('domain-sync-foreign-');
    const { path } = await writeTestConfig(dir, { api: { maxRetries: 1 } });
    sim.control.setUrlStyle({ pollUrl: { origin: foreign.origin } });
    const domains = sim.control.truth.listDomains().slice(0, 2);
    const args = ['enrich', '--json', '--config', path, '--budget', '20', '--wait', '30s'];
    for (const d of domains) args.push('--domain', d);
    const run = await runCli(args, {
      cwd: dir,
      env: { DOMAIN_SYNC_API_KEY: KEY, DOMAIN_SYNC_BASE_URL: sim.baseUrl },
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout + run.stderr).not.toContain(KEY);
    expect(summary(run)).toMatchObject({ stats: { posts: 2, completed: 2 } });
    const polls = sim.control.requests().filter((r) => r.path.includes('/enrichment_runs/'));
    expect(polls.length).toBeGreaterThan(0);
    expectUntouched(foreign);
  });
});
