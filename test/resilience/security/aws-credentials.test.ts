/**
 * S3 credentials get the same protection as the API key (docs/contract.md "Destinations"): the
 * secret access key and the session token, distinctive in every form the scan searches, never
 * appear in stdout, stderr, the log file, the mirror or the snapshots of `snapshot --to` runs at
 * debug level, error paths included (500s and resets retried, a wrong access key id, a missing
 * bucket, a closed port). The suite-wide scan (artifacts.ts) also registers every AWS secret a
 * child is given, so every other test's output is searched for them too.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCli, type CliRun } from '../../helpers/cli.js';
import {
  awsEnv,
  s3DestinationConfig,
  startTestS3Server,
  type TestS3Server,
} from '../../helpers/s3-server.js';
import { startS3FaultProxy, type S3FaultProxy } from '../../helpers/s3-fault-proxy.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { bigSectionsMirror } from '../../integration/s3/helpers.js';
import { describeHit, keyNeedles, needlesFor, scanBuffer, scanPath } from './key-scan.js';

const SECRET = `awsLeak+${randomBytes(12).toString('base64')}/Sk=`;
const SESSION_TOKEN = `IQoJb3JpZ2luX2Vj+${randomBytes(24).toString('base64')}/Tk=`;
const BUCKET = 'leak';
let server: TestS3Server;
let proxy: S3FaultProxy;

beforeAll(async () => {
  server = await startTestS3Server([BUCKET]);
  proxy = await startS3FaultProxy(server.endpoint);
}, 60_000);

afterAll(async () => {
  await proxy?.close();
  await server?.close();
});

it('no output, log, mirror or snapshot of snapshot --to holds the AWS secret or session token', async () => {
  const dir = await tempDir('domain-sync-aws-leak-');
  const mirror = join(dir, 'mirror.sqlite');
  await bigSectionsMirror(mirror, 50);
  const logFile = join(dir, 'logs', 'domain-sync.log');
  const config = (name: string, logToFile: boolean): string => {
    const path = join(dir, `${name}.json`);
    writeFileSync(
      path,
      JSON.stringify({
        database: { path: mirror },
        snapshots: { dir: join(dir, 'snapshots') },
        destinations: {
          lake: s3DestinationConfig(proxy.endpoint, BUCKET, 'p', { giveUpAfter: '3s' }),
          missing: s3DestinationConfig(proxy.endpoint, 'no-such-bucket', 'p'),
          closed: s3DestinationConfig('http://127.0.0.1:9', BUCKET, 'p', { giveUpAfter: '2s' }),
        },
        log: { level: 'debug', ...(logToFile ? { file: logFile } : {}) },
        lock: { lease: '2s', wait: '20s' },
      }),
    );
    return path;
  };
  const fileConfig = config('file-log', true);
  const stderrConfig = config('stderr-log', false);
  const env = awsEnv(server, SECRET, { AWS_SESSION_TOKEN: SESSION_TOKEN });
  const runs: Array<{ label: string; run: CliRun }> = [];
  const cli = async (label: string, args: string[], configPath: string, code: number, runEnv = env) => {
    const run = await runCli(['--config', configPath, '--log-level', 'debug', ...args], {
      cwd: dir,
      env: runEnv,
    });
    runs.push({ label, run });
    expect(run.code, `${label}: ${run.stderr.slice(-2000)}`).toBe(code);
  };

  proxy.setRules([
    { kind: 'status', status: 500, method: 'PUT', times: 2 },
    { kind: 'reset', method: 'HEAD', times: 1 },
  ]);
  await cli('upload with 500s and a reset', ['snapshot', '--json', '--to', 'lake'], fileConfig, 0);
  proxy.setRules([]);
  await cli('upload, nothing changed', ['snapshot', '--to', 'lake'], stderrConfig, 0);
  await cli('wrong access key id', ['snapshot', '--json', '--to', 'lake'], stderrConfig, 1, {
    ...env,
    AWS_ACCESS_KEY_ID: 'AKIAWRONGKEYFORTHELEAKTEST',
  });
  await cli('missing bucket', ['snapshot', '--json', '--to', 'missing'], fileConfig, 1);
  await cli('closed port', ['snapshot', '--to', 'closed'], stderrConfig, 1);
  proxy.setRules([{ kind: 'status', status: 503, method: 'PUT' }]);
  await cli(
    'keeps failing',
    ['snapshot', '--json', '--to', 'lake', '--tables', 'pipeline_runs'],
    fileConfig,
    1,
  );
  proxy.setRules([]);
  await cli('status', ['status', '--json'], fileConfig, 0);

  const needles = needlesFor([SECRET, SESSION_TOKEN]).needles;
  expect(keyNeedles(SECRET).map((n) => n.form)).toEqual(
    expect.arrayContaining(['raw', 'url-encoded', 'json-escaped-slash', 'base64@0', 'base64@1', 'base64@2']),
  );
  const hits: string[] = [];
  for (const { label, run } of runs) {
    for (const [stream, text] of [
      ['stdout', run.stdout],
      ['stderr', run.stderr],
    ] as const) {
      for (const hit of scanBuffer(Buffer.from(text), needles, `${stream} of ${label}`))
        hits.push(describeHit(hit));
    }
  }
  const scanned = scanPath(dir, needles);
  hits.push(...scanned.hits.map(describeHit));
  expect(hits).toEqual([]);

  // Not vacuous: the error paths happened, debug lines were written, uploads went through.
  expect(proxy.injected()).toMatchObject({ status: expect.any(Number), reset: 1 });
  expect(readFileSync(logFile, 'utf8')).toMatch(/"level":20/);
  expect(runs.find((r) => r.label === 'closed port')!.run.stderr).toMatch(/"level":20/);
  expect(runs.map((r) => r.run.stdout + r.run.stderr).join('\n')).toMatch(/ERR_DESTINATION_AUTH/);
  // Seven tables uploaded; the last run (failing) had reopened the date, so it has no manifest.
  const keys = (await server.list(BUCKET, 'p/')).map((o) => o.key);
  expect(keys.filter((k) => k.endsWith('.parquet'))).toHaveLength(7);
  expect(keys.filter((k) => k.includes('/_manifests/'))).toEqual([]);
  const files = readdirSync(dir, { recursive: true }).map(String);
  expect(files.filter((f) => f.endsWith('.parquet')).length).toBeGreaterThanOrEqual(7);
  // The same scan does see a secret here: plant one and find it.
  const plant = join(dir, 'snapshots', 'planted.bin');
  writeFileSync(
    plant,
    Buffer.concat([randomBytes(999), Buffer.from(Buffer.from(`:${SECRET}`).toString('base64'))]),
  );
  expect(scanPath(dir, needles).hits.map((h) => h.file)).toEqual([plant]);
  rmSync(plant);
}, 180_000);
