/**
 * `snapshot --to` when the destination misbehaves, with faults from a proxy in front of a real
 * S3-compatible server (resets, 500s, 503 SlowDown, a slow body, a silent endpoint), and bad
 * input: wrong or missing credentials, a missing bucket, an endpoint that does not answer. Each
 * failure is a clear error naming the destination, exit 1, the local snapshot kept, and no
 * manifest in the bucket for a date whose files are not all there.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SNAPSHOT_TABLES } from '../../../src/mirror/store/snapshot.js';
import { queryMirror } from '../../helpers/mirror.js';
import {
  awsEnv,
  s3DestinationConfig,
  startTestS3Server,
  type TestS3Server,
} from '../../helpers/s3-server.js';
import { startS3FaultProxy, startSilentServer, type S3FaultProxy } from '../../helpers/s3-fault-proxy.js';
import { buildSnapshotFixture, type SnapshotFixture } from '../snapshot/fixture.js';
import { AWS_SECRET, cliOn, dateOf, localFile, s3Workspace, uploadOf, type S3Workspace } from './helpers.js';

const BUCKET = 'faults';
let fx: SnapshotFixture;
let server: TestS3Server;
let proxy: S3FaultProxy;

beforeAll(async () => {
  [fx, server] = await Promise.all([
    buildSnapshotFixture({ domains: 150, seed: 22 }),
    startTestS3Server([BUCKET]),
  ]);
  proxy = await startS3FaultProxy(server.endpoint);
}, 120_000);

afterEach(() => proxy.setRules([]));

afterAll(async () => {
  await proxy?.close();
  await server?.close();
  await fx?.close();
});

const DATA_KEY = (prefix: string, table: string, date: string): string =>
  `${prefix}/${table}/snapshot_date=${date}/part-0.parquet`;
const MANIFEST_KEY = (prefix: string, date: string): string =>
  `${prefix}/_manifests/snapshot_date=${date}.json`;

/** The local snapshot is complete: every table's file and the local manifest. */
function expectLocalSnapshot(ws: S3Workspace, date: string): void {
  for (const table of SNAPSHOT_TABLES) {
    expect(existsSync(join(ws.snapshotsDir, table, `snapshot_date=${date}`, 'part-0.parquet')), table).toBe(
      true,
    );
  }
  expect(existsSync(join(ws.snapshotsDir, '_manifests', `snapshot_date=${date}.json`))).toBe(true);
}

/** The run is recorded failed in the mirror with the destination's error. */
function expectFailedRun(ws: S3Workspace, runId: unknown, code: string): void {
  const [row] = queryMirror<{ status: string; error: string }>(
    ws.mirrorPath,
    'SELECT status, error FROM pipeline_runs WHERE id = ?',
    runId,
  );
  expect(row).toMatchObject({ status: 'failed', error: expect.stringContaining(code) });
}

