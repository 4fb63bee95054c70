import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { open, rename, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Readable } from 'node:stream';
import { Transform } from 'node:stream';
import { pipeline as streamPipeline } from 'node:stream/promises';
import { fsyncDir } from '../../src/util/atomic-file.js';

/** What {@link streamToFileAtomically} wrote. */
export interface SavedFile {
  sha256: string;
  bytes: number;
}

/** Raised when a body's length differs from the announced one (it broke off); worth another attempt. */
export class BodyLengthError extends Error {
  readonly bytes: number;
  readonly expectedBytes: number;

  constructor(bytes: number, expectedBytes: number) {
    super(`ended after ${bytes} of ${expectedBytes} bytes`);
    this.bytes = bytes;
    this.expectedBytes = expectedBytes;
    this.name = 'BodyLengthError';
  }
}

/**
 * Streams `body` into `tmpPath`, hashing (SHA-256) and counting on the way, then fsyncs it and
 * renames it to `finalPath` and fsyncs the directory: after a crash or a power loss the final
 * name never points at a short file. `tmpPath` must be in the same directory as `finalPath` (so
 * the rename is atomic). A body shorter or longer than `expectedBytes` throws
 * {@link BodyLengthError}; on any failure the temporary file is removed and `finalPath` is left as
 * it was. Knows nothing of what the file is.
 */
export async function streamToFileAtomically(
  body: Readable,
  paths: { tmpPath: string; finalPath: string },
  options: {
    signal: AbortSignal;
    /** The announced length (Content-Length), checked once the body ended. */
    expectedBytes?: number | undefined;
    /** Called with each chunk's size and the running total (progress). */
    onChunk?: (size: number, bytes: number) => void;
  },
): Promise<SavedFile> {
  const { tmpPath, finalPath } = paths;
  try {
    const hash = createHash('sha256');
    let bytes = 0;
    const meter = new Transform({
      transform: (chunk: Buffer, _encoding, callback) => {
        hash.update(chunk);
        bytes += chunk.length;
        options.onChunk?.(chunk.length, bytes);
        callback(null, chunk);
      },
    });
    await streamPipeline(body, meter, createWriteStream(tmpPath), { signal: options.signal });
    if (options.expectedBytes !== undefined && bytes !== options.expectedBytes) {
      throw new BodyLengthError(bytes, options.expectedBytes);
    }
    const handle = await open(tmpPath, 'r+');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmpPath, finalPath);
    await fsyncDir(dirname(finalPath));
    return { sha256: hash.digest('hex'), bytes };
  } catch (error) {
    await rm(tmpPath, { force: true });
    throw error;
  }
}

/** SHA-256 and size of a file on disk, streamed; throws when the file is missing. */
export async function hashFile(path: string): Promise<SavedFile> {
  const hash = createHash('sha256');
  let bytes = 0;
  await stat(path);
  for await (const chunk of createReadStream(path)) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), bytes };
}
