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
import { createRequire } from 'node:module';

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
