/**
 * `snapshot --to NAME` against a real S3-compatible server (s3rver, started by the test from the
 * npm registry) behind a pass-through proxy that logs every request: the layout in the bucket,
 * the manifest written last, every object read back with the AWS SDK and the Parquet files with
 * DuckDB, the skip rule (from the bucket itself), retention in the bucket, `snapshots.to`, a
 * named pipeline's step, and `status`.
 */
import { existsSync } from 'node:fs';
import { cp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SNAPSHOT_TABLES } from '../../../src/mirror/store/snapshot.js';
import { runCli } from '../../helpers/cli.js';
import { queryMirror } from '../../helpers/mirror.js';
import { readParquet } from '../../helpers/read-parquet.js';
import { s3DestinationConfig, startTestS3Server, type TestS3Server } from '../../helpers/s3-server.js';
import { startS3FaultProxy, type S3FaultProxy } from '../../helpers/s3-fault-proxy.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { buildSnapshotFixture, type SnapshotFixture } from '../snapshot/fixture.js';
import {
  bigSectionsMirror,
  cliOn,
  dateOf,
  download,
  localFile,
  s3Workspace,
  sha256,
  uploadOf,
  writeWorkspaceConfig,
} from './helpers.js';

const BUCKET = 'analytics';
let fx: SnapshotFixture;
let server: TestS3Server;
let proxy: S3FaultProxy;

beforeAll(async () => {
  [fx, server] = await Promise.all([
    buildSnapshotFixture({ domains: 200, seed: 21 }),
    startTestS3Server([BUCKET]),
  ]);
  proxy = await startS3FaultProxy(server.endpoint);
}, 120_000);

afterAll(async () => {
  await proxy?.close();
  await server?.close();
  await fx?.close();
});

/** A destination on the test server, through the logging proxy, under its own prefix. */
function lake(prefix: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return s3DestinationConfig(proxy.endpoint, BUCKET, prefix, extra);
}

/** Requests the proxy saw from `from` on, for `prefix`'s keys. */
function requestsSince(from: number, prefix: string) {
  return proxy.requests
    .slice(from)
    .filter((r) => r.path.startsWith(`/${BUCKET}/${prefix}/`) || r.url.startsWith(`/${BUCKET}?`));
}

const DATA_KEY = (prefix: string, table: string, date: string): string =>
  `${prefix}/${table}/snapshot_date=${date}/part-0.parquet`;
const MANIFEST_KEY = (prefix: string, date: string): string =>
  `${prefix}/_manifests/snapshot_date=${date}.json`;

