import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
// The bare baseline needs undici itself; only this benchmark and src/api/http-transport.ts send through it.
import { Agent, request } from 'undici';
import { createClient } from '../src/api/index.js';
import { startSimulator } from '../src/simulator/index.js';
import { median } from './stats.js';

/** One concurrency level of {@link runClientBench}. */
export interface ClientBenchRow {
  /** Requests in flight. */
  concurrency: number;
  /** Profile GETs per second through `DomainServiceClient.getDomain` (validated, limited, logged). */
  clientRps: number;
  /** Profile GETs per second through a bare `undici.request` loop (JSON parsed, nothing else). */
  bareRps: number;
  /** The median over rounds of `client rps / bare rps`, each round measuring both back to back. */
  ratio: number;
  /** Each round's `client rps / bare rps`, in the order measured (3 decimals). */
  roundRatios: number[];
  /** The ratio the client should reach. */
  target: 0.9;
}

/** Result of {@link runClientBench}. */
export interface BenchResult {
  name: 'client';
  /** Catalogue size of the simulator. */
  domains: number;
  /** Measuring time per mode and concurrency (split into {@link ROUNDS} interleaved rounds), after a warm-up. */
  durationMs: number;
  rows: ClientBenchRow[];
}

/** Options of {@link runClientBench}. */
export interface ClientBenchOptions {
  /**
   * Measuring time per cell in ms.
   * @default 45000
   */
  durationMs?: number;
  /**
   * Concurrency levels.
   * @default [1, 8, 32]
   */
  concurrencies?: number[];
  /**
   * Catalogue size.
   * @default 5000
   */
  domains?: number;
}

/**
 * Interleaved rounds per mode and concurrency, of about a second each (the default durationMs).
 * 45 rather than the 7 of 2026-11-25 and the 15 of the morning of 2026-11-27: on a shared 2-core
 * machine single rounds measured from 0.5 to 1.4 of the bare loop that day, the median of 7 at
 * concurrency 8 from 0.78 to 1.02 over eleven runs of the same code, and the median of 15 at
 * concurrency 1 0.93 and 0.85 in two runs that evening, where a CPU profile put our client at
 * 0.93 of the bare loop (docs/benchmarks.md "client").
 */
export const ROUNDS = 45;

/** A mode's request: the `i`th of a run (each mode cycles through the catalogue). */
export type Worker = (i: number) => Promise<void>;

/** Runs `worker` on `concurrency` lanes for `durationMs`; returns the requests completed and the ms taken. */
export async function runLanes(
  concurrency: number,
  durationMs: number,
  worker: Worker,
): Promise<{ requests: number; ms: number }> {
  let next = 0;
  let requests = 0;
  const started = performance.now();
  const until = started + durationMs;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        await worker(next++);
        requests++;
      }
    }),
  );
  return { requests, ms: performance.now() - started };
}

/** {@link runLanes} as completed requests per second. */
async function measure(concurrency: number, durationMs: number, worker: Worker): Promise<number> {
  const { requests, ms } = await runLanes(concurrency, durationMs, worker);
  return requests / (ms / 1000);
}

/**
 * The benchmark's two modes at one concurrency, against `sim`: `bare`, a bare `undici.request`
 * of the profile whose body is parsed as JSON, and `client`, our client's `getDomain` with its
 * rate limit off and its concurrency at the level measured. `close` closes both.
 */
export function clientBenchModes(
  sim: { baseUrl: string; apiKey: string },
  domains: readonly string[],
  concurrency: number,
): { bare: Worker; client: Worker; close: () => Promise<void> } {
  const agent = new Agent({ connections: concurrency, pipelining: 1 });
  const client = createClient({
    baseUrl: sim.baseUrl,
    apiKey: sim.apiKey,
    concurrency,
    requestsPerSecond: Infinity,
    maxRetries: 0,
  });
  return {
    bare: async (i) => {
      const domain = domains[i % domains.length]!;
      const response = await request(`${sim.baseUrl}/domains/${encodeURIComponent(domain)}`, {
        dispatcher: agent,
        headers: { 'x-api-key': sim.apiKey, accept: 'application/json' },
      });
      if (response.statusCode !== 200) throw new Error(`bare request: status ${response.statusCode}`);
      await response.body.json();
    },
    client: async (i) => {
      await client.getDomain(domains[i % domains.length]!);
    },
    close: async () => {
      await client.close();
      await agent.close();
    },
  };
}

