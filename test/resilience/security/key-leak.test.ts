/**
 * The key never appears in output, logs, the mirror, export files or snapshots (docs/contract.md
 * "Promises"). Every command and pipeline runs through the CLI with a distinctive key
 * (with `+`, `/` and `=` in it, so its URL-encoded and JSON forms differ from the raw one) at
 * debug level, half of the runs logging to `log.file` and half to stderr, with the error paths
 * included: a wrong key (401), 5xx with retries, resets, a truncated download, a paid POST
 * whose outcome is unknown, a refused connection. Then every byte of every stdout, stderr, log
 * file, mirror file (with -wal/-shm), export file and snapshot is searched for both keys in
 * every form (`key-scan.ts`).
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { RunningSimulator } from '../../../src/simulator/index.js';
import { runCli, type CliRun } from '../../helpers/cli.js';
import { startTestSimulator } from '../../helpers/start-simulator.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { testConfigFile } from '../../helpers/test-context.js';
import { keyNeedles, needlesFor, scanBuffer, scanPath, describeHit } from './key-scan.js';

const KEY = `client_LeakScan+${randomBytes(6).toString('hex')}/Kq=`;
const WRONG_KEY = `client_WrongScan+${randomBytes(6).toString('hex')}/Wr=`;

interface Chain {
  sim: RunningSimulator;
  dir: string;
  /** Logs to a file at debug level. */
  fileConfig: string;
  /** Logs to stderr at debug level (no log.file), Bearer auth. */
  stderrConfig: string;
  logFile: string;
  runs: Array<{ label: string; run: CliRun }>;
}

async function chain(seed: number): Promise<Chain> {
  const sim = await startTestSimulator({ domains: 80, seed, timeScale: 0.001, apiKeys: [KEY] });
  const dir = await tempDir('domain-sync-leak-');
  const logFile = join(dir, 'logs', 'domain-sync.log');
  const common = { api: { maxRetries: 3 }, log: { level: 'debug' } };
  const fileConfig = join(dir, 'file-log.json');
  writeFileSync(
    fileConfig,
    JSON.stringify(testConfigFile(dir, { ...common, log: { level: 'debug', file: logFile } })),
  );
  const stderrConfig = join(dir, 'stderr-log.json');
  writeFileSync(
    stderrConfig,
    JSON.stringify(testConfigFile(dir, { ...common, api: { maxRetries: 3, authHeader: 'bearer' } })),
  );
  return { sim, dir, fileConfig, stderrConfig, logFile, runs: [] };
}

async function cli(
  c: Chain,
  label: string,
  args: string[],
  options: { config: 'file' | 'stderr'; key?: string; baseUrl?: string; expectCode: number | number[] },
): Promise<CliRun> {
  const config = options.config === 'file' ? c.fileConfig : c.stderrConfig;
  const run = await runCli([...args, '--config', config, '--log-level', 'debug'], {
    cwd: c.dir,
    env: { DOMAIN_SYNC_API_KEY: options.key ?? KEY, DOMAIN_SYNC_BASE_URL: options.baseUrl ?? c.sim.baseUrl },
  });
  c.runs.push({ label, run });
  expect([options.expectCode].flat(), `${label}: exit ${run.code}: ${run.stderr.slice(-2000)}`).toContain(
    run.code,
  );
  return run;
}

/** sync, a wrong key, exports (CSV with a truncated download; JSON), snapshot, status. */
async function chainA(c: Chain): Promise<void> {
  const { sim } = c;
  await cli(c, 'migrate', ['migrate'], { config: 'file', expectCode: 0 });
  sim.control.setFaults([
    { method: 'GET', path: '/domains', kind: 'status', times: 2, retryAfterSeconds: 0 },
    { method: 'GET', path: '/domains/', kind: 'reset', times: 2 },
    { method: 'GET', path: '/domains/', kind: 'truncate', times: 1 },
  ]);
  await cli(c, 'sync with 5xx, resets and a truncated body', ['sync', '--json'], {
    config: 'file',
    expectCode: 0,
  });
  await cli(c, 'account, wrong key', ['account', '--json'], {
    config: 'stderr',
    key: WRONG_KEY,
    expectCode: 3,
  });
  await cli(c, 'sync, wrong key', ['sync', '--json'], { config: 'file', key: WRONG_KEY, expectCode: 3 });
  sim.control.setFaults([{ method: 'GET', path: '/exports/1/download', kind: 'truncate', times: 1 }]);
  await cli(c, 'export csv, truncated download', ['export', '--json', '--filter', 'jurisdiction=mga'], {
    config: 'stderr',
    expectCode: 0,
  });
  sim.control.clearFaults();
  await cli(c, 'export json', ['export', '--json', '--format', 'json', '--filter', 'jurisdiction=ukgc'], {
    config: 'file',
    expectCode: 0,
  });
  await cli(c, 'snapshot', ['snapshot', '--json'], { config: 'stderr', expectCode: 0 });
  await cli(c, 'status', ['status', '--json'], { config: 'file', expectCode: 0 });
}

