import { join } from 'node:path';
import { syncPipeline } from '../../../pipelines/sync.js';
import type { LogFields, Logger } from '../../../src/log/logger.js';
import { MemoryLogger } from '../../../src/log/logger.js';
import type { RunningSimulator, SimulatorOptions, UsageEntry } from '../../../src/simulator/index.js';
import { queryMirror } from '../../helpers/mirror.js';
import { startTestSimulator } from '../../helpers/start-simulator.js';
import { openTestContext } from '../../helpers/test-context.js';

/** Config overrides for enrich tests: fast polls at time scale 0.01 (runs of 0.3–1.2 s). */
export const FAST_ENRICH_CONFIG = {
  api: { pollIntervalMs: 20 },
  enrich: { maxPollIntervalMs: 100 },
};

/**
 * A simulator plus a synced mirror in a temp dir. `cachedCount` domains, the oldest in the mirror,
 * are then re-enriched in the simulator only: the mirror still calls them stale, the service
 * answers them from cache (0 credits).
 */
export async function syncedSetup(
  simOptions: SimulatorOptions,
  options: { cachedCount?: number; config?: Record<string, unknown>; clock?: () => number } = {},
) {
  const sim = await startTestSimulator({ timeScale: 0.01, runFailureRate: 0, ...simOptions });
  const ctx = await openTestContext(sim, {
    config: { ...FAST_ENRICH_CONFIG, ...(options.config ?? {}) },
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const synced = await syncPipeline(ctx);
  if (synced.status !== 'done') throw new Error(`sync failed: ${JSON.stringify(synced.error)}`);
  const oldest = queryMirror<{ domain_normalized: string }>(
    ctx.mirror.path,
    'SELECT domain_normalized FROM domains ORDER BY last_enriched_at, domain_normalized LIMIT ?',
    options.cachedCount ?? 0,
  ).map((r) => r.domain_normalized);
  for (const domain of oldest) sim.control.mutate.reenrich(domain);
  sim.control.resetLogs();
  return {
    sim,
    ctx,
    cachedDomains: oldest,
    dbPath: ctx.mirror.path,
    configPath: join(ctx.dir, 'config.json'),
  };
}

/** The usage entries of `POST /enrichments`. */
export function enrichmentPosts(sim: RunningSimulator): UsageEntry[] {
  return sim.control.usage().filter((u) => u.endpoint === 'POST /enrichments');
}

/** Domain → number of POSTs that billed credits. */
export function billedPostsPerDomain(sim: RunningSimulator): Map<string, number> {
  const counts = new Map<string, number>();
  for (const u of enrichmentPosts(sim)) {
    if (u.credits > 0) counts.set(u.domain ?? '?', (counts.get(u.domain ?? '?') ?? 0) + 1);
  }
  return counts;
}

/**
 * Domain → number of `POST /enrichments` sent, billed or not, faulted or not (from the request
 * log, whose bodies name the domain even when a fault came before any effect).
 */
export function postsPerDomain(sim: RunningSimulator): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of sim.control.requests()) {
    if (r.method !== 'POST' || r.path !== '/enrichments') continue;
    const domain = String((r.body as { domain?: unknown } | undefined)?.domain ?? '?');
    counts.set(domain, (counts.get(domain) ?? 0) + 1);
  }
  return counts;
}

/** Credits billed for enrichments net of refunds, as the simulator counts them. */
export function netEnrichmentCredits(sim: RunningSimulator): number {
  return enrichmentPosts(sim).reduce((sum, u) => sum + u.credits - (u.refundedCredits ?? 0), 0);
}

/** Sum of a mirror query's single numeric column. */
export function mirrorNumber(dbPath: string, sql: string, ...params: unknown[]): number {
  const row = queryMirror<{ n: number | null }>(dbPath, sql, ...params)[0];
  return row?.n ?? 0;
}

/** A logger that records like MemoryLogger and calls `onEvent` for every message (to act mid-run). */
export class HookLogger implements Logger {
  readonly memory: MemoryLogger;
  private readonly onEvent: (msg: string, fields: LogFields) => void;

  constructor(onEvent: (msg: string, fields: LogFields) => void, memory = new MemoryLogger()) {
    this.memory = memory;
    this.onEvent = onEvent;
  }
  error(msg: string, fields: LogFields = {}): void {
    this.memory.error(msg, fields);
    this.onEvent(msg, fields);
  }
  warn(msg: string, fields: LogFields = {}): void {
    this.memory.warn(msg, fields);
    this.onEvent(msg, fields);
  }
  info(msg: string, fields: LogFields = {}): void {
    this.memory.info(msg, fields);
    this.onEvent(msg, fields);
  }
  debug(msg: string, fields: LogFields = {}): void {
    this.memory.debug(msg, fields);
    this.onEvent(msg, fields);
  }
  child(bindings: LogFields): Logger {
    return new HookLogger(this.onEvent, this.memory.child(bindings) as MemoryLogger);
  }
}
