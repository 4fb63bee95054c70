/**
 * Child of heap-growth.test.ts: allocates like a long job whose objects live a little while (a
 * batch of 60,000 small objects kept until the next batch), with or without
 * {@link capYoungGeneration}, and prints one JSON line: whether the cap was installed and the
 * largest young generation V8 reported. Every 2,000 objects it turns the event loop twice, as a
 * job waiting for I/O does: Node delivers the notice of a garbage collection two turns after it.
 * The cap works between such turns, as the commands it holds take them: sync for each
 * response, the export load every 256 KiB of rows it reads (pipelines/export/key-order.ts). With
 * fewer turns the cap is outgrown now and then, past the bound of heap-growth.test.ts (measured
 * 2026-11-30, 20 runs each): every 60,000 objects, in 5 and 3 runs of 20 on Node 26 (without
 * and with the shebang), and once in 20 on Node 24 with three busy processes on 2 cores
 * (32.8 MB); every 15,000, in 2 and 1 of 20 on Node 26; every 5,000, none, but up to 28.0 MB.
 * Every 2,000: at most 17.3 MB on Nodes 22, 24 and 26 with three busy processes (10 runs each,
 * with and without the shebang), about what V8's own `--max-semi-space-size=8` gives
 * (15.7–16.8 MB).
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
let kept: { i: number; s: string }[] = [];
for (let batch = 0; batch < 150; batch += 1) {
  const next: { i: number; s: string }[] = [];
  for (let i = 1; i <= 60_000; i += 1) {
    next.push({ i, s: `row ${i}` });
    if (i % 2_000 === 0) {
      await nextTurn();
      await nextTurn();
      maxNewSpace = Math.max(maxNewSpace, newSpace());
    }
  }
  kept = next;
}
const report: YoungGenerationReport = {
  capped,
  ...(raised === undefined ? {} : { raised }),
  maxNewSpace: kept.length > 0 ? maxNewSpace : 0,
};
process.stdout.write(`${JSON.stringify(report)}\n`);
