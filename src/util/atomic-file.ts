import { randomBytes } from 'node:crypto';
import { open, rename, rm, mkdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * A temporary path next to `finalPath` (same directory, so the rename is atomic), hidden and
 * clearly marked so that a crash leaves only `.name.tmp-xxxx` files that readers ignore.
 */
export function tempPathFor(finalPath: string): string {
  return join(dirname(finalPath), `.${basename(finalPath)}.tmp-${randomBytes(4).toString('hex')}`);
}

/**
 * Writes `data` to `finalPath` atomically: write a temporary file in the same directory, fsync,
 * rename into place, fsync the directory. A reader sees the old file or the new one, never a
 * partial one.
 */
export async function writeFileAtomic(finalPath: string, data: string | Uint8Array): Promise<void> {
  await mkdir(dirname(finalPath), { recursive: true });
  const tmp = tempPathFor(finalPath);
  const handle = await open(tmp, 'w');
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(tmp, finalPath);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
  await fsyncDir(dirname(finalPath));
}

/** fsyncs a directory so a rename inside it survives a power loss; ignored where unsupported. */
export async function fsyncDir(dir: string): Promise<void> {
  try {
    const handle = await open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Some platforms cannot fsync a directory; the rename is still atomic there.
  }
}
