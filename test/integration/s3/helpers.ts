/**
 * Workspaces of the S3 snapshot tests: a copy of a synced mirror, a config naming destinations on
 * the test server (through the fault proxy), and the CLI run as a child process with AWS
 * credentials from the environment (the SDK's default chain).
 */
import { createHash, randomBytes } from 'node:crypto';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { openMirror } from '../../../src/mirror/database.js';
import { expect } from 'vitest';
import { describeRun, runCli, summaryOf, type CliRun } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { awsEnv, type TestS3Server } from '../../helpers/s3-server.js';

/** A secret of the tests' own, distinctive in every form the key scan searches. */
export const AWS_SECRET = `s3Secret+${randomBytes(9).toString('base64')}/Zq=`;

/** One test's folder, mirror copy and config. */
export interface S3Workspace {
  dir: string;
  mirrorPath: string;
  snapshotsDir: string;
  configPath: string;
}

/** Config of a workspace (the parts the tests vary). */
export interface WorkspaceConfig {
  destinations: Record<string, unknown>;
  to?: string[];
  retainDates?: number;
  pipelines?: Record<string, unknown>;
}

/** A fresh workspace with a copy of `mirrorPath`. */
export async function s3Workspace(mirrorPath: string, config: WorkspaceConfig): Promise<S3Workspace> {
  const dir = await tempDir('domain-sync-s3-ws-');
  const ws: S3Workspace = {
    dir,
    mirrorPath: join(dir, 'mirror.sqlite'),
    snapshotsDir: join(dir, 'snapshots'),
    configPath: join(dir, 'config.json'),
  };
  await copyFile(mirrorPath, ws.mirrorPath);
  await writeWorkspaceConfig(ws, config);
  return ws;
}

/** (Re)writes the workspace's config file. */
export async function writeWorkspaceConfig(ws: S3Workspace, config: WorkspaceConfig): Promise<void> {
  await writeFile(
    ws.configPath,
    JSON.stringify({
      database: { path: ws.mirrorPath },
      snapshots: { dir: ws.snapshotsDir, retainDates: config.retainDates ?? 0, to: config.to ?? [] },
      destinations: config.destinations,
      lock: { lease: '3s', wait: '20s' },
      log: { level: 'info' },
      ...(config.pipelines ? { pipelines: config.pipelines } : {}),
    }),
  );
}

/** Runs the CLI on the workspace's config with AWS credentials for `server` (unless `env` says otherwise). */
export async function cliOn(
  ws: S3Workspace,
  server: Pick<TestS3Server, 'accessKeyId'>,
  args: string[],
  options: { env?: Record<string, string>; isolatedEnv?: boolean; expectCode?: number } = {},
): Promise<CliRun & { summary: Record<string, unknown> | null }> {
  const run = await runCli(['--config', ws.configPath, '--json', ...args], {
    cwd: ws.dir,
    env: options.env ?? awsEnv(server, AWS_SECRET),
    ...(options.isolatedEnv ? { isolatedEnv: true } : {}),
  });
  if (options.expectCode !== undefined) expect(run.code, describeRun(run)).toBe(options.expectCode);
  return { ...run, summary: summaryOf(run) };
}

/** The `stats.uploads.NAME` of a snapshot summary. */
export interface UploadSummary {
  destination: string;
  url: string;
  status: string;
  dates: string[];
  latestDate: string | null;
  uploaded: { objects: number; bytes: number };
  skipped: { objects: number; bytes: number };
  objects: Array<{ key: string; bytes: number; action: 'uploaded' | 'skipped' }>;
  removedDates: string[];
  retries: number;
  error?: { code: string; message: string };
}

/** The upload summary of destination `name` in a snapshot's (or a snapshot step's) summary. */
export function uploadOf(summary: Record<string, unknown> | null, name: string): UploadSummary {
  const stats = summary?.stats as { uploads?: Record<string, UploadSummary> } | undefined;
  const upload = stats?.uploads?.[name];
  if (upload === undefined)
    throw new Error(`no upload for ${name} in ${JSON.stringify(summary).slice(0, 2000)}`);
  return upload;
}

/** The snapshot date of a snapshot summary. */
export function dateOf(summary: Record<string, unknown> | null): string {
  return (summary?.stats as { snapshotDate: string }).snapshotDate;
}

export function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Downloads every object under `prefix` into `dir`, keeping the key's path below the prefix. */
export async function download(
  server: TestS3Server,
  bucket: string,
  prefix: string,
  dir: string,
): Promise<string[]> {
  const keys = (await server.list(bucket, prefix === '' ? '' : `${prefix}/`)).map((o) => o.key);
  for (const key of keys) {
    const path = join(dir, prefix === '' ? key : key.slice(prefix.length + 1));
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, await server.get(bucket, key));
  }
  return keys;
}

/** The local file of a table for a date. */
export function localFile(ws: S3Workspace, table: string, date: string): Promise<Buffer> {
  return readFile(join(ws.snapshotsDir, table, `snapshot_date=${date}`, 'part-0.parquet'));
}

/** A mirror whose `domain_sections` holds `domains` × 4 rows of ~3 KB of random hex JSON. */
export async function bigSectionsMirror(path: string, domains: number): Promise<void> {
  await mkdir(join(path, '..'), { recursive: true });
  const mirror = await openMirror(path);
  await mirror.close();
  const db = new Database(path);
  try {
    const at = '2026-01-02T03:04:05.678Z';
    db.exec('BEGIN');
    db.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       INSERT INTO domains (domain_normalized, company_name, first_synced_at, last_synced_at)
       SELECT 'd' || i || '.example', 'Company ' || i, ?, ? FROM n`,
    ).run(domains, at, at);
    db.prepare(
      `WITH s(section) AS (VALUES ('game_providers'), ('affiliate_programs'), ('geo'), ('related_domains'))
       INSERT INTO domain_sections (domain_normalized, section, data, mirror_first_seen_at, mirror_updated_at)
       SELECT d.domain_normalized, s.section, json_array(d.domain_normalized, hex(randomblob(1500))), ?, ?
       FROM domains d, s`,
    ).run(at, at);
    db.exec('COMMIT');
  } finally {
    db.close();
  }
}
