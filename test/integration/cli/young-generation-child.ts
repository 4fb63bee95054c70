/**
 * Child of heap-growth.test.ts: allocates like a long job whose objects live a little while (a
 * batch of 60,000 small objects kept until the next batch, the event loop turned between
 * batches), with or without {@link capYoungGeneration}, and prints one JSON line: whether the cap
 * was installed and the largest young generation V8 reported.
 *
 * Usage: young-generation-child.ts cap|lift|none (lift: capped, then given back to V8 at once)
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { getHeapSpaceStatistics } from 'node:v8';
import { capYoungGeneration, liftYoungGenerationCap } from '../../../src/util/heap-growth.js';

/** What the child prints. */
export interface YoungGenerationReport {
  capped: boolean;
  /** Whether liftYoungGenerationCap said it lifted one (lift mode only). */
  lifted?: boolean;
  /** The largest `new_space` size seen, in bytes. */
  maxNewSpace: number;
}

const newSpace = (): number =>
  getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;

const mode = process.argv[2];
const capped = mode === 'cap' || mode === 'lift' ? capYoungGeneration(8) : false;
const lifted = mode === 'lift' ? liftYoungGenerationCap() : undefined;
let maxNewSpace = newSpace();
let kept: { i: number; s: string }[] = [];
for (let batch = 0; batch < 150; batch += 1) {
  const next: { i: number; s: string }[] = [];
  for (let i = 0; i < 60_000; i += 1) next.push({ i, s: `row ${i}` });
  kept = next;
  await nextTurn();
  maxNewSpace = Math.max(maxNewSpace, newSpace());
}
const report: YoungGenerationReport = {
  capped,
  ...(lifted === undefined ? {} : { lifted }),
  maxNewSpace: kept.length > 0 ? maxNewSpace : 0,
};
process.stdout.write(`${JSON.stringify(report)}\n`);
