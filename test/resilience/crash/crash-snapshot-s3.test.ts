/**
 * `snapshot --to` killed with SIGKILL in the middle of its upload (seeded kill points, counted in
 * the store's write requests as the proxy sees them, mid-body thanks to a slow link), then run
 * again. What must hold after every kill: no manifest in the bucket for a date whose files are not
 * all there (every manifest's tables are in place with its sizes and SHA-256s), and the next run
 * completes the date: every object equal to the local file, the manifest in place.
 *
 * The fast slice (`npm test`) kills once; RESILIENCE_FULL=1 kills at 8 points. CRASH_SEED=n draws
 * other points.
 */
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Prng } from '../../../src/simulator/prng.js';
import { describeRun, runCli, summaryOf } from '../../helpers/cli.js';
import {
  awsEnv,
  s3DestinationConfig,
  startTestS3Server,
  type TestS3Server,
} from '../../helpers/s3-server.js';
import { startS3FaultProxy, type S3FaultProxy } from '../../helpers/s3-fault-proxy.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { AWS_SECRET, bigSectionsMirror, localFile, type S3Workspace } from '../../integration/s3/helpers.js';
import { scale } from '../mode.js';
import { CRASH_SEED } from './matrix.js';

const BUCKET = 'crash';
const TRIALS = scale(1, 8);
let server: TestS3Server;
let proxy: S3FaultProxy;

beforeAll(async () => {
  server = await startTestS3Server([BUCKET]);
  proxy = await startS3FaultProxy(server.endpoint);
  // A slow link for every upload request, so a kill lands while a body is still on its way.
  proxy.setRules([{ kind: 'slowBody', method: 'PUT', chunkBytes: 256 * 1024, delayMs: 4 }]);
}, 60_000);

afterAll(async () => {
  await proxy?.close();
  await server?.close();
});

async function workspace(prefix: string): Promise<S3Workspace> {
  const dir = await tempDir('domain-sync-crash-s3-');
  const ws: S3Workspace = {
    dir,
    mirrorPath: join(dir, 'mirror.sqlite'),
    snapshotsDir: join(dir, 'snapshots'),
    configPath: join(dir, 'config.json'),
  };
  await bigSectionsMirror(ws.mirrorPath, 1_800);
  await writeFile(
    ws.configPath,
    JSON.stringify({
      database: { path: ws.mirrorPath },
      snapshots: { dir: ws.snapshotsDir, to: ['lake'] },
      destinations: { lake: s3DestinationConfig(proxy.endpoint, BUCKET, prefix, { giveUpAfter: '20s' }) },
      // The killed process keeps the mirror lock until its lease runs out; the next run waits for it.
      lock: { lease: '2s', wait: '30s' },
    }),
  );
  return ws;
}

const snapshot = (ws: S3Workspace, killWhen?: () => boolean) =>
  runCli(['--config', ws.configPath, '--json', 'snapshot'], {
    cwd: ws.dir,
    env: awsEnv(server, AWS_SECRET),
    ...(killWhen ? { killWhen } : {}),
  });

/** Write requests (PUT, POST) the proxy received for `prefix` so far. */
const writesFor = (prefix: string): number =>
  proxy.requests.filter(
    (r) => (r.method === 'PUT' || r.method === 'POST') && r.path.startsWith(`/${BUCKET}/${prefix}/`),
  ).length;

/** Every manifest in the bucket describes objects that are all there, as it says. */
async function expectManifestsTruthful(prefix: string, where: string): Promise<string[]> {
  const manifests = (await server.list(BUCKET, `${prefix}/_manifests/`)).map((o) => o.key);
  for (const key of manifests) {
    const manifest = JSON.parse((await server.get(BUCKET, key)).toString('utf8')) as {
      tables: Record<string, { key: string; bytes: number; sha256: string }>;
    };
    for (const [table, entry] of Object.entries(manifest.tables)) {
      const body = await server.get(BUCKET, entry.key);
      expect(body.length, `${where}: ${table} size`).toBe(entry.bytes);
      expect(createHash('sha256').update(body).digest('hex'), `${where}: ${table} sha256`).toBe(entry.sha256);
    }
  }
  return manifests;
}

