import { onTestFinished } from 'vitest';
import { startSimulator } from '../../src/simulator/index.js';
import type { RunningSimulator, SimulatorOptions } from '../../src/simulator/index.js';

/**
 * Starts a simulator for the current test and closes it when the test finishes, so tests never
 * leak servers. Options are passed to `startSimulator` unchanged (same defaults).
 */
export async function startTestSimulator(options?: SimulatorOptions): Promise<RunningSimulator> {
  const sim = await startSimulator(options);
  onTestFinished(() => sim.close());
  return sim;
}
