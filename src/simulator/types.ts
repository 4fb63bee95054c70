import type { Logger } from '../log/logger.js';

/**
 * Canonical names of the `GET /domains` filters (docs/contract.md "Filter names"). The same names are
 * used inside an export's `filters`; the wire names can be changed with
 * {@link SimulatorOptions.queryParamNames}.
 */
export type CanonicalFilter =
  | 'jurisdiction'
  | 'payment_category'
  | 'game_provider'
  | 'exclude_provider'
  | 'exclude_payment_category'
  | 'has_affiliate_programs'
  | 'geo'
  | 'enriched_after'
  | 'per_page'
  | 'page';

// Near-copy of src/config/defaults.ts on purpose: the simulator reads the filter names from
// docs/service-api.md itself rather than from the client's configuration.
/** Every canonical filter name, in documentation order. */
export const CANONICAL_FILTERS: readonly CanonicalFilter[] = [
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
];

/** How the simulator is set up; every field is optional. See docs/simulator.md "Options". */
export interface SimulatorOptions {
  /**
   * Seed of every pseudo-random choice (catalogue, run durations and outcomes, fault probabilities).
   * @default 1
   */
  seed?: number;
  /**
   * Number of domains in the catalogue. Profiles are generated on demand from (seed, index), so
   * 1,000,000 domains need little memory.
   * @default 5000
   */
  domains?: number;
  /**
   * Factor applied to run durations (30–120 s) and export preparation time; 0.01 makes a run last
   * 0.3–1.2 s.
   * @default 1
   */
  timeScale?: number;
  /**
   * `credits_granted` of the account; `null` means no quota is enforced.
   * @default 100000
   */
  credits?: number | null;
  /**
   * Accepted API keys; the first one is {@link RunningSimulator.apiKey}.
   * @default ['client_simulator_key']
   */
  apiKeys?: string[];
  /**
   * Also accept any key that starts with `client_` (docs/service-api.md "Authentication"), so a user
   * can point the CLI at a local simulator with whatever key they have set. `domain-sync
   * simulate` turns this on unless `--api-key` is given; a wrong prefix is still a 401.
   * @default false
   */
  acceptAnyClientKey?: boolean;
  /**
   * Exercise the freedoms the spec allows without showing them: unseen enum values, extra fields,
   * other timestamp spellings, nulls, Unicode domains, empty sections.
   * @default false
   */
  quirks?: boolean;
  /**
   * `POST /enrichments` answers 200 cached (0 credits) when the domain was enriched within this
   * window (simulator time).
   * @default 86_400_000 (24 h)
   */
  cacheWindowMs?: number;
  /**
   * Share of enrichment runs that end `failed`, chosen deterministically per (seed, run id).
   * @default 0.05
   */
  runFailureRate?: number;
  /**
   * Shortest and longest duration of an enrichment run before `timeScale`, drawn uniformly and
   * deterministically per (seed, run id). @default [30_000, 120_000] (the service's 30–120 s)
   */
  runDurationMs?: readonly [number, number];
  /**
   * Export cost is `ceil(rows × exportCreditsPerRow)`.
   * @default 0.1
   */
  exportCreditsPerRow?: number;
  /**
   * Lifetime of an export file after completion (simulator time, not scaled).
   * @default 3_600_000 (1 h)
   */
  exportTtlMs?: number;
  /**
   * Preparation time of an export before it is completed; multiplied by `timeScale`.
   * @default 20_000
   */
  exportReadyMs?: number;
  /**
   * Wire names of the `GET /domains` query parameters and export filter keys.
   * @default identity (the canonical names)
   */
  queryParamNames?: Partial<Record<CanonicalFilter, string>>;
  /**
   * Anchor of the synthetic catalogue's timestamps (every generated `last_enriched_at` lies
   * before it). Fix it to get byte-identical catalogues on different days.
   * @default the UTC midnight before start-up
   */
  epochMs?: number;
  /**
   * Interface to listen on.
   * @default '127.0.0.1'
   */
  host?: string;
  /**
   * Port to listen on; 0 picks a free port.
   * @default 0
   */
  port?: number;
  /**
   * Entries each of the usage and request logs keeps: the most recent ones. One entry is kept per
   * request, so without a bound a long-running simulator (`domain-sync simulate` behind a
   * nightly sync) would grow by every request it ever served.
   * @default 100000
   */
  logLimit?: number;
  /**
   * Receives one debug event per request and info events for start and stop.
   * @default noopLogger
   */
  logger?: Logger;
}