describe('snapshot --to killed with SIGKILL during the upload', () => {
  it(`leaves no manifest for a date whose files are not all there, and the next run completes it (${TRIALS} kill points)`, async () => {
    // A fault-free run: how many write requests a whole upload makes.
    const baseline = await workspace('baseline');
    const clean = await snapshot(baseline);
    expect(clean.code, describeRun(clean)).toBe(0);
    const totalWrites = writesFor('baseline');
    expect(totalWrites).toBeGreaterThanOrEqual(8); // parts of domain_sections, the other tables, the manifest

    const prng = Prng.of(CRASH_SEED, 0x53);
    const figures = { kills: 0, manifestLeft: 0, recovered: 0, multipartLeft: 0 };
    for (let trial = 0; trial < TRIALS; trial++) {
      const prefix = `trial-${trial}`;
      const killAt = prng.int(1, totalWrites - 1);
      const where = `[crash seed ${CRASH_SEED}] trial ${trial}, killed at write ${killAt} of ${totalWrites}`;
      const ws = await workspace(prefix);
      const killed = await snapshot(ws, () => writesFor(prefix) >= killAt);
      expect(killed.signal, `${where}: ${describeRun(killed)}`).toBe('SIGKILL');
      figures.kills++;
      // A multipart upload started and never completed nor aborted: killed mid-file.
      const started = proxy.requests.filter(
        (r) => r.method === 'POST' && r.path.startsWith(`/${BUCKET}/${prefix}/`) && /[?&]uploads/.test(r.url),
      ).length;
      const completed = proxy.requests.filter(
        (r) =>
          r.method === 'POST' && r.path.startsWith(`/${BUCKET}/${prefix}/`) && /[?&]uploadId=/.test(r.url),
      ).length;
      if (started > completed) figures.multipartLeft++;
      const date = /snapshot_date=(\d{4}-\d{2}-\d{2})/.exec(
        proxy.requests.find(
          (r) => r.path.startsWith(`/${BUCKET}/${prefix}/`) && r.path.includes('snapshot_date='),
        )?.path ?? '',
      )?.[1];
      expect(date, where).toBeDefined();
      const manifests = await expectManifestsTruthful(prefix, where);
      const manifestSent = proxy.requests.some(
        (r) => r.method === 'PUT' && r.path.startsWith(`/${BUCKET}/${prefix}/_manifests/`),
      );
      if (!manifestSent) expect(manifests, where).toEqual([]);
      if (manifests.length > 0) figures.manifestLeft++;

      const next = await snapshot(ws);
      expect(next.code, `${where}: ${describeRun(next)}`).toBe(0);
      const nextDate = (summaryOf(next)?.stats as { snapshotDate: string }).snapshotDate;
      expect(await expectManifestsTruthful(prefix, where)).toContain(
        `${prefix}/_manifests/snapshot_date=${nextDate}.json`,
      );
      for (const table of ['domains', 'domain_sections', 'pipeline_runs']) {
        const key = `${prefix}/${table}/snapshot_date=${nextDate}/part-0.parquet`;
        expect(
          (await server.get(BUCKET, key)).equals(await localFile(ws, table, nextDate)),
          `${where}: ${table}`,
        ).toBe(true);
      }
      figures.recovered++;
    }
    process.stderr.write(
      `[crash seed ${CRASH_SEED}] snapshot --to: ${figures.kills} kills in ${TRIALS} trials (${totalWrites} write requests per ` +
        `upload), ${figures.multipartLeft} mid-way through a multipart file, ${figures.manifestLeft} after the date's manifest ` +
        `was written; a manifest describing missing files: 0; recovered: ${figures.recovered}\n`,
    );
  }, 300_000);
});
