import type { DomainSummary } from '../src/api/index.js';
import type { ProfileWriter, WriterFailure } from '../src/mirror/profile-writer.js';
import { isoFromMs } from '../src/util/time.js';

/** What {@link SyncWrites} needs from the sync it writes for. */
export interface SyncWritesOptions {
  /** Profiles per write request at most (the writer sorts each by domain). */
  batchSize: number;
  /** The run's clock, ms. */
  clock: () => number;
  /** A profile the mirror refused (bad timestamp, missing key, a body that is not the profile). */
  onRefused: (failure: WriterFailure) => void;
  /** A write the writer could not do at all (the database, not an item): the run must stop. */
  onStop: (error: unknown) => void;
}

/**
 * Every write a sync asks of its mirror writer (src/mirror/profile-writer.ts), and the handling
 * of their answers. Listing pages and run stats go as they come. Fetched profiles are kept as the
 * response texts they arrived in and sent in batches: when a batch is full, a second after the
 * last one, or when {@link sendBuffered} is called. Flat strings are cheap for the scavenger to
 * copy; a batch of object graphs survived every young-generation collection until sent
 * (docs/benchmarks.md "sync").
 */
export class SyncWrites {
  private readonly writer: ProfileWriter;
  private readonly options: SyncWritesOptions;
  private texts: string[] = [];
  /** The domain of each buffered text: the writer's sort keys, and how it names a failure. */
  private domains: string[] = [];
  private lastSentMs: number;
  /** Writes sent whose answers are not handled yet. */
  private readonly writes = new Set<Promise<void>>();

  constructor(writer: ProfileWriter, options: SyncWritesOptions) {
    this.writer = writer;
    this.options = options;
    this.lastSentMs = options.clock();
  }

  /** Profiles fetched and not yet sent to the writer. */
  get buffered(): number {
    return this.texts.length;
  }

  /** Upserts a listing page (applied in order with the writes before it). */
  summaries(summaries: readonly DomainSummary[]): void {
    this.track(this.writer.writeSummaries(summaries, isoFromMs(this.options.clock())));
  }

  /**
   * Saves a run's progress stats through the writer thread, in order with the writes before it:
   * the fetching thread must not wait for the mirror's write lock while requests are in flight.
   */
  runStats(runId: number, stats: Record<string, unknown>): void {
    this.track(this.writer.writeRunStats(runId, stats));
  }

  /** Buffers a fetched profile's text, and sends the buffer when a batch is due. */
  profile(domain: string, text: string): void {
    this.texts.push(text);
    this.domains.push(domain);
    const now = this.options.clock();
    if (this.texts.length >= this.options.batchSize || now - this.lastSentMs >= 1000) this.sendBuffered();
  }

  /** Sends the buffered profiles, if any. */
  sendBuffered(): void {
    if (this.texts.length === 0) return;
    const now = this.options.clock();
    const texts = this.texts;
    const keys = this.domains;
    this.texts = [];
    this.domains = [];
    this.lastSentMs = now;
    this.track(
      this.writer.writeProfileTexts({ texts, keys }, isoFromMs(now)).then((result) => {
        for (const failure of result.failures) this.options.onRefused(failure);
      }),
    );
  }

  /** Resolves when the writer has room for more: fetching must not outrun writing. */
  waitForRoom(): Promise<void> {
    return this.writer.waitForRoom();
  }

  /**
   * Waits until every write asked for is committed or refused AND its answer handled (refused
   * profiles reported): the writer's own drain can resolve before those handlers run. A commit
   * that failed stops the run.
   */
  async settle(): Promise<void> {
    try {
      // The writer answers a write once applied in its open transaction; this commits them.
      await this.writer.drain();
    } catch (error) {
      this.options.onStop(error);
    }
    while (this.writes.size > 0) await Promise.all([...this.writes]);
  }

  /** Keeps a write (and what runs on its answer) until {@link settle}. */
  private track(write: Promise<unknown>): void {
    const settled = write.then(
      () => undefined,
      (error: unknown) => this.options.onStop(error),
    );
    this.writes.add(settled);
    void settled.then(() => this.writes.delete(settled));
  }
}
