/**
 * What the sync benchmark's child processes (sync-child.ts, bare-undici-loop.ts) share: timing a
 * piece of work with its CPU time per thread, listing and fetching items on lanes, and the one JSON line each
 * prints for the parent.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { ownPeakRssMb } from './peak-rss.js';

/** CPU ms by thread: the main thread, the busiest other thread and the rest summed. */
export interface ThreadCpu {
  mainMs: number;
  busiestOtherMs: number;
  restMs: number;
}

/** Wall and CPU time of a piece of work (see {@link measured}). */
export interface Measured<T> {
  value: T;
  elapsedMs: number;
  /** CPU time of this process, all its threads, during the work. */
  cpuMs: number;
  /** The same by thread (Linux only, else null). */
  threads: ThreadCpu | null;
}

/** Runs `work`, timing it by the wall clock, by CPU and by thread. */
export async function measured<T>(work: () => Promise<T>): Promise<Measured<T>> {
  const started = performance.now();
  const cpuStart = process.cpuUsage();
  const stopThreads = sampleThreads();
  const value = await work();
  const elapsedMs = performance.now() - started;
  const used = process.cpuUsage(cpuStart);
  return { value, elapsedMs, cpuMs: (used.user + used.system) / 1000, threads: stopThreads() };
}

/**
 * Lists and fetches at once, as a sync does: `pages` is read in the background, page after page,
 * while `concurrency` lanes fetch the items listed so far, each lane taking the next item and
 * waiting for the listing when it has caught up. Resolves with the number of items once every
 * page was read and every item fetched. The listing's requests share the fetches' connections.
 */
export async function onLanesWhileListing<T>(
  pages: AsyncIterable<readonly T[]>,
  concurrency: number,
  fetch: (item: T) => Promise<unknown>,
): Promise<number> {
  const items: T[] = [];
  let listed = false;
  let wake: Array<() => void> = [];
  const wakeAll = (): void => {
    const waiting = wake;
    wake = [];
    for (const resume of waiting) resume();
  };
  const listing = (async (): Promise<void> => {
    try {
      for await (const page of pages) {
        items.push(...page);
        wakeAll();
      }
    } finally {
      listed = true;
      wakeAll();
    }
  })();
  let next = 0;
  const lane = async (): Promise<void> => {
    for (;;) {
      if (next < items.length) await fetch(items[next++]!);
      else if (listed) return;
      else await new Promise<void>((resume) => wake.push(resume));
    }
  };
  await Promise.all([listing, ...Array.from({ length: concurrency }, lane)]);
  return items.length;
}

/**
 * {@link onLanesWhileListing}, {@link measured}: the wall, CPU and per-thread time of listing and
 * fetching, from the first request to the last, and the number of profiles, as a baseline child
 * prints them.
 */
export async function measureListingAndFetching<T>(
  pages: AsyncIterable<readonly T[]>,
  concurrency: number,
  fetch: (item: T) => Promise<unknown>,
): Promise<Omit<Measured<number>, 'value'> & { profiles: number }> {
  const { value, ...times } = await measured(() => onLanesWhileListing(pages, concurrency, fetch));
  return { ...times, profiles: value };
}

/** Prints the child's one JSON line for the parent, with this process's own peak RSS. */
export function printResult(fields: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ ...fields, maxRssMb: ownPeakRssMb() })}\n`);
}

/** Runs a child's `main`; an error goes to stderr with its stack and exits 1. */
export function runChildMain(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
}

/**
 * CPU ms per thread of this process (Linux /proc), sampled until stopped: the main thread, the
 * busiest other thread (the sync's mirror writer) and the rest (GC helpers, libuv) summed.
 */
export function sampleThreads(): () => ThreadCpu | null {
  const seen = new Map<string, number>();
  const sample = (): void => {
    try {
      for (const tid of readdirSync('/proc/self/task')) {
        const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        seen.set(tid, (Number(fields[11]) + Number(fields[12])) * 10);
      }
    } catch {
      // not Linux, or a thread ended between readdir and read
    }
  };
  sample();
  const start = new Map(seen);
  const timer = setInterval(sample, 100);
  return () => {
    clearInterval(timer);
    sample();
    if (seen.size === 0) return null;
    const used = [...seen].map(([tid, ms]) => ({ tid, ms: ms - (start.get(tid) ?? 0) }));
    const main = used.find((t) => t.tid === String(process.pid))?.ms ?? 0;
    const others = used.filter((t) => t.tid !== String(process.pid)).sort((a, b) => b.ms - a.ms);
    return {
      mainMs: main,
      busiestOtherMs: others[0]?.ms ?? 0,
      restMs: others.slice(1).reduce((sum, t) => sum + t.ms, 0),
    };
  };
}
