import { createReadStream } from 'node:fs';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { S3DestinationConfig } from '../../config/destinations.js';
import { classifyStoreError } from './classify.js';
import { SHA256_METADATA_KEY } from './layout.js';

/*
 * The only module that imports the AWS SDK (@aws-sdk/client-s3 and @aws-sdk/lib-storage),
 * loaded lazily by upload.ts, so commands that upload nothing never load it. Each
 * method is ONE attempt: it throws a classified StoreFailure (classify.ts) and leaves retrying to
 * the caller's RetryBudget (retry.ts), so the whole destination shares one deadline.
 */

/** Bytes per part of a multipart upload (files up to this size go in one PutObject). */
export const PART_SIZE_BYTES = 8 * 1024 * 1024;

/** Parts of one file in flight at once. Memory: about this many parts. */
export const PARTS_IN_FLIGHT = 4;

/** What HEAD says about an object. */
export interface ObjectHead {
  bytes: number;
  /** The SHA-256 we stored with the object, or null when it has none (not written by us). */
  sha256: string | null;
}

/** An object of a listing. */
export interface ListedObject {
  key: string;
  bytes: number;
}

/** How {@link S3Store.uploadFile} describes the file. */
export interface UploadFileOptions {
  sha256: string;
  contentType: string;
  /** Bytes sent so far, for progress. */
  onProgress?: (loadedBytes: number) => void;
}

/** One bucket, through the SDK; every method is a single attempt. */
export interface S3Store {
  /** Every key (with its size) that starts with `prefix`, all pages. */
  list(prefix: string): Promise<ListedObject[]>;
  /** The object's size and stored checksum, or null when there is no such object. */
  head(key: string): Promise<ObjectHead | null>;
  /** Uploads a file (multipart above {@link PART_SIZE_BYTES}) with its SHA-256 as metadata. */
  uploadFile(key: string, path: string, options: UploadFileOptions): Promise<void>;
  /** Writes a small object from text, with its SHA-256 as metadata. */
  putText(key: string, body: string, options: { sha256: string; contentType: string }): Promise<void>;
  /** The object as text, or null when there is no such object. */
  getText(key: string): Promise<string | null>;
  /** Deletes one object (no error when it is already gone). */
  delete(key: string): Promise<void>;
  /** Releases the connections. */
  close(): void;
}

/**
 * The SDK's socket inactivity timeout that makes a silent connection fail within
 * `attemptTimeoutMs`. The SDK's HTTP handler (@smithy/node-http-handler 4) arms a socket timeout
 * of 6 s or more only 3 s after the request starts, so those get 3 s less. Its `requestTimeout`
 * (a whole-request limit) is left unset: a part of a large file on a slow link may take long
 * while bytes keep moving.
 */
function socketTimeoutMs(attemptTimeoutMs: number): number {
  return attemptTimeoutMs >= 9_000 ? attemptTimeoutMs - 3_000 : Math.min(attemptTimeoutMs, 5_999);
}

/** Options of {@link openS3Store}. */
export interface OpenS3StoreOptions {
  /**
   * Longest an attempt may wait for a TCP connection (at most 5 s), and for a byte to move on its
   * socket: a silent store fails each attempt within this time.
   */
  attemptTimeoutMs: number;
  /** Aborts the request in flight. */
  signal?: AbortSignal;
}

/**
 * An {@link S3Store} for a destination. Credentials come from the AWS SDK's default chain only
 * (environment, shared files and profiles, SSO, web identity, container and instance
 * credentials): the config never holds them. The region is the destination's, else the chain's
 * (`AWS_REGION`, the profile's).
 */
export function openS3Store(destination: S3DestinationConfig, options: OpenS3StoreOptions): S3Store {
  const client = new S3Client({
    ...(destination.region === null ? {} : { region: destination.region }),
    ...(destination.endpoint === null ? {} : { endpoint: destination.endpoint }),
    forcePathStyle: destination.forcePathStyle,
    followRegionRedirects: true,
    // Retries are the caller's (one deadline per destination), not the SDK's own loop.
    maxAttempts: 1,
    // The SDK's default since 3.729 sends CRC32 trailers in aws-chunked bodies, which several
    // S3-compatible stores refuse; our own SHA-256 (object metadata) decides what is in place.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: {
      connectionTimeout: Math.min(5_000, options.attemptTimeoutMs),
      socketTimeout: socketTimeoutMs(options.attemptTimeoutMs),
    },
  });
  const bucket = destination.bucket;
  const signal = options.signal;
  const send = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      throw classifyStoreError(error);
    }
  };
  const isMissing = (error: unknown): boolean => {
    const failure = classifyStoreError(error);
    return failure.status === 404 && failure.storeCode !== 'NoSuchBucket';
  };

  return {
    list: (prefix) =>
      send(async () => {
        const objects: ListedObject[] = [];
        let token: string | undefined;
        do {
          const page = await client.send(
            new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
            { abortSignal: signal },
          );
          for (const item of page.Contents ?? []) {
            if (item.Key !== undefined) objects.push({ key: item.Key, bytes: item.Size ?? 0 });
          }
          token = page.IsTruncated === true ? page.NextContinuationToken : undefined;
        } while (token !== undefined);
        return objects;
      }),

    head: (key) =>
      send(async () => {
        try {
          const answer = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }), {
            abortSignal: signal,
          });
          return { bytes: answer.ContentLength ?? 0, sha256: answer.Metadata?.[SHA256_METADATA_KEY] ?? null };
        } catch (error) {
          if (isMissing(error)) return null;
          throw error;
        }
      }),

    uploadFile: (key, path, upload) =>
      send(async () => {
        const body = createReadStream(path);
        const transfer = new Upload({
          client,
          params: {
            Bucket: bucket,
            Key: key,
            Body: body,
            ContentType: upload.contentType,
            Metadata: { [SHA256_METADATA_KEY]: upload.sha256 },
          },
          partSize: PART_SIZE_BYTES,
          queueSize: PARTS_IN_FLIGHT,
          // A failed multipart upload is aborted, so its parts do not linger (and cost) in the bucket.
          leavePartsOnError: false,
        });
        if (upload.onProgress) {
          const report = upload.onProgress;
          transfer.on('httpUploadProgress', (p) => {
            if (typeof p.loaded === 'number') report(p.loaded);
          });
        }
        const onAbort = (): void => void transfer.abort().catch(() => undefined);
        signal?.addEventListener('abort', onAbort, { once: true });
        try {
          await transfer.done();
        } finally {
          signal?.removeEventListener('abort', onAbort);
          body.destroy();
        }
      }),

    putText: (key, text, put) =>
      send(async () => {
        await client.send(
          new PutObjectCommand({
            Bucket: bucket,
            Key: key,
            Body: text,
            ContentType: put.contentType,
            Metadata: { [SHA256_METADATA_KEY]: put.sha256 },
          }),
          { abortSignal: signal },
        );
      }),

    getText: (key) =>
      send(async () => {
        try {
          const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }), {
            abortSignal: signal,
          });
          return (await answer.Body?.transformToString('utf8')) ?? '';
        } catch (error) {
          if (isMissing(error) || (error as { name?: unknown }).name === 'NoSuchKey') return null;
          throw error;
        }
      }),

    delete: (key) =>
      send(async () => {
        await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }), { abortSignal: signal });
      }),

    close: () => client.destroy(),
  };
}
