/** Options of {@link TaskQueue}. */
export interface TaskQueueOptions {
  /** Tasks running at once. */
  concurrency: number;
  /** Waiting tasks above which {@link TaskQueue.waitForRoom} blocks. @default concurrency × 4 */
  maxWaiting?: number;
}

type Task = () => Promise<void>;

/**
 * The task queue every pipeline uses: at most `concurrency` tasks running, the rest waiting in
 * the order added, backpressure so producers never build an unbounded backlog, and a drain that
 * surfaces the first unexpected task error.
 *
 * A counter and a FIFO rather than p-queue (which this was until 2026-11-28): a sync runs one task
 * per profile, and p-queue's per-task work (an options object, an id string, a promise, an
 * async-context binding, events for every start and end) cost the sync's main thread about 6 %
 * of its CPU, and a tenth of what it allocated per profile (docs/benchmarks.md "sync"). None of
 * what that buys (rate caps, priorities, timeouts, pausing) is used here.
 */
export class TaskQueue {
  private readonly concurrency: number;
  private readonly maxWaiting: number;
  /**
   * Waiting tasks: `waiting[head]` starts next. A head index, not `shift()`: V8's `shift()` moves
   * the whole array once it is large (taking 100,000 tasks off an array one by one took 0.8 s on
   * Node 24; a million had not finished after two minutes), and an enrich adds every run it resumes at once.
   */
  private waiting: Array<Task | undefined> = [];
  private head = 0;
  private running = 0;
  private firstError: unknown;
  /** Callers of waitForRoom and drain, each woken (and dropped) once its condition holds. */
  private waiters: Array<{ done: () => boolean; resolve: () => void }> = [];

  constructor(options: TaskQueueOptions) {
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1)
      throw new RangeError(`concurrency must be a whole number ≥ 1, got ${options.concurrency}`);
    this.concurrency = options.concurrency;
    this.maxWaiting = options.maxWaiting ?? options.concurrency * 4;
  }

  /**
   * Adds a task; it starts at once when fewer than `concurrency` run. A task should handle its own
   * item failures; an error it throws anyway is kept and rethrown by {@link drain}, and never
   * becomes an unhandled rejection.
   */
  add(task: Task): void {
    this.waiting.push(task);
    this.startWaiting();
  }

  /** Resolves when fewer than `maxWaiting` tasks wait (backpressure for producers). */
  waitForRoom(): Promise<void> {
    return this.when(() => this.size < this.maxWaiting);
  }

  /** Drops every task not yet started (running ones finish). */
  clear(): void {
    this.waiting = [];
    this.head = 0;
    this.wake();
  }

  /** Waits for every task to finish; rethrows the first unexpected task error. */
  async drain(): Promise<void> {
    await this.when(() => this.size === 0 && this.running === 0);
    if (this.firstError !== undefined) throw this.firstError;
  }

  /** Tasks waiting + running. */
  get load(): number {
    return this.size + this.running;
  }

  private get size(): number {
    return this.waiting.length - this.head;
  }

  private startWaiting(): void {
    while (this.running < this.concurrency && this.head < this.waiting.length) {
      const task = this.waiting[this.head]!;
      this.waiting[this.head++] = undefined;
      if (this.head === this.waiting.length) {
        this.waiting = [];
        this.head = 0;
      } else if (this.head >= 1024 && this.head * 2 >= this.waiting.length) {
        // Drop the started tasks' slots now and then, so a long run's array stays short.
        this.waiting = this.waiting.slice(this.head);
        this.head = 0;
      }
      this.running++;
      void this.run(task);
    }
  }

  private async run(task: Task): Promise<void> {
    try {
      await task();
    } catch (error) {
      this.firstError ??= error;
    } finally {
      this.running--;
      this.startWaiting();
      this.wake();
    }
  }

  private when(done: () => boolean): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ done, resolve }));
  }

  private wake(): void {
    if (this.waiters.length === 0) return;
    const still: typeof this.waiters = [];
    for (const waiter of this.waiters) {
      if (waiter.done()) waiter.resolve();
      else still.push(waiter);
    }
    this.waiters = still;
  }
}
