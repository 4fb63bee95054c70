import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ExportRowInput } from '../../src/mirror/store/export-load.js';
import { tempDir } from './temp-dir.js';

/*
 * Rows of export files as the readers of pipelines/export give them, for the tests of reading a
 * file in key order (test/unit/export/*-order.test.ts).
 */

/** One row as a reader gives it. */
export type ReadRow = { row: ExportRowInput; where: string };

/** Every row a reader gives, in its order. */
export async function readAllRows(rows: AsyncIterable<ReadRow>): Promise<ReadRow[]> {
  const out: ReadRow[] = [];
  for await (const r of rows) out.push(r);
  return out;
}

/** A file named `name` in a temporary folder of its own, holding `text`; its path. */
export async function exportFile(name: string, text: string): Promise<string> {
  const path = join(await tempDir('domain-sync-export-rows-'), name);
  writeFileSync(path, text);
  return path;
}

export const keyOfRow = (r: ReadRow): string => r.row.profile.domain_normalized;

/** The rows in file order, sorted stably by their keys' UTF-8 bytes: what the key order must be. */
export function sortedByKey(rows: readonly ReadRow[]): ReadRow[] {
  return rows
    .map((r, i) => ({ r, i }))
    .sort((a, b) => Buffer.compare(Buffer.from(keyOfRow(a.r)), Buffer.from(keyOfRow(b.r))) || a.i - b.i)
    .map(({ r }) => r);
}
