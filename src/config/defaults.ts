/**
 * Every config default in one place. `config.example.json` shows exactly these
 * values and a unit test keeps the two in step.
 */
export const DEFAULT_CONFIG_FILE = 'config.json';

/** The canonical filter names of `GET /domains` (docs/contract.md "Filter names"). */
export const CANONICAL_FILTERS = [
  'jurisdiction',
  'payment_category',
  'game_provider',
  'exclude_provider',
  'exclude_payment_category',
  'has_affiliate_programs',
  'geo',
  'enriched_after',
  'per_page',
  'page',
] as const;
export type CanonicalFilter = (typeof CANONICAL_FILTERS)[number];

/** The defaults, in the shape of the config file. */
export const DEFAULTS = {
  api: {
    baseUrl: null as string | null,
    timeoutMs: 30_000,
    maxRetries: 5,
    concurrency: 8,
    requestsPerSecond: 10,
    pollIntervalMs: 5_000,
    authHeader: 'x-api-key' as 'x-api-key' | 'bearer',
    queryParams: {} as Partial<Record<CanonicalFilter, string>>,
  },
  database: { path: 'data/mirror.sqlite' },
  exports: { dir: 'data/exports', creditsPerRowGuess: 1, pollDeadline: '30m', retention: '7d' },
  snapshots: { dir: 'data/snapshots', retainDates: 0, to: [] as string[] },
  sync: { perPage: 500, overlap: '1h', concurrency: null as number | null },
  enrich: {
    budget: 100,
    staleAfter: '30d',
    concurrency: 4,
    strategy: 'full',
    wait: '30m',
    failureBackoff: '24h',
    maxPollIntervalMs: 30_000,
  },
  log: { level: 'info', file: null as string | null },
  lock: { lease: '60s', wait: '0s' },
  credits: { maxPerDay: null as number | null, maxPerMonth: null as number | null },
  destinations: {} as Record<string, unknown>,
  pipelines: {
    nightly: { steps: ['sync', 'snapshot'], schedule: '0 2 * * *', catchUp: 'once' },
    // An example with a budget: not scheduled (schedule null) so it never spends credits unless
    // run by hand (`run weekly-reenrich`) or given a schedule in the config file.
    'weekly-reenrich': {
      steps: [{ type: 'enrich', options: { budget: 500, staleAfter: '30d' } }, 'snapshot'],
      schedule: null,
      catchUp: 'none',
    },
    // An example with a destination: not scheduled, and it needs a `destinations` entry of type
    // postgres before `run sync-publish` can publish anything (docs/destinations.md).
    'sync-publish': { steps: ['sync', 'snapshot', 'publish'], schedule: null, catchUp: 'none' },
  } as Record<
    string,
    { steps: unknown[]; schedule?: string | null; timezone?: string; catchUp?: 'none' | 'once' }
  >,
};