describe('transient faults are retried', () => {
  it('500s, a 503 SlowDown, resets and a slow body: the upload completes, every object byte-exact', async () => {
    const prefix = 'transient';
    const ws = await s3Workspace(fx.mirrorPath, {
      destinations: { lake: s3DestinationConfig(proxy.endpoint, BUCKET, prefix, { giveUpAfter: '30s' }) },
      to: ['lake'],
    });
    proxy.setRules([
      { kind: 'reset', method: 'GET', url: /[?&]list-type=2/, times: 1 },
      { kind: 'status', status: 500, method: 'PUT', url: /\/domains\//, times: 2 },
      { kind: 'status', status: 503, method: 'HEAD', url: /\/licenses\//, times: 1 },
      { kind: 'reset', method: 'PUT', url: /\/payment_methods\//, times: 1 },
      { kind: 'slowBody', method: 'PUT', url: /\/domain_sections\//, times: 1, chunkBytes: 4096, delayMs: 2 },
      { kind: 'status', status: 500, method: 'PUT', url: /\/_manifests\//, times: 1 },
    ]);
    const run = await cliOn(ws, server, ['snapshot'], { expectCode: 0 });
    const date = dateOf(run.summary);
    const upload = uploadOf(run.summary, 'lake');
    expect(upload.status).toBe('done');
    expect(proxy.injected()).toEqual({ reset: 2, status: 4, slowBody: 1 });
    // Every fault but the slow body (which only slows) cost one retry.
    expect(upload.retries).toBe(6);
    for (const table of SNAPSHOT_TABLES) {
      expect(
        (await server.get(BUCKET, DATA_KEY(prefix, table, date))).equals(await localFile(ws, table, date)),
        table,
      ).toBe(true);
    }
    expect(await server.head(BUCKET, MANIFEST_KEY(prefix, date))).not.toBeNull();
    const retries = run.events.filter((e) => e.msg === 'destination request failed, retrying');
    expect(retries).toHaveLength(6);
    expect(retries.every((e) => e.destination === 'lake')).toBe(true);
  });
});

describe('bad input: a clear error naming the destination, exit 1, the local snapshot kept', () => {
  it('wrong credentials: ERR_DESTINATION_AUTH at once, nothing in the bucket', async () => {
    const prefix = 'wrong-key';
    const ws = await s3Workspace(fx.mirrorPath, {
      destinations: { lake: s3DestinationConfig(proxy.endpoint, BUCKET, prefix) },
    });
    const from = proxy.requests.length;
    const run = await cliOn(ws, server, ['snapshot', '--to', 'lake'], {
      env: awsEnv({ accessKeyId: 'AKIAWRONGWRONGWRONG1' }, AWS_SECRET),
      expectCode: 1,
    });
    expect(run.summary?.error).toMatchObject({
      code: 'ERR_DESTINATION_AUTH',
      message: expect.stringMatching(
        /^destination "lake" \(s3:\/\/faults\/wrong-key at http:\/\/127\.0\.0\.1:\d+\): .*the credentials were refused \(HTTP 403 InvalidAccessKeyId/,
      ),
    });
    expect(uploadOf(run.summary, 'lake')).toMatchObject({ status: 'failed', retries: 0, dates: [] });
    // Refused credentials are not retried.
    expect(proxy.requests.length - from).toBe(1);
    expectLocalSnapshot(ws, dateOf(run.summary));
    expectFailedRun(ws, run.summary?.runId, 'ERR_DESTINATION_AUTH');
    expect(await server.list(BUCKET, `${prefix}/`)).toEqual([]);
  });

  it('no credentials anywhere in the default chain: ERR_DESTINATION_AUTH saying so', async () => {
    const ws = await s3Workspace(fx.mirrorPath, {
      destinations: { lake: s3DestinationConfig(proxy.endpoint, BUCKET, 'no-key') },
    });
    const run = await cliOn(ws, server, ['snapshot', '--to', 'lake'], {
      isolatedEnv: true,
      env: {
        HOME: ws.dir,
        AWS_CONFIG_FILE: join(ws.dir, 'no-aws-config'),
        AWS_SHARED_CREDENTIALS_FILE: join(ws.dir, 'no-aws-credentials'),
        AWS_EC2_METADATA_DISABLED: 'true',
      },
      expectCode: 1,
    });
    expect(run.summary?.error).toMatchObject({
      code: 'ERR_DESTINATION_AUTH',
      message: expect.stringMatching(
        /^destination "lake" .*no AWS credentials were found in the AWS SDK's default chain/,
      ),
    });
    expectLocalSnapshot(ws, dateOf(run.summary));
  });

  it('a missing bucket: ERR_DESTINATION_NOT_FOUND', async () => {
    const ws = await s3Workspace(fx.mirrorPath, {
      destinations: { lake: s3DestinationConfig(proxy.endpoint, 'no-such-bucket', 'x') },
    });
    const run = await cliOn(ws, server, ['snapshot', '--to', 'lake'], { expectCode: 1 });
    expect(run.summary?.error).toMatchObject({
      code: 'ERR_DESTINATION_NOT_FOUND',
      message: expect.stringMatching(
        /^destination "lake" \(s3:\/\/no-such-bucket\/x at .*\): .*the bucket does not exist \(NoSuchBucket/,
      ),
    });
    expectLocalSnapshot(ws, dateOf(run.summary));
    expectFailedRun(ws, run.summary?.runId, 'ERR_DESTINATION_NOT_FOUND');
  });

  it('an endpoint that does not answer, and one that refuses: ERR_DESTINATION_UNREACHABLE within giveUpAfter', async () => {
    const silent = await startSilentServer();
    try {
      const ws = await s3Workspace(fx.mirrorPath, {
        destinations: {
          silent: s3DestinationConfig(silent.endpoint, BUCKET, 's', { giveUpAfter: '4s' }),
          closed: s3DestinationConfig('http://127.0.0.1:9', BUCKET, 'c', { giveUpAfter: '4s' }),
        },
      });
      for (const name of ['silent', 'closed']) {
        const run = await cliOn(ws, server, ['snapshot', '--to', name], { expectCode: 1 });
        const upload = uploadOf(run.summary, name);
        expect(run.summary?.error).toMatchObject({
          code: 'ERR_DESTINATION_UNREACHABLE',
          message: expect.stringMatching(
            new RegExp(`^destination "${name}" .*given up after \\d+ attempts over \\d+ s: no answer`),
          ),
        });
        expect(upload.retries, name).toBeGreaterThanOrEqual(1);
        // Given up within its 4 s, retries included (the upload's own clock; the process adds its start).
        expect(upload.status).toBe('failed');
        expect((upload as unknown as { seconds: number }).seconds, name).toBeLessThanOrEqual(4.5);
        expectLocalSnapshot(ws, dateOf(run.summary));
      }
      expect(silent.connections()).toBeGreaterThanOrEqual(2);
    } finally {
      await silent.close();
    }
  });

  it('a store that keeps failing one file: given up, no manifest for the date; the next run completes it', async () => {
    const prefix = 'keeps-failing';
    const ws = await s3Workspace(fx.mirrorPath, {
      destinations: { lake: s3DestinationConfig(proxy.endpoint, BUCKET, prefix, { giveUpAfter: '3s' }) },
      to: ['lake'],
    });
    // The largest file (files go up smallest first): the others are in the bucket when it fails.
    proxy.setRules([{ kind: 'status', status: 500, method: 'PUT', url: /\/domains\// }]);
    const run = await cliOn(ws, server, ['snapshot'], { expectCode: 1 });
    const date = dateOf(run.summary);
    expect(run.summary?.error).toMatchObject({
      code: 'ERR_DESTINATION',
      message: expect.stringMatching(
        /^destination "lake" .*upload .*\/domains\/snapshot_date=.*given up after \d+ attempts .*HTTP 500 InternalError/,
      ),
    });
    const keys = (await server.list(BUCKET, `${prefix}/`)).map((o) => o.key);
    // The other tables are there; the date has no manifest.
    for (const table of SNAPSHOT_TABLES.filter((t) => t !== 'domains'))
      expect(keys).toContain(DATA_KEY(prefix, table, date));
    expect(keys).not.toContain(DATA_KEY(prefix, 'domains', date));
    expect(keys.filter((k) => k.includes('/_manifests/'))).toEqual([]);
    expectLocalSnapshot(ws, date);

    proxy.setRules([]);
    const next = await cliOn(ws, server, ['snapshot'], { expectCode: 0 });
    const again = uploadOf(next.summary, 'lake').objects;
    expect(again.find((o) => o.key === DATA_KEY(prefix, 'licenses', date))?.action).toBe('skipped');
    expect(again.find((o) => o.key === DATA_KEY(prefix, 'domains', date))?.action).toBe('uploaded');
    for (const table of SNAPSHOT_TABLES) {
      expect(
        (await server.get(BUCKET, DATA_KEY(prefix, table, date))).equals(await localFile(ws, table, date)),
        table,
      ).toBe(true);
    }
    expect(await server.head(BUCKET, MANIFEST_KEY(prefix, date))).not.toBeNull();
  });

  it('one destination failing does not stop the others; the run fails naming it', async () => {
    const ws = await s3Workspace(fx.mirrorPath, {
      destinations: {
        good: s3DestinationConfig(proxy.endpoint, BUCKET, 'good'),
        bad: s3DestinationConfig(proxy.endpoint, 'no-such-bucket', 'bad'),
      },
      to: ['bad', 'good'],
    });
    const run = await cliOn(ws, server, ['snapshot'], { expectCode: 1 });
    expect(run.summary?.error).toMatchObject({
      code: 'ERR_DESTINATION_NOT_FOUND',
      message: expect.stringMatching(/^destination "bad"/),
    });
    expect(uploadOf(run.summary, 'bad').status).toBe('failed');
    expect(uploadOf(run.summary, 'good')).toMatchObject({ status: 'done', dates: [dateOf(run.summary)] });
    expect(await server.head(BUCKET, MANIFEST_KEY('good', dateOf(run.summary)))).not.toBeNull();
  });
});