/** enrich with an unknown-outcome POST, run nightly, persistent 5xx, a refused connection. */
async function chainB(c: Chain): Promise<void> {
  const { sim } = c;
  sim.control.setFaults([
    { method: 'POST', path: '/enrichments', kind: 'status', status: 503, times: 1, afterProcessing: true },
  ]);
  // Exit 1 is allowed: a run may fail (the simulator fails 5% of runs) and an unknown outcome is
  // an item failure until reconciled; the point here is what gets written.
  await cli(c, 'enrich with an unknown POST outcome', ['enrich', '--json', '--budget', '40'], {
    config: 'stderr',
    expectCode: [0, 1],
  });
  sim.control.clearFaults();
  await cli(c, 'run nightly', ['run', 'nightly', '--json'], { config: 'file', expectCode: 0 });
  sim.control.setFaults([{ method: 'GET', path: '/account', kind: 'status', status: 500 }]);
  await cli(c, 'account, persistent 500', ['account', '--json'], { config: 'file', expectCode: 1 });
  sim.control.clearFaults();
  await cli(c, 'account, connection refused', ['account', '--json'], {
    config: 'stderr',
    baseUrl: 'http://127.0.0.1:9/api/v1/igaming',
    expectCode: 1,
  });
}

it('no stdout, stderr, log file, mirror file, export file or snapshot holds the key, in any form', async () => {
  const [a, b] = await Promise.all([chain(11), chain(12)]);
  await Promise.all([chainA(a!), chainB(b!)]);
  const needles = needlesFor([KEY, WRONG_KEY]).needles;
  // Both keys differ in every form we search, so each form was really looked for.
  expect(keyNeedles(KEY).map((n) => n.form)).toEqual(
    expect.arrayContaining(['raw', 'url-encoded', 'json-escaped-slash', 'base64@0', 'base64@1', 'base64@2']),
  );

  const hits: string[] = [];
  let outputBytes = 0;
  for (const c of [a!, b!]) {
    for (const { label, run } of c.runs) {
      for (const [stream, text] of [
        ['stdout', run.stdout],
        ['stderr', run.stderr],
      ] as const) {
        outputBytes += Buffer.byteLength(text);
        for (const hit of scanBuffer(Buffer.from(text), needles, `${stream} of ${label}`))
          hits.push(describeHit(hit));
      }
    }
  }
  const files = [a!, b!].map((c) => scanPath(c.dir, needles));
  for (const f of files) hits.push(...f.hits.map(describeHit));
  expect(hits).toEqual([]);

  // The same scan does see a key here: plant one (base64, mid-file) and remove it again.
  const plant = join(a!.dir, 'snapshots', 'planted.bin');
  writeFileSync(
    plant,
    Buffer.concat([randomBytes(1001), Buffer.from(Buffer.from(`:${KEY}`).toString('base64'))]),
  );
  expect(scanPath(a!.dir, needles).hits.map((h) => [h.file, h.form])).toEqual([[plant, 'base64@1']]);
  rmSync(plant);

  // The scan was not vacuous: the error paths happened and every kind of output exists.
  for (const c of [a!, b!]) {
    const names = listFiles(c.dir).map((p) => p.slice(c.dir.length + 1));
    expect(names.filter((n) => n.startsWith('mirror.sqlite'))).toContain('mirror.sqlite');
    const log = readFileSync(c.logFile, 'utf8');
    expect(log).toMatch(/"level":20/); // debug lines
    expect(statSync(c.logFile).size).toBeGreaterThan(1000);
  }
  const aNames = listFiles(a!.dir);
  expect(aNames.filter((p) => p.startsWith(join(a!.dir, 'exports', '/')))).toHaveLength(2);
  expect(aNames.filter((p) => p.endsWith('.parquet')).length).toBeGreaterThanOrEqual(7);
  expect(listFiles(b!.dir).filter((p) => p.endsWith('.parquet')).length).toBeGreaterThanOrEqual(7);
  // stderr runs logged at debug level on stderr.
  const stderrLogs = a!.runs.find((r) => r.label === 'snapshot')!.run.stderr;
  expect(stderrLogs).toMatch(/"level":20/);
  expect(a!.sim.control.faultStats().injected).toMatchObject({ status: 2, reset: 2, truncate: 2 });
  expect(a!.sim.control.usage().filter((u) => u.status === 401).length).toBeGreaterThanOrEqual(2);
  // The POST whose answer was lost, then the persistent 500s.
  expect(b!.sim.control.faultStats().injected.status).toBeGreaterThanOrEqual(2);
  expect(b!.sim.control.requests().some((r) => r.auth === 'bearer' && r.authValid)).toBe(true);
  expect(files.reduce((n, f) => n + f.bytes, 0) + outputBytes).toBeGreaterThan(100_000);
});

function listFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}
