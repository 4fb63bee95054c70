/**
 * Child of heap-growth.test.ts: allocates like a long job whose objects live a little while
 * (batches of 15,000 small objects, each kept while the next three are made), with or without
 * {@link capYoungGeneration}, and prints one JSON line: whether the cap was installed and the
 * largest young generation V8 reported. Between batches it turns the event loop twice, as a job
 * waiting for I/O does: Node delivers the notice of a garbage collection two turns after it.
 * The batches are small because the cap works between such turns (its notices come on the event
 * loop), as the commands it holds (sync, export) turn it: batches of 60,000 objects, with no turn
 * between them, let two collections grow the young generation before a notice came, on a loaded
 * machine (32.8 MB against 16.8 for V8's own `--max-semi-space-size=8`, once in 20 runs with three
 * busy processes on 2 cores; 15,000: at most 23.1 MB in 30 such runs).
 *
 * Usage: young-generation-child.ts cap|raise|none (raise: capped, then raised at once as
 * `snapshot` raises it)
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { getHeapSpaceStatistics } from 'node:v8';
import {
  capYoungGeneration,
  raiseYoungGenerationCap,
  SNAPSHOT_SEMI_SPACE_MB,
} from '../../../src/util/heap-growth.js';

/** What the child prints. */
export interface YoungGenerationReport {
  capped: boolean;
  /** What raiseYoungGenerationCap returned (raise mode only). */
  raised?: boolean;
  /** The largest `new_space` size seen, in bytes. */
  maxNewSpace: number;
}

const newSpace = (): number =>
  getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;

const mode = process.argv[2];
const capped = mode === 'cap' || mode === 'raise' ? capYoungGeneration(8) : false;
const raised = mode === 'raise' ? raiseYoungGenerationCap(SNAPSHOT_SEMI_SPACE_MB) : undefined;
let maxNewSpace = newSpace();
let kept: { i: number; s: string }[][] = [];
for (let batch = 0; batch < 600; batch += 1) {
  const next: { i: number; s: string }[] = [];
  for (let i = 0; i < 15_000; i += 1) next.push({ i, s: `row ${i}` });
  kept = [...kept.slice(-3), next];
  await nextTurn();
  await nextTurn();
  maxNewSpace = Math.max(maxNewSpace, newSpace());
}
const report: YoungGenerationReport = {
  capped,
  ...(raised === undefined ? {} : { raised }),
  maxNewSpace: kept.length > 0 ? maxNewSpace : 0,
};
process.stdout.write(`${JSON.stringify(report)}\n`);
