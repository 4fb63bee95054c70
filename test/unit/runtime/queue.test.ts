import { getEventListeners } from 'node:events';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type PQueue from 'p-queue';
import { describe, expect, it } from 'vitest';
import { TaskQueue } from '../../../src/runtime/queue.js';

// A real garbage collection while the queue is waited on: the case where listeners removed through
// addEventListener's `signal` option stay behind (nodejs/node#63954).
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** The p-queue inside, to count the listeners left on it. */
function innerQueue(queue: TaskQueue): PQueue {
  return (queue as unknown as { queue: PQueue }).queue;
}

function gate(): { done: Promise<void>; open: () => void } {
  let open!: () => void;
  const done = new Promise<void>((resolve) => (open = resolve));
  return { done, open };
}

const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1));

async function collectGarbage(): Promise<void> {
  for (let i = 0; i < 3; i++) {
    gc();
    await tick();
  }
}

function listenerCounts(queue: TaskQueue): Record<'next' | 'active' | 'idle', number> {
  const inner = innerQueue(queue);
  return {
    next: getEventListeners(inner, 'next').length,
    active: getEventListeners(inner, 'active').length,
    idle: getEventListeners(inner, 'idle').length,
  };
}

describe('TaskQueue waits', () => {
  it('waitForRoom resolves once fewer than maxWaiting tasks wait, and leaves no listener behind after a garbage collection', async () => {
    const queue = new TaskQueue({ concurrency: 1, maxWaiting: 2 });
    const gates = Array.from({ length: 4 }, gate);
    for (const g of gates) queue.add(() => g.done);
    await tick(); // 1 running, 3 waiting

    let roomAt: number | undefined;
    const room = queue.waitForRoom().then(() => (roomAt = Date.now()));
    await collectGarbage();
    expect(roomAt).toBeUndefined();

    gates[0]!.open();
    await tick(); // 1 running, 2 waiting: still no room
    expect(roomAt).toBeUndefined();

    gates[1]!.open();
    await room; // 1 running, 1 waiting
    expect(roomAt).toBeTypeOf('number');
    expect(listenerCounts(queue)).toEqual({ next: 0, active: 0, idle: 0 });

    gates[2]!.open();
    gates[3]!.open();
    await queue.drain();
    expect(queue.load).toBe(0);
  });

  it('waitForRoom returns at once when there is room', async () => {
    const queue = new TaskQueue({ concurrency: 1, maxWaiting: 2 });
    const g = gate();
    queue.add(() => g.done);
    await queue.waitForRoom();
    expect(listenerCounts(queue)).toEqual({ next: 0, active: 0, idle: 0 });
    g.open();
    await queue.drain();
  });

  it('drain waits for running and waiting tasks, rethrows the first task error, and leaves no listener behind after a garbage collection', async () => {
    const queue = new TaskQueue({ concurrency: 1 });
    const gates = Array.from({ length: 2 }, gate);
    const finished: number[] = [];
    gates.forEach((g, i) =>
      queue.add(async () => {
        await g.done;
        finished.push(i);
      }),
    );
    queue.add(() => Promise.reject(new Error('task broke')));

    let drained: unknown;
    const drain = queue.drain().then(
      () => (drained = 'resolved'),
      (error: unknown) => (drained = error),
    );
    await collectGarbage();
    expect(drained).toBeUndefined();
    gates[0]!.open();
    gates[1]!.open();
    await drain;
    expect(finished).toEqual([0, 1]);
    expect(drained).toBeInstanceOf(Error);
    expect((drained as Error).message).toBe('task broke');
    expect(listenerCounts(queue)).toEqual({ next: 0, active: 0, idle: 0 });
  });
});
