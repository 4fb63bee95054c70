import { describe, expect, it } from 'vitest';
import { TaskQueue } from '../../../src/runtime/queue.js';

function gate(): { done: Promise<void>; open: () => void } {
  let open!: () => void;
  const done = new Promise<void>((resolve) => (open = resolve));
  return { done, open };
}

const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1));

describe('TaskQueue', () => {
  it('runs at most `concurrency` tasks at once, in the order added', async () => {
    const queue = new TaskQueue({ concurrency: 2 });
    const gates = Array.from({ length: 5 }, gate);
    const started: number[] = [];
    let running = 0;
    let most = 0;
    gates.forEach((g, i) =>
      queue.add(async () => {
        started.push(i);
        most = Math.max(most, ++running);
        await g.done;
        running--;
      }),
    );
    // The first two start as they are added; the rest wait.
    expect(started).toEqual([0, 1]);
    expect(queue.load).toBe(5);

    gates[1]!.open();
    await tick();
    expect(started).toEqual([0, 1, 2]);
    gates[0]!.open();
    await tick();
    expect(started).toEqual([0, 1, 2, 3]);
    for (const g of gates) g.open();
    await queue.drain();
    expect(started).toEqual([0, 1, 2, 3, 4]);
    expect(most).toBe(2);
    expect(queue.load).toBe(0);
  });

  it('waitForRoom resolves once fewer than maxWaiting tasks wait', async () => {
    const queue = new TaskQueue({ concurrency: 1, maxWaiting: 2 });
    const gates = Array.from({ length: 4 }, gate);
    for (const g of gates) queue.add(() => g.done);
    expect(queue.load).toBe(4); // 1 running, 3 waiting

    let roomAt: number | undefined;
    const room = queue.waitForRoom().then(() => (roomAt = Date.now()));
    await tick();
    expect(roomAt).toBeUndefined();

    gates[0]!.open();
    await tick(); // 1 running, 2 waiting: still no room
    expect(roomAt).toBeUndefined();

    gates[1]!.open();
    await room; // 1 running, 1 waiting
    expect(roomAt).toBeTypeOf('number');
    expect(queue.load).toBe(2);

    gates[2]!.open();
    gates[3]!.open();
    await queue.drain();
    expect(queue.load).toBe(0);
  });

  it('waitForRoom and drain return at once when their condition already holds', async () => {
    const queue = new TaskQueue({ concurrency: 1, maxWaiting: 2 });
    await queue.drain();
    const g = gate();
    queue.add(() => g.done);
    await queue.waitForRoom();
    g.open();
    await queue.drain();
    expect(queue.load).toBe(0);
  });

  it('drain waits for running and waiting tasks and rethrows the first task error, after every task ran', async () => {
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
    queue.add(() => {
      throw new Error('second, thrown before any await');
    });
    queue.add(async () => {
      finished.push(4);
    });

    let drained: unknown;
    const drain = queue.drain().then(
      () => (drained = 'resolved'),
      (error: unknown) => (drained = error),
    );
    await tick();
    expect(drained).toBeUndefined();
    gates[0]!.open();
    gates[1]!.open();
    await drain;
    expect(finished).toEqual([0, 1, 4]);
    expect(drained).toBeInstanceOf(Error);
    expect((drained as Error).message).toBe('task broke');
  });

  it('clear drops the waiting tasks, lets the running ones finish, and wakes a waiting producer', async () => {
    const queue = new TaskQueue({ concurrency: 1, maxWaiting: 1 });
    const g = gate();
    const ran: number[] = [];
    queue.add(async () => {
      await g.done;
      ran.push(0);
    });
    for (let i = 1; i <= 3; i++) queue.add(async () => void ran.push(i));
    const room = queue.waitForRoom();
    queue.clear();
    await room;
    expect(queue.load).toBe(1);
    g.open();
    await queue.drain();
    expect(ran).toEqual([0]);
    // Still usable after a clear.
    queue.add(async () => void ran.push(9));
    await queue.drain();
    expect(ran).toEqual([0, 9]);
  });

  it('starts thousands of waiting tasks in the order they were added', async () => {
    const queue = new TaskQueue({ concurrency: 3, maxWaiting: 5000 });
    const order: number[] = [];
    for (let i = 0; i < 5000; i++)
      queue.add(async () => {
        await Promise.resolve();
        order.push(i);
      });
    await queue.drain();
    expect(order).toHaveLength(5000);
    // Three lanes finish in start order here (each task awaits the same one tick).
    expect(order).toEqual(Array.from({ length: 5000 }, (_, i) => i));
  });

  it('refuses a concurrency that is not a whole number of at least 1', () => {
    expect(() => new TaskQueue({ concurrency: 0 })).toThrow(/concurrency must be a whole number ≥ 1, got 0/);
    expect(() => new TaskQueue({ concurrency: 1.5 })).toThrow(/got 1.5/);
  });
});
