/** Per-thread CPU time of the benchmarks' child processes (Linux /proc). */
import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU ms per thread of this process (Linux /proc), sampled until stopped: the main thread, the
 * busiest other thread (the sync's mirror writer) and the rest (GC helpers, libuv) summed.
 */
export function sampleThreads(): () => { mainMs: number; busiestOtherMs: number; restMs: number } | null {
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
