/**
 * The S3-compatible test server as a process of its own (`startTestS3Server` in s3-server.ts
 * starts it): s3rver, from the npm registry, storing objects under the folder given. Prints
 * `{"port":N}` on stdout once it listens, then runs until killed.
 *
 *   node s3-server-child.ts DIR BUCKET...
 *
 * It accepts only the access key id in S3RVER_ACCESS_KEY_ID (registered in s3rver's account
 * registry in place of its built-in `S3RVER`) and refuses any other (InvalidAccessKeyId). s3rver
 * does not check SigV4 signatures, so it never needs the secret.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

interface S3rverInstance {
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
}
type S3rverClass = new (options: Record<string, unknown>) => S3rverInstance;

const [directory, ...buckets] = process.argv.slice(2);
if (directory === undefined || buckets.length === 0) {
  process.stderr.write('usage: s3-server-child.ts DIR BUCKET...\n');
  process.exit(2);
}
const accessKeyId = process.env.S3RVER_ACCESS_KEY_ID;
if (!accessKeyId) {
  process.stderr.write('S3RVER_ACCESS_KEY_ID is not set\n');
  process.exit(2);
}
const require = createRequire(import.meta.url);
const S3rver = require('s3rver') as S3rverClass;
// s3rver 3.7 has one built-in account with the key pair S3RVER/S3RVER: give it ours instead.
const { DUMMY_ACCOUNT } = require('s3rver/lib/models/account.js') as {
  DUMMY_ACCOUNT: { createKeyPair(id: string, secret: string): void; revokeAccessKey(id: string): void };
};
DUMMY_ACCOUNT.revokeAccessKey('S3RVER');
DUMMY_ACCOUNT.createKeyPair(accessKeyId, 'unchecked');

interface StoredObject {
  bucket: string;
  key: string;
  content: Buffer | Readable;
  metadata: Record<string, string>;
}
interface FilesystemStore {
  getResourcePath(bucket: string, key: string, resource: 'object'): string;
  putMetadata(bucket: string, key: string, metadata: Record<string, string>, md5: string): Promise<void>;
  putObject(object: StoredObject): Promise<{ size: number; md5: string }>;
}
// s3rver 3.7's putObject answers a PUT once it has read the body, not once the file holding it is
// written (it resolves on its hashing Transform's 'finish', before the file stream's), so a HEAD
// sent right after the answer could find a short file: under the full suite's load a snapshot
// upload's check once read 0 bytes for an object it had just sent. S3 reads its own writes, and
// so does this server now: the object's file is written before its metadata and the answer.
const { prototype: store } = require('s3rver/lib/stores/filesystem.js') as { prototype: FilesystemStore };
store.putObject = async function putObject(this: FilesystemStore, object: StoredObject) {
  const objectPath = this.getResourcePath(object.bucket, object.key, 'object');
  await mkdir(dirname(objectPath), { recursive: true });
  const md5 = createHash('md5');
  let size = 0;
  await pipeline(
    Buffer.isBuffer(object.content) ? Readable.from([object.content]) : object.content,
    new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        md5.update(chunk);
        size += chunk.length;
        callback(null, chunk);
      },
    }),
    createWriteStream(objectPath),
  );
  const digest = md5.digest('hex');
  await this.putMetadata(object.bucket, object.key, object.metadata, digest);
  return { size, md5: digest };
};
const server = new S3rver({
  address: '127.0.0.1',
  port: 0,
  silent: true,
  directory,
  configureBuckets: buckets.map((name) => ({ name })),
});
const { port } = await server.run();
process.stdout.write(`${JSON.stringify({ port })}\n`);
const stop = (): void => void server.close().finally(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