/** A started simulator. */
export interface RunningSimulator {
  /** `http://host:port`, e.g. `http://127.0.0.1:40123`. */
  origin: string;
  /** `origin + '/api/v1/igaming'`. */
  baseUrl: string;
  /** The first accepted API key. */
  apiKey: string;
  /** In-process control of clock, faults, ledger, logs, truth and mutations. */
  control: SimulatorControl;
  /** Closes the server and destroys every open socket; resolves when it is closed. */
  close(): Promise<void>;
}

/** Kinds of injected faults. */
export type FaultKind = 'status' | 'rate_limit' | 'reset' | 'latency' | 'truncate' | 'malformed';

/** One fault injection rule; rules are checked in order for every request under the base path. */
export interface FaultRule {
  /** Only requests with this method. @default any */
  method?: 'GET' | 'POST';
  /**
   * Prefix of the path after the base path: '/domains', '/domains/', '/enrichments', '/exports',
   * '/enrichment_runs', '/account' … @default any
   */
  path?: string;
  /** What to inject. */
  kind: FaultKind;
  /** Status of a 'status' fault. @default 503 */
  status?: number;
  /** Adds `Retry-After` to 'status' and 'rate_limit' faults (rate_limit @default 1). */
  retryAfterSeconds?: number;
  /** Delay of a 'latency' fault. @default 1000 */
  latencyMs?: number;
  /** Chance that a matching request gets the fault (seeded PRNG). @default 1 */
  probability?: number;
  /** Inject at most this many times. @default unlimited */
  times?: number;
  /**
   * Let the request take effect first (credits billed, run or export created) and only then
   * deliver the fault ('status', 'reset', 'truncate', 'malformed'). @default false
   */
  afterProcessing?: boolean;
}

/** One line of the usage log (docs/service-api.md "Authentication": every request is logged). */
export interface UsageEntry {
  /** Time of the request (simulator clock), ISO 8601. */
  at: string;
  method: string;
  /** Path after the base path, e.g. '/domains/foo.com'. */
  path: string;
  /** Endpoint template, e.g. 'POST /enrichments'; 'unknown' for unmatched paths. */
  endpoint: string;
  /** Status sent; 0 when the connection was reset. */
  status: number;
  /** Credits billed by this request (reserved or used). */
  credits: number;
  /** Credits given back later (a failed run's reservation is released). */
  refundedCredits?: number;
  domain?: string;
  exportId?: number;
  runId?: number;
}

/** One request as the simulator saw it. The API key itself is never stored. */
export interface RequestEntry {
  at: string;
  method: string;
  path: string;
  query: Record<string, string | string[]>;
  auth: 'x-api-key' | 'bearer' | 'none';
  authValid: boolean;
  body?: unknown;
}

/** A licence in canonical form. */
export interface TruthLicence {
  jurisdiction: string;
  license_number: string;
  status: string;
  source_url: string | null;
  first_seen_at: string;
  last_confirmed_at: string;
}

/** A payment method in canonical form. */
export interface TruthPaymentMethod {
  normalized_name: string;
  category: string;
  confidence: string;
  first_seen_at: string;
  last_confirmed_at: string;
}

/** An entry of the game_providers section (shape "not shown" in the spec; see docs/simulator.md). */
export interface TruthGameProvider {
  name: string;
  normalized_name: string;
  game_count: number;
}

/** An entry of the affiliate_programs section (shape "not shown"; see docs/simulator.md). */
export interface TruthAffiliateProgram {
  name: string;
  url: string | null;
  commission_model: string;
}

/** The geo section (shape "not shown"; see docs/simulator.md). */
export interface TruthGeo {
  target_countries: string[];
  restricted_countries: string[];
  languages: string[];
}

/** An entry of the related_domains section (shape "not shown"; see docs/simulator.md). */
export interface TruthRelatedDomain {
  domain: string;
  relation: string;
}

/**
 * The full profile of one domain in canonical form: timestamps `YYYY-MM-DDTHH:MM:SS.sssZ`, no
 * extra fields, every section present, plus the listing's `company_name`.
 */
