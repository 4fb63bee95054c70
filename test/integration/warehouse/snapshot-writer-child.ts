/**
 * The child process of crash-safety.test.ts, killed with SIGKILL in the middle of a snapshot:
 * `node snapshot-writer-child.ts DIR SNAPSHOT_DATE READY_AFTER` (from source: test/helpers/cli.ts
 * `startNodeScript`). Writes `licenses` for the date from a generator of incompressible rows;
 * after READY_AFTER rows (several row groups, well past the sink's flush threshold) it prints the
 * partition's temporary files and their sizes as one JSON line on stdout, then stalls forever, as
 * a slow cursor would.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { partitionDir, writeSnapshot, type ColumnSpec } from '../../../src/warehouse/index.js';

/** The columns of the `licenses` table this child and its test write. */
export const COLUMNS: ColumnSpec[] = [
  { name: 'id', type: 'integer', nullable: false },
  { name: 'payload', type: 'text' },
  { name: 'seen_at', type: 'timestamp' },
];

/** What the child prints once the temporary file holds several row groups. */
export interface MidWriteReport {
  temp: string[];
  size: number[];
}

async function* rows(
  dir: string,
  snapshotDate: string,
  readyAfter: number,
): AsyncGenerator<Record<string, unknown>> {
  for (let i = 0; ; i++) {
    if (i === readyAfter) {
      const partition = partitionDir(dir, 'licenses', snapshotDate);
      const temp = readdirSync(partition).filter((f) => f.startsWith('.'));
      const report: MidWriteReport = { temp, size: temp.map((f) => statSync(join(partition, f)).size) };
      process.stdout.write(`${JSON.stringify(report)}\n`);
      await new Promise((resolve) => setTimeout(resolve, 3_600_000));
    }
    yield { id: i, payload: randomBytes(600).toString('base64'), seen_at: new Date(1e12 + i).toISOString() };
  }
}

// Run only as the entry point: the test imports COLUMNS from here.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [dir, snapshotDate, readyAfter] = process.argv.slice(2) as [string, string, string];
  await writeSnapshot({
    dir,
    snapshotDate,
    rowGroupSize: 2000,
    tables: [{ table: 'licenses', columns: COLUMNS, rows: rows(dir, snapshotDate, Number(readyAfter)) }],
  });
}
