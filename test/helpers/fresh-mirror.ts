import { join } from 'node:path';
import { openMirror } from '../../src/mirror/database.js';
import { mirrorIndexes, type MirrorIndex } from './mirror.js';
import { tempDir } from './temp-dir.js';

/** The indexes of a newly created mirror, which every mirror must have after a load. */
export async function freshMirrorIndexes(): Promise<MirrorIndex[]> {
  const path = join(await tempDir('fresh-mirror-'), 'mirror.sqlite');
  const mirror = await openMirror(path);
  await mirror.close();
  return mirrorIndexes(path);
}
