import PQueue from 'p-queue';

/** Options of {@link TaskQueue}. */
export interface TaskQueueOptions {
  /** Tasks running at once. */
  concurrency: number;
  /** Tasks started per `intervalMs` at most. @default unlimited */
  intervalCap?: number;
  /** @default 1000 */
  intervalMs?: number;
  /** Waiting tasks above which {@link TaskQueue.waitForRoom} blocks. @default concurrency × 4 */
  maxWaiting?: number;
}

/**
 * The p-queue set-up every pipeline uses (the only import of p-queue outside the API client):
 * bounded concurrency, optional rate cap, backpressure so producers never build an unbounded
 * backlog, and a drain that surfaces the first unexpected task error.
 */
export class TaskQueue {
  private readonly queue: PQueue;
  private readonly maxWaiting: number;
  private firstError: unknown;

  constructor(options: TaskQueueOptions) {
    this.queue = new PQueue({
      concurrency: options.concurrency,
      ...(options.intervalCap
        ? { intervalCap: options.intervalCap, interval: options.intervalMs ?? 1000 }
        : {}),
    });
    this.maxWaiting = options.maxWaiting ?? options.concurrency * 4;
  }

  /**
   * Adds a task. A task should handle its own item failures; an error it throws anyway is kept
   * and rethrown by {@link drain}, and never becomes an unhandled rejection.
   */
  add(task: () => Promise<void>): void {
    this.queue.add(task).catch((error: unknown) => {
      this.firstError ??= error;
    });
  }

  /** Resolves when there is room for more tasks (backpressure for producers). */
  async waitForRoom(): Promise<void> {
    await waitForQueue(this.queue, ['next', 'active'], () => this.queue.size < this.maxWaiting);
  }

  /** Drops every task not yet started (running ones finish). */
  clear(): void {
    this.queue.clear();
  }

  /** Waits for every task to finish; rethrows the first unexpected task error. */
  async drain(): Promise<void> {
    await waitForQueue(this.queue, ['idle'], () => this.queue.size === 0 && this.queue.pending === 0);
    if (this.firstError !== undefined) throw this.firstError;
  }

  /** Tasks waiting + running. */
  get load(): number {
    return this.queue.size + this.queue.pending;
  }
}

/**
 * Resolves at once if `done()` holds, else at the first of `events` on `queue` after which it
 * does, and then removes its listener itself.
 *
 * Not p-queue's own `onSizeLessThan` / `onIdle`: they remove their listener through
 * `addEventListener`'s `signal` option, and Node's EventTarget holds that removal only weakly, so a
 * garbage collection while they wait leaves their listener on the queue for good
 * (nodejs/node#63954, seen on Node 22 and 24). Every later event then calls it, and each call
 * aborts its AbortController again, which builds a new DOMException. A sync waits once per listing
 * page, so its queue gathered one such listener per page, and their cost grew with the catalogue:
 * about 10,600 DOMExceptions (76 ms) in a 20,000-domain sync.
 */
function waitForQueue(
  queue: PQueue,
  events: ReadonlyArray<'next' | 'active' | 'idle'>,
  done: () => boolean,
): Promise<void> {
  if (done()) return Promise.resolve();
  return new Promise((resolve) => {
    const listener = (): void => {
      if (!done()) return;
      for (const event of events) queue.removeEventListener(event, listener);
      resolve();
    };
    for (const event of events) queue.addEventListener(event, listener);
  });
}
