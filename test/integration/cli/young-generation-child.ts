/**
 * Child of heap-growth.test.ts: allocates like a long job whose objects live a little while (a
 * batch of 60,000 small objects kept until the next batch), with or without
 * {@link capYoungGeneration}, and prints one JSON line: whether the cap was installed and the
 * largest young generation V8 reported.
 *
 * In modes `cap`, `raise` and `none` it turns the event loop twice every 2,000 objects, as a job
 * waiting for I/O does: Node delivers the notice of a garbage collection two turns after it.
 * The cap works between such turns, as the commands it holds take them: sync for each response,
 * the export load every 256 KiB of rows it reads (pipelines/export/key-order.ts). Measured on
 * 2026-11-30 with the cap deciding from the semi-space capacity (youngGenerationMayGrow): with
 * turns every 60,000 objects it was never outgrown (20 runs each: Node 26 with and without the
 * shebang, and with it and three busy processes on 2 cores; Node 24 with three busy processes;
 * Node 22), at most 16.0 MB; every 2,000, at most 17.3 MB on Nodes 22, 24 and 26 with three busy
 * processes (10 runs each), about what V8's own `--max-semi-space-size=8` gives (14.8–16.3 MB).
 * Deciding from the committed size, as before that day, it was outgrown every 60,000 objects in
 * 5 and 3 runs of 20 on Node 26 (without and with the shebang), and in one of 20 on Node 24 with
 * three busy processes (32.8 MB).
 *
 * Modes `writer`, `thread` and `thread-held` first allocate so for a while, turning the loop, so
 * that the young generation is at the cap; then they start a thread and allocate as much again
 * without turning the loop, so that only the growth factor set by then can hold the cap: `writer`
 * starts the mirror's writer thread (src/mirror/profile-writer.ts), `thread` a bare worker
 * thread, and `thread-held` one followed by holdYoungGenerationCap once it is online, as the
 * writer's start is. On Node 22 a thread starting sets V8's growth factor back to 2.
 *
 * Usage: young-generation-child.ts cap|raise|none|writer|thread|thread-held (raise: capped, then
 * raised at once as `snapshot` raises it)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { getHeapSpaceStatistics } from 'node:v8';
import { Worker } from 'node:worker_threads';
import { openMirror } from '../../../src/mirror/database.js';
import { openProfileWriter } from '../../../src/mirror/profile-writer.js';
import {
  capYoungGeneration,
  holdYoungGenerationCap,
  raiseYoungGenerationCap,
  youngGenerationCapacity,
} from '../../../src/util/heap-growth.js';

/** What the child prints. */
export interface YoungGenerationReport {
  capped: boolean;
  /** What raiseYoungGenerationCap returned (raise mode only). */
  raised?: boolean;
  /** The largest `new_space` size seen (what V8 has committed for it), in bytes. */
  maxNewSpace: number;
  /**
   * The largest semi-space capacity seen, in bytes, read as the cap decides from it
   * (youngGenerationCapacity): about the semi-space's size, and on Nodes 24 and 26 now and then
   * more (up to 11.25 MB for 8 MB semi-spaces, measured).
   */
  maxSemiSpace: number;
}

let maxSemiSpace = 0;
/** Reads `new_space`: returns its size, and keeps the largest semi-space capacity. */
const newSpace = (): number => {
  const space = getHeapSpaceStatistics().find(({ space_name }) => space_name === 'new_space');
  if (space === undefined) return 0;
  maxSemiSpace = Math.max(maxSemiSpace, youngGenerationCapacity(space));
  return space.space_size;
};

const mode = process.argv[2];
const capped = mode === 'none' ? false : capYoungGeneration();
const raised = mode === 'raise' ? raiseYoungGenerationCap() : undefined;
let maxNewSpace = newSpace();

/** Allocates `batches` batches of 60,000 objects, turning the loop twice every 2,000 or never. */
async function allocate(batches: number, turns: boolean): Promise<number> {
  let kept: { i: number; s: string }[] = [];
  for (let batch = 0; batch < batches; batch += 1) {
    const next: { i: number; s: string }[] = [];
    for (let i = 1; i <= 60_000; i += 1) {
      next.push({ i, s: `row ${i}` });
      if (i % 2_000 === 0) {
        if (turns) {
          await nextTurn();
          await nextTurn();
        }
        maxNewSpace = Math.max(maxNewSpace, newSpace());
      }
    }
    kept = next;
  }
  return kept.length;
}

let finish = async (): Promise<void> => {};
let kept: number;
if (mode === 'writer' || mode === 'thread' || mode === 'thread-held') {
  await allocate(30, true);
  if (mode === 'writer') {
    const dir = mkdtempSync(join(tmpdir(), 'young-generation-'));
    const mirror = await openMirror(join(dir, 'mirror.sqlite'));
    const writer = await openProfileWriter(mirror);
    finish = async () => {
      await writer.close();
      mirror.close();
      rmSync(dir, { recursive: true, force: true });
    };
  } else {
    const worker = new Worker("require('node:worker_threads').parentPort.once('message', () => {})", {
      eval: true,
    });
    await new Promise((resolve) => worker.once('online', resolve));
    if (mode === 'thread-held') holdYoungGenerationCap();
    finish = () => worker.terminate().then(() => undefined);
  }
  kept = await allocate(150, false);
} else {
  kept = await allocate(150, true);
}
await finish();
const report: YoungGenerationReport = {
  capped,
  ...(raised === undefined ? {} : { raised }),
  maxNewSpace: kept > 0 ? maxNewSpace : 0,
  maxSemiSpace,
};
process.stdout.write(`${JSON.stringify(report)}\n`);
