import { createClient } from '../../../src/api/index.js';
import type { ClientOptions, DomainServiceClient } from '../../../src/api/index.js';
import { startSimulator } from '../../../src/simulator/index.js';
import type { RunningSimulator, SimulatorOptions, TruthProfile } from '../../../src/simulator/index.js';
import { startMutatingProxy } from './proxy.js';
import type { MutatingProxy } from './proxy.js';

/** A simulator with the mutating proxy in front of it; one per test file (speed). */
export interface ProxiedSimulator {
  sim: RunningSimulator;
  proxy: MutatingProxy;
  /** A client to the proxy; schema errors must not be retried, so retries are allowed but cost no wait. */
  client(options?: Partial<ClientOptions>): DomainServiceClient;
  close(): Promise<void>;
}

/** Starts a simulator and a proxy in front of it. Close it in `afterAll`. */
export async function startProxiedSimulator(options: SimulatorOptions): Promise<ProxiedSimulator> {
  const sim = await startSimulator(options);
  const proxy = await startMutatingProxy(sim.origin);
  const clients: DomainServiceClient[] = [];
  return {
    sim,
    proxy,
    client(overrides = {}) {
      const c = createClient({
        baseUrl: proxy.baseUrl,
        apiKey: sim.apiKey,
        requestsPerSecond: Infinity,
        maxRetries: 2,
        random: () => 0.5,
        sleep: async () => {},
        ...overrides,
      });
      clients.push(c);
      return c;
    },
    async close() {
      await Promise.all(clients.map((c) => c.close()));
      await proxy.close();
      await sim.close();
    },
  };
}

/**
 * A domain of the catalogue with at least two licences and two payment methods, chosen by that
 * property (not by list position), so a rejected profile could visibly leave a partial licence.
 */
export function richDomain(sim: RunningSimulator, except: readonly string[] = []): string {
  const found = sim.control.truth
    .listDomains()
    .find((d) => !except.includes(d) && isRich(sim.control.truth.profile(d)));
  if (found === undefined) throw new Error('no domain with two licences and two payment methods');
  return found;
}

function isRich(p: TruthProfile | undefined): boolean {
  return p !== undefined && p.licenses.length >= 2 && p.payment_methods.length >= 2;
}
