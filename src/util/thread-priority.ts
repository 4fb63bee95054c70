import { getPriority, setPriority } from 'node:os';

/** The highest nice value (lowest scheduling priority) an unprivileged process may take. */
const LOWEST_PRIORITY = 19;

/**
 * Lowers the scheduling priority of the calling thread by `steps` (a whole number ≥ 0) nice
 * values, capped at 19, and returns the thread's nice value after it; undefined where that cannot
 * be done for one thread alone.
 *
 * On Linux a nice value belongs to a thread: `setpriority(PRIO_PROCESS, 0, …)`, which
 * `os.setPriority(0, …)` calls, changes only the calling thread, so a worker thread can step back
 * while the process's other threads keep theirs. Elsewhere (macOS, Windows) the same call changes
 * the whole process, so this does nothing there. Lowering one's own priority needs no privilege;
 * a refusal anyway (a sandbox) leaves the priority as it was.
 */
export function lowerThreadPriority(steps: number): number | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    setPriority(0, Math.min(LOWEST_PRIORITY, getPriority(0) + steps));
    return getPriority(0);
  } catch {
    return undefined;
  }
}