export interface TruthProfile {
  domain: string;
  domain_normalized: string;
  company_name: string;
  status: string;
  last_enriched_at: string;
  operator: { name: string; legal_entity_name: string | null; country_of_incorporation: string };
  brand: { name: string; slug: string };
  licenses: TruthLicence[];
  payment_methods: TruthPaymentMethod[];
  game_providers: TruthGameProvider[];
  affiliate_programs: TruthAffiliateProgram[];
  geo: TruthGeo;
  related_domains: TruthRelatedDomain[];
}

/** Sections of a profile that `include[]` and export `fields[]` select. */
export type SectionName =
  'licenses' | 'payment_methods' | 'game_providers' | 'affiliate_programs' | 'geo' | 'related_domains';

// Near-copy of src/api/wire.ts PROFILE_SECTIONS on purpose: the simulator's own reading of
// docs/service-api.md; it must not import src/api.
/** Every section name, in the order the spec lists them. */
export const SECTION_NAMES: readonly SectionName[] = [
  'licenses',
  'payment_methods',
  'game_providers',
  'affiliate_programs',
  'geo',
  'related_domains',
];

/** The account as `GET /account` shows it. */
export interface SimAccount {
  plan: string;
  credits_granted: number | null;
  credits_used: number;
  credits_reserved: number;
  available_credits: number;
}

/** Where `poll_url` / `download_url` point: a path, an absolute URL on this origin, or another origin. */
export type UrlStyle = 'path' | 'absolute' | { origin: string };

/**
 * In-process control of a running simulator; every operation is also served over HTTP under
 * `{origin}/_sim/...` (docs/simulator.md "Control surface").
 */
export interface SimulatorControl {
  /** Simulator clock in ms: real time plus the offset added by {@link advanceClock}. */
  now(): number;
  /** Moves the simulator clock forward; due runs and exports settle at once. */
  advanceClock(ms: number): void;
  /** Replaces the fault rules (and their `times` counters). */
  setFaults(rules: FaultRule[]): void;
  /** Removes every fault rule. */
  clearFaults(): void;
  /** How many faults were injected, by kind. */
  faultStats(): { injected: Record<string, number>; total: number };
  /** The usage log: one entry per request under the base path, 401s included. */
  usage(): UsageEntry[];
  /** The request log: one entry per request under the base path; keys are never stored. */
  requests(): RequestEntry[];
  /** Empties the usage and request logs and the fault counters. */
  resetLogs(): void;
  /** The account as `GET /account` would show it now. */
  account(): SimAccount;
  /** Changes `credits_granted` (null = no quota); used and reserved are kept. */
  setCredits(granted: number | null): void;
  /** Chooses how `poll_url` and `download_url` are written. @default 'path' for both */
  setUrlStyle(style: { pollUrl?: UrlStyle; downloadUrl?: UrlStyle }): void;
  /** The ground truth, in canonical form, for assertions. */
  truth: {
    /** Number of domains currently listed. */
    count(): number;
    /** `domain_normalized` of matching domains in listing order (canonical filter names). */
    listDomains(filters?: Record<string, string>): string[];
    /** The canonical profile, or undefined when the domain is not in the catalogue. */
    profile(domain: string): TruthProfile | undefined;
    /** The enrichment run as `GET /enrichment_runs/:id` would show it now, or undefined. */
    run(id: number): unknown;
    /** The export as `GET /exports/:id` would show it now, or undefined. */
    export(id: number): unknown;
  };
  /** Changes to the catalogue, as enrichment would discover them. */
  mutate: {
    setLicenceStatus(domain: string, licenseNumber: string, status: string): void;
    removePaymentMethod(domain: string, normalizedName: string): void;
    addPaymentMethod(
      domain: string,
      pm: { normalized_name: string; category: string; confidence?: string },
    ): void;
    removeLicence(domain: string, licenseNumber: string): void;
    /** Sets the company name the listing and the profile show (any text, markup included). */
    setCompanyName(domain: string, companyName: string): void;
    /** Adds a domain and returns its `domain_normalized`; 'start' lists it before every other. */
    addDomain(opts?: { position?: 'start' | 'end'; domain?: string }): string;
    removeDomain(domain: string): void;
    /** `last_enriched_at` = now and everything re-confirmed, as a completed run does. */
    reenrich(domain: string): void;
  };
  /** Called (awaited) after each `GET /domains` page is computed and before it is sent. */
  onListPage(hook: ((page: number) => void | Promise<void>) | null): void;
}