describe('snapshot --to: the bucket holds the local layout, the manifest last', () => {
  it('uploads every table, then the manifest; each object is the local file, and DuckDB reads the downloaded files', async () => {
    const prefix = 'first/domain-sync';
    const ws = await s3Workspace(fx.mirrorPath, { destinations: { lake: lake(prefix) } });
    const from = proxy.requests.length;
    const run = await cliOn(ws, server, ['snapshot', '--to', 'lake'], { expectCode: 0 });
    const date = dateOf(run.summary);
    const upload = uploadOf(run.summary, 'lake');
    expect(upload).toMatchObject({
      destination: 'lake',
      url: `s3://${BUCKET}/${prefix}`,
      status: 'done',
      dates: [date],
      latestDate: date,
      skipped: { objects: 0, bytes: 0 },
      removedDates: [],
    });
    // Every table's file and the manifest, nothing else.
    const keys = (await server.list(BUCKET, `${prefix}/`)).map((o) => o.key);
    expect(keys).toEqual(
      [...SNAPSHOT_TABLES.map((t) => DATA_KEY(prefix, t, date)), MANIFEST_KEY(prefix, date)].sort(),
    );
    expect(upload.uploaded.objects).toBe(SNAPSHOT_TABLES.length + 1);
    expect(upload.objects.map((o) => o.key).sort()).toEqual(keys);

    // Byte for byte the local files, with their SHA-256 in the object's metadata.
    for (const table of SNAPSHOT_TABLES) {
      const local = await localFile(ws, table, date);
      const key = DATA_KEY(prefix, table, date);
      expect((await server.get(BUCKET, key)).equals(local), key).toBe(true);
      expect((await server.head(BUCKET, key))?.metadata['domain-sync-sha256']).toBe(sha256(local));
      expect(upload.objects.find((o) => o.key === key)).toEqual({
        key,
        bytes: local.length,
        action: 'uploaded',
      });
    }

    // The manifest: the local one's tables, each with its key, size and SHA-256.
    const manifest = JSON.parse((await server.get(BUCKET, MANIFEST_KEY(prefix, date))).toString('utf8')) as {
      snapshot_date: string;
      uploaded_at: string;
      tables: Record<string, { key: string; bytes: number; sha256: string; rows: number; path: string }>;
    };
    const localManifest = JSON.parse(
      await readFile(join(ws.snapshotsDir, '_manifests', `snapshot_date=${date}.json`), 'utf8'),
    ) as { tables: Record<string, { rows: number; path: string }> };
    expect(manifest.snapshot_date).toBe(date);
    expect(Object.keys(manifest.tables).sort()).toEqual([...SNAPSHOT_TABLES].sort());
    for (const table of SNAPSHOT_TABLES) {
      const local = await localFile(ws, table, date);
      expect(manifest.tables[table]).toMatchObject({
        key: DATA_KEY(prefix, table, date),
        bytes: local.length,
        sha256: sha256(local),
        rows: localManifest.tables[table]!.rows,
        path: localManifest.tables[table]!.path,
      });
    }

    // The manifest is the last object written, and no other object names the date before it.
    const writes = requestsSince(from, prefix).filter((r) => r.method === 'PUT' || r.method === 'POST');
    const manifestAt = writes.findIndex((r) => r.path.includes('/_manifests/'));
    expect(manifestAt).toBe(writes.length - 1);
    expect(writes.filter((r) => r.path.includes('/_manifests/'))).toHaveLength(1);
    for (const w of writes.slice(0, -1))
      expect(w.path).toMatch(/\/snapshot_date=\d{4}-\d{2}-\d{2}\/part-0\.parquet$/);

    // DuckDB reads the downloaded bucket like the local folder: the same rows.
    const copy = await tempDir('domain-sync-s3-download-');
    await download(server, BUCKET, prefix, copy);
    for (const table of ['domains', 'licenses', 'payment_methods', 'pipeline_runs']) {
      const fromBucket = await readParquet(join(copy, table, '*', '*.parquet'), { hivePartitioning: true });
      const fromLocal = await readParquet(join(ws.snapshotsDir, table, '*', '*.parquet'), {
        hivePartitioning: true,
      });
      expect(fromBucket, table).toEqual(fromLocal);
      if (table !== 'pipeline_runs') {
        const [{ n }] = queryMirror<{ n: number }>(ws.mirrorPath, `SELECT count(*) AS n FROM ${table}`) as [
          { n: number },
        ];
        expect(fromBucket.rows).toHaveLength(n);
        expect(fromBucket.rows.every((r) => r.snapshot_date === date)).toBe(true);
      }
    }
  });

  it('a second snapshot uploads nothing for unchanged tables; a bucket emptied by someone else is filled again', async () => {
    const prefix = 'skip';
    const ws = await s3Workspace(fx.mirrorPath, { destinations: { lake: lake(prefix) }, to: ['lake'] });
    const first = await cliOn(ws, server, ['snapshot'], { expectCode: 0 });
    const date = dateOf(first.summary);
    const etags = new Map((await server.list(BUCKET, `${prefix}/`)).map((o) => [o.key, o.etag]));

    const from = proxy.requests.length;
    const second = await cliOn(ws, server, ['snapshot'], { expectCode: 0 });
    expect(dateOf(second.summary)).toBe(date);
    const upload = uploadOf(second.summary, 'lake');
    const action = (table: string): string | undefined =>
      upload.objects.find((o) => o.key === DATA_KEY(prefix, table, date))?.action;
    // The data tables did not change: same bytes, found in the bucket, not sent again.
    for (const table of [
      'domains',
      'licenses',
      'payment_methods',
      'domain_sections',
      'enrichment_runs',
      'exports',
    ]) {
      expect(action(table), table).toBe('skipped');
      expect((await localFile(ws, table, date)).length).toBe(
        upload.objects.find((o) => o.key === DATA_KEY(prefix, table, date))!.bytes,
      );
    }
    // pipeline_runs holds this run: it changed, and so does the manifest.
    expect(action('pipeline_runs')).toBe('uploaded');
    expect(upload.uploaded.objects).toBe(2);
    expect(upload.skipped.objects).toBe(6);
    const puts = requestsSince(from, prefix).filter((r) => r.method === 'PUT' || r.method === 'POST');
    for (const table of ['domains', 'licenses', 'payment_methods']) {
      expect(
        puts.some((r) => r.path.includes(`/${table}/`)),
        table,
      ).toBe(false);
    }
    const after = new Map((await server.list(BUCKET, `${prefix}/`)).map((o) => [o.key, o.etag]));
    for (const table of ['domains', 'licenses', 'payment_methods']) {
      expect(after.get(DATA_KEY(prefix, table, date))).toBe(etags.get(DATA_KEY(prefix, table, date)));
    }

    // Someone empties the bucket: the next snapshot finds out from the bucket and fills it again.
    expect(await server.empty(BUCKET, `${prefix}/`)).toBe(SNAPSHOT_TABLES.length + 1);
    const third = await cliOn(ws, server, ['snapshot'], { expectCode: 0 });
    const refill = uploadOf(third.summary, 'lake');
    expect(refill.skipped.objects).toBe(0);
    expect(refill.uploaded.objects).toBe(SNAPSHOT_TABLES.length + 1);
    for (const table of SNAPSHOT_TABLES) {
      expect(
        (await server.get(BUCKET, DATA_KEY(prefix, table, date))).equals(await localFile(ws, table, date)),
      ).toBe(true);
    }
    expect(await server.head(BUCKET, MANIFEST_KEY(prefix, date))).not.toBeNull();
  });

  it('completes a local date whose manifest the bucket lacks (an earlier upload that never finished)', async () => {
    const prefix = 'catch-up';
    const ws = await s3Workspace(fx.mirrorPath, { destinations: { lake: lake(prefix) } });
    // A local snapshot of an earlier date that never reached the bucket.
    const local = await cliOn(ws, server, ['snapshot'], { expectCode: 0 });
    const date = dateOf(local.summary);
    const earlier = '2026-01-05';
    for (const table of SNAPSHOT_TABLES) {
      await cp(
        join(ws.snapshotsDir, table, `snapshot_date=${date}`),
        join(ws.snapshotsDir, table, `snapshot_date=${earlier}`),
        {
          recursive: true,
        },
      );
    }
    const manifestText = await readFile(
      join(ws.snapshotsDir, '_manifests', `snapshot_date=${date}.json`),
      'utf8',
    );
    await writeFile(
      join(ws.snapshotsDir, '_manifests', `snapshot_date=${earlier}.json`),
      manifestText
        .replaceAll(`snapshot_date=${date}`, `snapshot_date=${earlier}`)
        .replace(`"snapshot_date": "${date}"`, `"snapshot_date": "${earlier}"`),
    );
    // Half of it is in the bucket already, without a manifest.
    await server.put(BUCKET, DATA_KEY(prefix, 'domains', earlier), await localFile(ws, 'domains', earlier));

    const run = await cliOn(ws, server, ['snapshot', '--to', 'lake'], { expectCode: 0 });
    const upload = uploadOf(run.summary, 'lake');
    expect(upload.dates).toEqual([date, earlier]);
    expect(upload.latestDate).toBe(date);
    for (const d of [date, earlier]) {
      for (const table of SNAPSHOT_TABLES) {
        expect(
          (await server.get(BUCKET, DATA_KEY(prefix, table, d))).equals(await localFile(ws, table, d)),
          `${d} ${table}`,
        ).toBe(true);
      }
      const manifest = JSON.parse((await server.get(BUCKET, MANIFEST_KEY(prefix, d))).toString('utf8')) as {
        snapshot_date: string;
      };
      expect(manifest.snapshot_date).toBe(d);
    }
    // The object put there without our checksum is not trusted: it was sent again.
    expect(upload.objects.find((o) => o.key === DATA_KEY(prefix, 'domains', earlier))?.action).toBe(
      'uploaded',
    );
  });

  it('applies snapshots.retainDates to the bucket: each old date loses its manifest first, then its files', async () => {
    const prefix = 'retention';
    const ws = await s3Workspace(fx.mirrorPath, {
      destinations: { lake: lake(prefix) },
      to: ['lake'],
      retainDates: 2,
    });
    const old = ['2026-01-01', '2026-01-02', '2026-01-03'];
    for (const d of old) {
      for (const table of ['domains', 'licenses'])
        await server.put(BUCKET, DATA_KEY(prefix, table, d), `old ${table} ${d}`);
      await server.put(BUCKET, MANIFEST_KEY(prefix, d), JSON.stringify({ snapshot_date: d }));
    }
    // An upload that never finished (no manifest), older than what is kept; and a stranger.
    await server.put(BUCKET, DATA_KEY(prefix, 'domains', '2025-12-31'), 'orphan');
    await server.put(BUCKET, `${prefix}/README.txt`, 'not ours');

    const from = proxy.requests.length;
    const run = await cliOn(ws, server, ['snapshot'], { expectCode: 0 });
    const date = dateOf(run.summary);
    const upload = uploadOf(run.summary, 'lake');
    expect(upload.removedDates).toEqual(['2025-12-31', '2026-01-01', '2026-01-02']);
    const keys = (await server.list(BUCKET, `${prefix}/`)).map((o) => o.key);
    expect(keys).toEqual(
      [
        ...SNAPSHOT_TABLES.map((t) => DATA_KEY(prefix, t, date)),
        MANIFEST_KEY(prefix, date),
        DATA_KEY(prefix, 'domains', '2026-01-03'),
        DATA_KEY(prefix, 'licenses', '2026-01-03'),
        MANIFEST_KEY(prefix, '2026-01-03'),
        `${prefix}/README.txt`,
      ].sort(),
    );
    // Order of the deletes: per date, the manifest before any of its files.
    const deletes = requestsSince(from, prefix)
      .filter((r) => r.method === 'DELETE')
      .map((r) => r.path.slice(`/${BUCKET}/`.length));
    for (const d of ['2026-01-01', '2026-01-02']) {
      const manifestAt = deletes.indexOf(MANIFEST_KEY(prefix, d));
      expect(manifestAt, d).toBeGreaterThanOrEqual(0);
      for (const table of ['domains', 'licenses'])
        expect(deletes.indexOf(DATA_KEY(prefix, table, d))).toBeGreaterThan(manifestAt);
    }
    // Retention ran after today's upload was complete.
    const manifestPut = proxy.requests.findIndex(
      (r, i) => i >= from && r.method === 'PUT' && r.path.includes(`snapshot_date=${date}.json`),
    );
    const firstDelete = proxy.requests.findIndex((r, i) => i >= from && r.method === 'DELETE');
    expect(manifestPut).toBeLessThan(firstDelete);
  });

  it('a named pipeline step takes the same option; snapshots.to is the default and --to replaces it; status shows the latest date per destination', async () => {
    const ws = await s3Workspace(fx.mirrorPath, {
      destinations: { lake: lake('step-lake'), archive: lake('step-archive') },
      to: ['archive'],
      pipelines: {
        'to-lake': { steps: [{ type: 'snapshot', options: { to: ['lake'], tables: ['licenses'] } }] },
      },
    });
    const status0 = await cliOn(ws, server, ['status'], { expectCode: 0 });
    expect(status0.summary?.snapshotUploads).toEqual([
      expect.objectContaining({
        destination: 'archive',
        url: `s3://${BUCKET}/step-archive`,
        latestDate: null,
      }),
      expect.objectContaining({ destination: 'lake', url: `s3://${BUCKET}/step-lake`, latestDate: null }),
    ]);

    const step = await cliOn(ws, server, ['run', 'to-lake'], { expectCode: 0 });
    expect(step.summary?.status).toBe('done');
    const lakeKeys = (await server.list(BUCKET, 'step-lake/')).map((o) => o.key);
    expect(lakeKeys.filter((k) => k.endsWith('.parquet')).map((k) => k.split('/')[1])).toEqual(['licenses']);
    expect(lakeKeys.some((k) => k.includes('/_manifests/'))).toBe(true);
    expect(await server.list(BUCKET, 'step-archive/')).toEqual([]);

    // snapshots.to: archive; --to lake replaces it for one run. The bucket gets the date as the
    // local folder holds it: the licences the step wrote and the domains written now.
    const plain = await cliOn(ws, server, ['snapshot', '--tables', 'domains'], { expectCode: 0 });
    expect(Object.keys((plain.summary?.stats as { uploads: object }).uploads)).toEqual(['archive']);
    const date = dateOf(plain.summary);
    expect((await server.list(BUCKET, 'step-archive/')).map((o) => o.key)).toEqual([
      MANIFEST_KEY('step-archive', date),
      DATA_KEY('step-archive', 'domains', date),
      DATA_KEY('step-archive', 'licenses', date),
    ]);
    const replaced = await cliOn(ws, server, ['snapshot', '--tables', 'domains', '--to', 'lake'], {
      expectCode: 0,
    });
    expect(Object.keys((replaced.summary?.stats as { uploads: object }).uploads)).toEqual(['lake']);
    expect(
      uploadOf(replaced.summary, 'lake').objects.find(
        (o) => o.key === DATA_KEY('step-lake', 'licenses', date),
      )?.action,
    ).toBe('skipped');
    // The lake's manifest of the date now lists both tables the local manifest holds.
    const manifest = JSON.parse(
      (await server.get(BUCKET, MANIFEST_KEY('step-lake', date))).toString('utf8'),
    ) as { tables: object };
    expect(Object.keys(manifest.tables).sort()).toEqual(['domains', 'licenses']);

    const status = await cliOn(ws, server, ['status'], { expectCode: 0 });
    expect(status.summary?.snapshotUploads).toEqual([
      expect.objectContaining({
        destination: 'archive',
        latestDate: date,
        lastStatus: 'done',
        lastError: null,
      }),
      expect.objectContaining({ destination: 'lake', latestDate: date, lastStatus: 'done', lastError: null }),
    ]);
    const human = await runCli(['--config', ws.configPath, 'status'], { cwd: ws.dir });
    expect(human.stdout).toContain(`→ archive s3://${BUCKET}/step-archive: latest ${date}`);
    expect(human.stdout).toContain(`→ lake s3://${BUCKET}/step-lake: latest ${date}`);
  });

  it('refuses a --to that is not an s3 destination of the config, before anything runs (exit 2)', async () => {
    const ws = await s3Workspace(fx.mirrorPath, {
      destinations: {
        lake: lake('never'),
        team: { type: 'postgres', url: 'postgres://u@localhost:5432/db' },
      },
    });
    for (const [name, message] of [
      ['nope', /^--to: no destination named "nope" \(s3 destinations in the config: lake\)$/],
      ['team', /^--to: destination "team" is of type postgres, not s3/],
    ] as const) {
      const run = await cliOn(ws, server, ['snapshot', '--to', name], { expectCode: 2 });
      expect(run.summary?.error).toMatchObject({
        code: 'ERR_USAGE',
        message: expect.stringMatching(message),
      });
    }
    expect(existsSync(ws.snapshotsDir)).toBe(false);
    expect(queryMirror(ws.mirrorPath, `SELECT id FROM pipeline_runs WHERE pipeline = 'snapshot'`)).toEqual(
      [],
    );
    expect(await server.list(BUCKET, 'never/')).toEqual([]);
  });
});

