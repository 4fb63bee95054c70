/**
 * A log that keeps its most recent `limit` entries: the simulator's usage and request logs
 * (`SimulatorOptions.logLimit`), which get one entry per request and would otherwise grow
 * for as long as a simulator runs. Trimmed a tenth of the limit at a time, so the copying costs a
 * few element moves per entry; until the next trim the array holds up to that many more, which
 * {@link BoundedLog.entries} leaves out.
 */
export class BoundedLog<T> {
  readonly limit: number;
  #entries: T[] = [];

  constructor(limit: number) {
    this.limit = limit;
  }

  push(entry: T): void {
    this.#entries.push(entry);
    if (this.#entries.length > this.limit + Math.max(1, Math.floor(this.limit / 10)))
      this.#entries.splice(0, this.#entries.length - this.limit);
  }

  /** The most recent `limit` entries, oldest first. */
  entries(): readonly T[] {
    const all = this.#entries;
    return all.length > this.limit ? all.slice(all.length - this.limit) : all;
  }

  clear(): void {
    this.#entries = [];
  }

  /** Entries the array holds, those waiting for the next trim included (for tests). */
  get held(): number {
    return this.#entries.length;
  }
}
