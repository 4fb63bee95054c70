/**
 * A real S3-compatible server for the tests, started by the tests themselves from the npm
 * registry (s3rver, a devDependency), in a child process of its own, on a free loopback port.
 * Tests read what the product wrote back through the AWS SDK (never through product code).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { startNodeScript, type CliProcess } from './cli.js';

/** A running test server. */
export interface TestS3Server {
  /** `http://127.0.0.1:<port>`. */
  endpoint: string;
  /** The one access key id the server accepts. */
  accessKeyId: string;
  /** The buckets it was started with. */
  buckets: readonly string[];
  /** An SDK client of the test's own, straight to the server. */
  client: S3Client;
  /** Every key (and size) under `prefix` in `bucket`. */
  list(bucket: string, prefix?: string): Promise<Array<{ key: string; bytes: number; etag: string }>>;
  get(bucket: string, key: string): Promise<Buffer>;
  head(
    bucket: string,
    key: string,
  ): Promise<{ bytes: number; metadata: Record<string, string>; etag: string } | null>;
  put(bucket: string, key: string, body: Buffer | string, metadata?: Record<string, string>): Promise<void>;
  /** Deletes every object under `prefix` ("someone emptied the bucket"). */
  empty(bucket: string, prefix?: string): Promise<number>;
  close(): Promise<void>;
}

/** Region the tests configure (the server ignores it; the SDK needs one to sign). */
export const TEST_REGION = 'us-east-1';

/**
 * Starts the server with `buckets` created. The caller closes it (`afterAll`/`onTestFinished`).
 * The storage folder is outside the per-test temp dirs: the server legitimately receives request
 * headers, which are not the product's output.
 */
export async function startTestS3Server(buckets: readonly string[] = ['snapshots']): Promise<TestS3Server> {
  const directory = await mkdtemp(join(tmpdir(), 'domain-sync-s3-'));
  const accessKeyId = `AKIATEST${randomBytes(6).toString('hex').toUpperCase()}`;
  const child: CliProcess = startNodeScript(
    join(import.meta.dirname, 's3-server-child.ts'),
    [directory, ...buckets],
    {
      env: { S3RVER_ACCESS_KEY_ID: accessKeyId },
      timeoutMs: 3_600_000,
    },
  );
  const match = await child.waitForOutput(/\{"port":(\d+)\}/, 30_000);
  const endpoint = `http://127.0.0.1:${match[1]}`;
  const client = new S3Client({
    endpoint,
    region: TEST_REGION,
    forcePathStyle: true,
    credentials: { accessKeyId, secretAccessKey: 'test-reader-secret' },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const list: TestS3Server['list'] = async (bucket, prefix = '') => {
    const out: Array<{ key: string; bytes: number; etag: string }> = [];
    let token: string | undefined;
    do {
      const page = await client.send(
        new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
      );
      for (const o of page.Contents ?? []) out.push({ key: o.Key!, bytes: o.Size ?? 0, etag: o.ETag ?? '' });
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  };
  return {
    endpoint,
    accessKeyId,
    buckets,
    client,
    list,
    async get(bucket, key) {
      const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return Buffer.from(await answer.Body!.transformToByteArray());
    },
    async head(bucket, key) {
      try {
        const a = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
        return { bytes: a.ContentLength ?? 0, metadata: a.Metadata ?? {}, etag: a.ETag ?? '' };
      } catch (error) {
        if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404)
          return null;
        throw error;
      }
    },
    async put(bucket, key, body, metadata) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, Metadata: metadata }));
    },
    async empty(bucket, prefix = '') {
      const keys = await list(bucket, prefix);
      for (const { key } of keys) await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
      return keys.length;
    },
    async close() {
      client.destroy();
      child.kill('SIGTERM');
      await child.exited;
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/** The environment a CLI child needs to reach the server: credentials from the SDK's default chain. */
export function awsEnv(
  server: Pick<TestS3Server, 'accessKeyId'>,
  secret: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    AWS_ACCESS_KEY_ID: server.accessKeyId,
    AWS_SECRET_ACCESS_KEY: secret,
    // Nothing from the developer's machine: no shared files, no instance metadata.
    AWS_CONFIG_FILE: '/nonexistent/domain-sync-test/config',
    AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/domain-sync-test/credentials',
    AWS_EC2_METADATA_DISABLED: 'true',
    ...extra,
  };
}

/** A `destinations.NAME` entry for the server (or a proxy in front of it). */
export function s3DestinationConfig(
  endpoint: string,
  bucket: string,
  prefix: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    type: 's3',
    url: `s3://${bucket}${prefix === '' ? '' : `/${prefix}`}`,
    region: TEST_REGION,
    endpoint,
    forcePathStyle: true,
    ...extra,
  };
}