/**
 * Measures profile GETs per second through our client against a bare `undici.request` loop, at
 * the same concurrency (1, 8, 32), in one run against the same simulator (5,000 domains). The
 * client's rate limit is disabled (`requestsPerSecond: Infinity`) and its concurrency set to
 * the level measured, so the numbers show the cost of validation, the limiter, the retry
 * wrapper and the request log, not of a configured limit. Both modes are warmed up, then
 * measured in {@link ROUNDS} interleaved rounds each and reported as medians (the ratio as the median of the
 * rounds' own ratios), since shared machines drift.
 * Client and simulator share one process, so the ratio also counts the simulator's CPU.
 */
export async function runClientBench(options: ClientBenchOptions = {}): Promise<BenchResult> {
  const durationMs = options.durationMs ?? 45000;
  const concurrencies = options.concurrencies ?? [1, 8, 32];
  const domainCount = options.domains ?? 5000;
  const sim = await startSimulator({ domains: domainCount, seed: 7 });
  const domains = sim.control.truth.listDomains();
  const rows: ClientBenchRow[] = [];
  try {
    for (const [index, concurrency] of concurrencies.entries()) {
      const { bare, client: viaClient, close } = clientBenchModes(sim, domains, concurrency);
      try {
        // Shared machines are noisy: measure in short interleaved rounds (alternating which mode
        // goes first) and keep the median of each mode, after a warm-up of both.
        // The warm-up is long enough for the JIT to settle on both paths: with 400 ms the first
        // level measured (concurrency 1) still paid for compiling the client's deeper code.
        const roundMs = Math.max(100, Math.round(durationMs / ROUNDS));
        await measure(concurrency, 1500, bare);
        await measure(concurrency, 1500, viaClient);
        const bareRuns: number[] = [];
        const clientRuns: number[] = [];
        for (let round = 0; round < ROUNDS; round++) {
          if ((round + index) % 2 === 0) {
            bareRuns.push(await measure(concurrency, roundMs, bare));
            clientRuns.push(await measure(concurrency, roundMs, viaClient));
          } else {
            clientRuns.push(await measure(concurrency, roundMs, viaClient));
            bareRuns.push(await measure(concurrency, roundMs, bare));
          }
        }
        const bareRps = median(bareRuns);
        const clientRps = median(clientRuns);
        // The ratio is the median of each round's own ratio: the two halves of a round run back
        // to back, so drift of a shared machine (another process waking up for a few seconds)
        // moves both, where a ratio of two medians can pair a quiet second with a busy one.
        const roundRatios = clientRuns.map((c, i) => c / bareRuns[i]!);
        const ratio = median(roundRatios);
        rows.push({
          concurrency,
          clientRps: Math.round(clientRps),
          bareRps: Math.round(bareRps),
          ratio: Math.round(ratio * 1000) / 1000,
          roundRatios: roundRatios.map((r) => Math.round(r * 1000) / 1000),
          target: 0.9,
        });
      } finally {
        await close();
      }
    }
  } finally {
    await sim.close();
  }
  return { name: 'client', domains: domainCount, durationMs, rows };
}

// Runnable on its own: `node dist/bench/client.js` prints the result as JSON.
const entry = process.argv[1];
if (entry && import.meta.url === pathToFileURL(realpathSync(entry)).href) {
  runClientBench()
    .then((result) => console.log(JSON.stringify(result, null, 2)))
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    });
}
