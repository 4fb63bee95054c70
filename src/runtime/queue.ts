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
    if (this.queue.size >= this.maxWaiting) await this.queue.onSizeLessThan(this.maxWaiting);
  }

  /** Drops every task not yet started (running ones finish). */
  clear(): void {
    this.queue.clear();
  }

  /** Waits for every task to finish; rethrows the first unexpected task error. */
  async drain(): Promise<void> {
    await this.queue.onIdle();
    if (this.firstError !== undefined) throw this.firstError;
  }

  /** Tasks waiting + running. */
  get load(): number {
    return this.queue.size + this.queue.pending;
  }
}
