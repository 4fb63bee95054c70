import type { FaultRule } from '../../../src/simulator/index.js';

/**
 * The chaos soak's one rule set: every fault kind of the simulator (docs/simulator.md "Fault
 * injection") at once, on GETs and POSTs, each with a probability drawn from the simulator's
 * seeded PRNG. Rules are checked in order; every matching `latency` rule adds its delay and the
 * first other matching rule is delivered, so the chance that a request is faulted is about
 * 1 − Π(1 − p) over the non-latency rules that match it (≈ 17 % of GETs, ≈ 26 % of POSTs).
 *
 * Each 5xx rule has its own status so the usage log tells them apart:
 * 503 = with `Retry-After`, 500 = without, 502 = a POST processed and its answer replaced.
 */
export const CHAOS_FAULTS: readonly FaultRule[] = [
  // Latency spikes: short ones on anything, and rare ones longer than the client's timeout
  // (CHAOS_CONFIG api.timeoutMs) on GETs, which then time out and are retried.
  { kind: 'latency', latencyMs: 250, probability: 0.03 },
  { kind: 'latency', method: 'GET', latencyMs: 2_500, probability: 0.003 },
  // POSTs processed first (credits billed, run or export created), then the answer lost:
  // the ambiguous outcomes the product must never pay for twice. The first POST of each kind
  // surely gets one, so that even the short soak of `npm test` meets both.
  { kind: 'reset', method: 'POST', path: '/enrichments', afterProcessing: true, times: 1 },
  { kind: 'status', status: 502, method: 'POST', path: '/exports', afterProcessing: true, times: 1 },
  { kind: 'reset', method: 'POST', afterProcessing: true, probability: 0.04 },
  { kind: 'status', status: 502, method: 'POST', afterProcessing: true, probability: 0.03 },
  { kind: 'truncate', method: 'POST', afterProcessing: true, probability: 0.02 },
  // Faults before any effect, on every method.
  { kind: 'status', status: 503, retryAfterSeconds: 1, probability: 0.03 },
  { kind: 'status', status: 500, probability: 0.04 },
  { kind: 'rate_limit', probability: 0.03 },
  { kind: 'reset', probability: 0.02 },
  { kind: 'truncate', probability: 0.02 },
  // `malformed` everywhere, export polls and downloads included: a garbled download is saved,
  // refused by the load and downloaded again by the next run (malformed-download.test.ts).
  { kind: 'malformed', method: 'POST', probability: 0.02 },
  { kind: 'malformed', method: 'GET', path: '/domains', probability: 0.02 },
  { kind: 'malformed', method: 'GET', path: '/enrichment_runs', probability: 0.02 },
  { kind: 'malformed', method: 'GET', path: '/account', probability: 0.02 },
  { kind: 'malformed', method: 'GET', path: '/exports', probability: 0.02 },
];

/** The 5xx statuses of {@link CHAOS_FAULTS}, for the report. */
export const STATUS_LABELS: Readonly<Record<number, string>> = {
  503: '503 with Retry-After',
  500: '500 without Retry-After',
  502: '502 after processing (POST)',
};

/**
 * Config overrides of the soak (the product's own keys; product defaults are untouched):
 * retries as configured by users, a short timeout so that the long latency spikes time out,
 * fast polling so that runs of 0.3–1.2 s (time scale 0.01) settle quickly.
 */
export const CHAOS_CONFIG = {
  api: { maxRetries: 3, timeoutMs: 2_000, pollIntervalMs: 20, concurrency: 8, requestsPerSecond: 100_000 },
  enrich: { maxPollIntervalMs: 100, staleAfter: '30d', concurrency: 4 },
  exports: { pollDeadline: '2m' },
};
