import { join } from 'node:path';
import { sql } from 'kysely';
import { onTestFinished } from 'vitest';
import { openMirror } from '../../../src/mirror/database.js';
import type { Mirror } from '../../../src/mirror/database.js';
import { tempDir } from '../../helpers/temp-dir.js';

/** A migrated mirror in a fresh temp dir, closed when the test finishes. */
export async function tempMirror(): Promise<Mirror> {
  const dir = await tempDir('mirror-test-');
  const mirror = await openMirror(join(dir, 'mirror.sqlite'));
  onTestFinished(() => mirror.close());
  return mirror;
}

/** SQLite's total_changes() on the mirror's connection: rows written since open. */
export async function totalChanges(mirror: Mirror): Promise<number> {
  const result = await sql<{ n: number }>`SELECT total_changes() AS n`.execute(mirror.db);
  return result.rows[0]!.n;
}
