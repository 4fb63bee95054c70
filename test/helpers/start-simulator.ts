import { onTestFinished } from 'vitest';
import { startSimulator } from '../../src/simulator/index.js';
import type { RunningSimulator, SimulatorOptions } from '../../src/simulator/index.js';
import { registerKey } from '../resilience/security/artifacts.js';

/**
 * Starts a simulator for the current test and closes it when the test finishes, so tests never
 * leak servers. Options are passed to `startSimulator` unchanged (same defaults).
 */
export async function startTestSimulator(options?: SimulatorOptions): Promise<RunningSimulator> {
  const sim = await startSimulator(options);
  // Every key the simulator accepts is one the suite-wide key scan looks for.
  if (options?.apiKeys && options.apiKeys.length > 0)
    for (const key of options.apiKeys) registerKey(key, 'simulator');
  else registerKey(sim.apiKey, 'simulator-default');
  onTestFinished(() => sim.close());
  return sim;
}

/**
 * Runs `work` (a sync, say) while the simulator refuses the key (401) from listing page `page` on,
 * as a service that revokes a key mid-run does, then lifts the fault: `work` is stopped part-way.
 */
export async function whileKeyRefusedFromListPage<T>(
  sim: RunningSimulator,
  page: number,
  work: () => Promise<T>,
): Promise<T> {
  sim.control.onListPage(async (p) => {
    if (p === page) sim.control.setFaults([{ kind: 'status', status: 401 }]);
  });
  try {
    return await work();
  } finally {
    sim.control.onListPage(null);
    sim.control.clearFaults();
  }
}