describe('large files', () => {
  it('a file larger than a part goes up in parts and comes back whole', async () => {
    const ws = await s3Workspace(fx.mirrorPath, { destinations: { lake: lake('multipart') } });
    // Grow domain_sections to tens of MB of poorly compressible JSON (random hex, which ZSTD still
    // compresses to about half: 5,000 domains are about 60 MB of text).
    await rm(ws.mirrorPath);
    await writeWorkspaceConfig(ws, { destinations: { lake: lake('multipart') } });
    await bigSectionsMirror(ws.mirrorPath, 5_000);
    const from = proxy.requests.length;
    const run = await cliOn(ws, server, ['snapshot', '--tables', 'domain_sections', '--to', 'lake'], {
      expectCode: 0,
    });
    const date = dateOf(run.summary);
    const local = await localFile(ws, 'domain_sections', date);
    expect(local.length).toBeGreaterThan(16 * 1024 * 1024);
    const key = DATA_KEY('multipart', 'domain_sections', date);
    expect((await server.get(BUCKET, key)).equals(local)).toBe(true);
    const parts = requestsSince(from, 'multipart').filter(
      (r) => r.method === 'PUT' && /[?&]partNumber=/.test(r.url),
    );
    expect(parts.length).toBeGreaterThanOrEqual(Math.ceil(local.length / (8 * 1024 * 1024)));
    expect(
      requestsSince(from, 'multipart').some((r) => r.method === 'POST' && /[?&]uploads/.test(r.url)),
    ).toBe(true);
  });
});
