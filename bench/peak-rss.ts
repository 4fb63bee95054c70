import { readFileSync } from 'node:fs';

/**
 * This process's own peak RSS, in MB, for the benchmarks' children.
 *
 * Not `process.resourceUsage().maxRSS`: Linux keeps getrusage's maxrss across exec, so a child
 * reports at least the RSS its parent had when it spawned it. Measured here: a child whose own
 * peak was 41 MB reported 306 MB when its parent held 349 MB. A benchmark parent that has run
 * other benchmarks (or holds the simulator) can be that large, and then every child "peaks" at
 * the parent's size. `VmHWM` in /proc/self/status is the high-water mark of this process's own
 * memory (worker threads included). maxRSS only where there is no /proc.
 */
export function ownPeakRssMb(): number {
  try {
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (match) return Number(match[1]) / 1024;
  } catch {
    // not Linux: fall through
  }
  return process.resourceUsage().maxRSS / 1024;
}
