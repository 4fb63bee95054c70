import { BoundedLog } from './bounded-log.js';
import { Catalogue } from './catalogue.js';
import { CompanyEndpoints } from './companies.js';
import { exportChunks, exportContentType, exportFileName } from './export-file.js';
import { FaultInjector } from './faults.js';
import type { FieldErrors } from './filters.js';
import { parseFilters } from './filters.js';
import { ENRICHMENT_CREDITS, Jobs } from './jobs.js';
import { Ledger } from './ledger.js';
import { Renderer } from './render.js';
import {
  bodyNotAnObject,
  domainNotFound,
  errorBody,
  isObject,
  mergeErrors,
  ok,
  parseInclude,
  templateOf,
} from './request.js';
import type { SimRequest, SimResponse } from './request.js';
import type {
  CanonicalFilter,
  RequestEntry,
  SectionName,
  SimAccount,
  SimulatorOptions,
  UrlStyle,
  UsageEntry,
} from './types.js';
import { CANONICAL_FILTERS, SECTION_NAMES } from './types.js';

/** The base path of every service endpoint (docs/service-api.md "Conventions"). */
export const BASE_PATH = '/api/v1/igaming';

/** Plan name shown by GET /account ("plan name"; values not shown). */
export const SIMULATOR_PLAN = 'simulator';

/** Fully defaulted options. */
export type ResolvedOptions = Required<Omit<SimulatorOptions, 'logger' | 'queryParamNames'>> & {
  queryParamNames: Record<CanonicalFilter, string>;
};

/** Applies the documented defaults to {@link SimulatorOptions}. */
export function resolveOptions(options: SimulatorOptions = {}): ResolvedOptions {
  const names = {} as Record<CanonicalFilter, string>;
  for (const name of CANONICAL_FILTERS) names[name] = options.queryParamNames?.[name] ?? name;
  const now = Date.now();
  return {
    seed: options.seed ?? 1,
    domains: options.domains ?? 5000,
    timeScale: options.timeScale ?? 1,
    credits: options.credits === undefined ? 100_000 : options.credits,
    apiKeys: options.apiKeys && options.apiKeys.length > 0 ? [...options.apiKeys] : ['client_simulator_key'],
    acceptAnyClientKey: options.acceptAnyClientKey ?? false,
    quirks: options.quirks ?? false,
    cacheWindowMs: options.cacheWindowMs ?? 86_400_000,
    runFailureRate: options.runFailureRate ?? 0.05,
    runDurationMs: checkDurationRange(options.runDurationMs ?? [30_000, 120_000]),
    exportCreditsPerRow: options.exportCreditsPerRow ?? 0.1,
    exportTtlMs: options.exportTtlMs ?? 3_600_000,
    exportReadyMs: options.exportReadyMs ?? 20_000,
    epochMs: options.epochMs ?? now - (now % 86_400_000),
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
    logLimit: checkLogLimit(options.logLimit ?? DEFAULT_LOG_LIMIT),
    queryParamNames: names,
  };
}

/** Default of {@link SimulatorOptions.logLimit}. */
const DEFAULT_LOG_LIMIT = 100_000;

function checkLogLimit(limit: number): number {
  if (!Number.isInteger(limit) || limit < 1)
    throw new RangeError(`simulator logLimit must be a positive integer, got ${String(limit)}`);
  return limit;
}

function checkDurationRange(range: readonly [number, number]): readonly [number, number] {
  const [shortest, longest] = range;
  if (!(Number.isFinite(shortest) && Number.isFinite(longest) && shortest >= 0 && shortest <= longest)) {
    throw new RangeError(
      `runDurationMs must be [shortest, longest] with 0 ≤ shortest ≤ longest, got [${range.join(', ')}]`,
    );
  }
  return range;
}

const EXPORT_BODY_KEYS = new Set(['filters', 'export_format', 'fields', 'fields[]']);

/**
 * The simulated Domain Enrichment Service: catalogue, ledger, jobs, logs and clock, and one
 * handler per endpoint of docs/service-api.md. Transport (HTTP, auth header parsing, faults) is in server.ts.
 */
export class SimService {
  readonly options: ResolvedOptions;
  readonly catalogue: Catalogue;
  readonly ledger: Ledger;
  readonly jobs: Jobs;
  readonly renderer: Renderer;
  /** Renders canonical views for `control.truth`. */
  readonly canonical: Renderer;
  readonly faults: FaultInjector;
  readonly usageLog: BoundedLog<UsageEntry>;
  readonly requestLog: BoundedLog<RequestEntry>;
  clockOffsetMs = 0;
  origin = '';
  urlStyle: { pollUrl: UrlStyle; downloadUrl: UrlStyle } = { pollUrl: 'path', downloadUrl: 'path' };
  listPageHook: ((page: number) => void | Promise<void>) | null = null;
  private readonly wireToCanonical = new Map<string, CanonicalFilter>();
  private readonly companies: CompanyEndpoints;

  constructor(options: SimulatorOptions = {}) {
    this.options = resolveOptions(options);
    const o = this.options;
    this.usageLog = new BoundedLog(o.logLimit);
    this.requestLog = new BoundedLog(o.logLimit);
    this.catalogue = new Catalogue({
      seed: o.seed,
      domains: o.domains,
      quirks: o.quirks,
      epochMs: o.epochMs,
    });
    this.ledger = new Ledger(o.credits);
    this.jobs = new Jobs(
      {
        seed: o.seed,
        quirks: o.quirks,
        timeScale: o.timeScale,
        runFailureRate: o.runFailureRate,
        runDurationMs: o.runDurationMs,
        exportReadyMs: o.exportReadyMs,
        exportTtlMs: o.exportTtlMs,
      },
      this.catalogue,
      this.ledger,
    );
    this.renderer = new Renderer(o.quirks, o.seed);
    this.canonical = new Renderer(false, o.seed);
    this.faults = new FaultInjector(o.seed);
    this.companies = new CompanyEndpoints(this.catalogue, this.ledger, this.renderer);
    for (const name of CANONICAL_FILTERS) this.wireToCanonical.set(o.queryParamNames[name], name);
  }

  /** Simulator clock (ms). */
  now(): number {
    return Date.now() + this.clockOffsetMs;
  }

  /** Settles due jobs; called before every request and control operation. */
  tick(): number {
    const now = this.now();
    this.jobs.tick(now);
    return now;
  }

  /** The account as GET /account shows it (docs/service-api.md "Account"). */
  account(): SimAccount {
    return {
      plan: SIMULATOR_PLAN,
      credits_granted: this.ledger.granted,
      credits_used: this.ledger.used,
      credits_reserved: this.ledger.reserved,
      available_credits: this.ledger.available(),
    };
  }

  /** A URL in the chosen style for a path under the base path. */
  url(kind: 'pollUrl' | 'downloadUrl', path: string): string {
    const style = this.urlStyle[kind];
    if (style === 'path') return path;
    if (style === 'absolute') return this.origin + path;
    return style.origin.replace(/\/$/, '') + path;
  }

  /** The wire name of a canonical filter. */
  wireName = (name: CanonicalFilter): string => this.options.queryParamNames[name];

  /** Maps wire-named keys to canonical ones; unknown keys become field errors. */
  toCanonical(
    entries: Iterable<[string, unknown]>,
    errors: FieldErrors,
  ): Partial<Record<CanonicalFilter, unknown>> {
    const out: Partial<Record<CanonicalFilter, unknown>> = {};
    for (const [key, value] of entries) {
      const name = this.wireToCanonical.get(key);
      if (name === undefined) {
        (errors[key] ??= []).push('is not a known parameter');
        continue;
      }
      if (out[name] !== undefined) {
        (errors[key] ??= []).push('must be given once');
        continue;
      }
      out[name] = value;
    }
    return out;
  }

  /** Routes a request under the base path to its handler. Auth is already checked by the caller. */
  async handle(req: SimRequest): Promise<SimResponse> {
    const now = this.tick();
    const { method, rawPath } = req;
    const segments = rawPath.split('/').slice(1);
    const first = segments[0];
    const second = segments[1];
    const third = segments[2];
    if (!req.authValid) {
      // docs/service-api.md "Errors": 401 body exactly success/message/errors/timestamp.
      return {
        status: 401,
        json: errorBody('Unauthorized', {}, now),
        usage: { endpoint: templateOf(method, segments) },
      };
    }
    if (req.badJson) {
      return {
        status: 400,
        json: errorBody('Request body is not valid JSON', { body: ['must be a JSON object'] }, now),
        usage: { endpoint: templateOf(method, segments) },
      };
    }
    const endpoint = templateOf(method, segments);
    const notAllowed = (): SimResponse => ({
      status: 405,
      json: errorBody('Method Not Allowed', {}, now),
      usage: { endpoint },
    });
    switch (first) {
      case 'domains':
        if (second === undefined || (second === '' && third === undefined))
          return method === 'GET' ? this.listDomains(req, now) : notAllowed();
        if (third === undefined) return method === 'GET' ? this.getDomain(req, second, now) : notAllowed();
        break;
      case 'enrichments':
        if (second === undefined) return method === 'POST' ? this.postEnrichment(req, now) : notAllowed();
        break;
      case 'enrichment_runs':
        if (second !== undefined && third === undefined)
          return method === 'GET' ? this.getRun(second, now) : notAllowed();
        break;
      case 'account':
        if (second === undefined)
          return method === 'GET'
            ? { status: 200, json: ok(this.account()), usage: { endpoint } }
            : notAllowed();
        break;
      case 'exports':
        if (second === undefined) return method === 'POST' ? this.postExport(req, now) : notAllowed();
        if (third === undefined) return method === 'GET' ? this.getExport(second, now) : notAllowed();
        if (third === 'download' && segments.length === 3)
          return method === 'GET' ? this.download(second, now) : notAllowed();
        break;
      case 'companies':
        if (method !== 'GET') break;
        if (second === 'search' && third === 'preview' && segments.length === 3)
          return this.companies.preview(req);
        if (second === 'search' && third === undefined) return this.companies.search(req, now);
        if (second === 'resolve' && third === undefined) return this.companies.resolve(req, now);
        break;
    }
    return { status: 404, json: errorBody('Not Found', {}, now), usage: { endpoint: 'unknown' } };
  }

  // ---- GET /domains ---------------------------------------------------------------------------

  private async listDomains(req: SimRequest, now: number): Promise<SimResponse> {
    const endpoint = 'GET /domains';
    const errors: FieldErrors = {};
    const grouped = new Map<string, string[]>();
    for (const [key, value] of req.query) grouped.set(key, [...(grouped.get(key) ?? []), value]);
    const input = this.toCanonical(
      [...grouped].map(([key, values]): [string, unknown] => [key, values.length === 1 ? values[0] : values]),
      errors,
    );
    for (const [name, value] of Object.entries(input)) {
      if (Array.isArray(value)) {
        (errors[this.wireName(name as CanonicalFilter)] ??= []).push('must be given once');
        delete input[name as CanonicalFilter];
      }
    }
    const parsed = parseFilters(input, this.wireName);
    Object.assign(errors, mergeErrors(errors, parsed.errors));
    if (Object.keys(errors).length > 0)
      return { status: 400, json: errorBody('Validation failed', errors, now), usage: { endpoint } };
    const ids = this.catalogue.list(parsed.filters);
    const start = (parsed.page - 1) * parsed.perPage;
    const domains: unknown[] = [];
    for (let i = start; i < Math.min(ids.length, start + parsed.perPage); i++) {
      domains.push(this.renderer.summary(this.catalogue.summary(ids[i] as number)));
    }
    const data = { domains, total: ids.length, page: parsed.page, per_page: parsed.perPage };
    if (this.listPageHook) await this.listPageHook(parsed.page);
    return { status: 200, json: ok(this.renderer.extra(data, `list:${parsed.page}`)), usage: { endpoint } };
  }

  // ---- GET /domains/:domain -------------------------------------------------------------------

  private getDomain(req: SimRequest, rawDomain: string, now: number): SimResponse {
    const endpoint = 'GET /domains/:domain';
    let requested: string;
    try {
      requested = decodeURIComponent(rawDomain);
    } catch {
      return {
        status: 400,
        json: errorBody('Validation failed', { domain: ['is not valid percent-encoding'] }, now),
        usage: { endpoint },
      };
    }
    const include = parseInclude(req.query);
    if ('errors' in include)
      return {
        status: 400,
        json: errorBody('Validation failed', include.errors, now),
        usage: { endpoint, domain: requested },
      };
    const id = this.catalogue.idOf(requested);
    if (id === undefined) return domainNotFound(endpoint, requested, now);
    const profile = this.catalogue.profile(id);
    return {
      status: 200,
      json: ok(this.renderer.profile(profile, include.sections, requested, now)),
      usage: { endpoint, domain: profile.domain_normalized },
    };
  }

  // ---- POST /enrichments ----------------------------------------------------------------------

  private postEnrichment(req: SimRequest, now: number): SimResponse {
    const endpoint = 'POST /enrichments';
    const body = req.body;
    if (!isObject(body)) return bodyNotAnObject(endpoint, now);
    const errors: FieldErrors = {};
    if (typeof body.domain !== 'string' || body.domain.trim() === '')
      errors.domain = ['is required and must be a string'];
    if (
      body.strategy !== undefined &&
      (typeof body.strategy !== 'string' || body.strategy.trim() === '' || body.strategy.length > 64)
    ) {
      // Allowed strategies are "not shown": any non-empty string is accepted and echoed.
      errors.strategy = ['must be a non-empty string'];
    }
    if (Object.keys(errors).length > 0)
      return { status: 400, json: errorBody('Validation failed', errors, now), usage: { endpoint } };
    const requested = body.domain as string;
    const strategy = (body.strategy as string | undefined) ?? 'full';
    const id = this.catalogue.idOf(requested);
    if (id === undefined) return domainNotFound(endpoint, requested, now);
    const profile = this.catalogue.profile(id);
    const domain = profile.domain_normalized;
    // "How recent a cached enrichment must be: not shown" → cacheWindowMs (docs/simulator.md).
    if (now - Date.parse(profile.last_enriched_at) < this.options.cacheWindowMs) {
      const data = {
        domain: requested,
        status: profile.status,
        last_enriched_at: this.renderer.ts(profile.last_enriched_at),
        meta: this.renderer.extra({ served_from_cache: true, billable: false }, `cm:${domain}`),
      };
      return {
        status: 200,
        json: ok(this.renderer.extra(data, `c:${domain}`)),
        usage: { endpoint, domain, credits: 0 },
      };
    }
    if (!this.ledger.reserve(ENRICHMENT_CREDITS)) {
      return {
        status: 429,
        json: this.ledger.quotaExceededBody(ENRICHMENT_CREDITS),
        usage: { endpoint, domain },
      };
    }
    const run = this.jobs.startRun(id, domain, strategy, now);
    const data = {
      enrichment_run_id: run.id,
      poll_url: this.url('pollUrl', `${BASE_PATH}/enrichment_runs/${run.id}`),
      cached: false,
      billable: true,
    };
    return {
      status: 202,
      json: { success: true, message: 'Enrichment started', data: this.renderer.extra(data, `r:${run.id}`) },
      usage: { endpoint, domain, credits: ENRICHMENT_CREDITS, runId: run.id },
      onUsage: (entry) => {
        run.usage = entry;
      },
    };
  }

  // ---- GET /enrichment_runs/:id ---------------------------------------------------------------

  private getRun(rawId: string, now: number): SimResponse {
    const endpoint = 'GET /enrichment_runs/:id';
    const run = /^\d+$/.test(rawId) ? this.jobs.runs.get(Number(rawId)) : undefined;
    // "Response when the id is unknown: not shown" → 404 with the documented error body.
    if (!run)
      return { status: 404, json: errorBody('Enrichment run not found', {}, now), usage: { endpoint } };
    return {
      status: 200,
      json: ok(this.renderer.run(run)),
      usage: { endpoint, runId: run.id, domain: run.domain },
    };
  }

  // ---- POST /exports --------------------------------------------------------------------------

  private postExport(req: SimRequest, now: number): SimResponse {
    const endpoint = 'POST /exports';
    const body = req.body === undefined ? {} : req.body;
    if (!isObject(body)) return bodyNotAnObject(endpoint, now);
    const errors: FieldErrors = {};
    for (const key of Object.keys(body))
      if (!EXPORT_BODY_KEYS.has(key)) errors[key] = ['is not a known field'];
    const rawFilters = body.filters ?? {};
    let filters = {};
    if (!isObject(rawFilters)) errors.filters = ['must be an object'];
    else {
      const filterErrors: FieldErrors = {};
      const input = this.toCanonical(Object.entries(rawFilters), filterErrors);
      const parsed = parseFilters(input, this.wireName, { paging: false });
      for (const [key, messages] of Object.entries(mergeErrors(filterErrors, parsed.errors)))
        errors[`filters.${key}`] = messages;
      filters = parsed.filters;
    }
    const format = body.export_format ?? 'csv';
    if (format !== 'csv' && format !== 'json') errors.export_format = ['must be csv or json'];
    const rawFields = body.fields ?? body['fields[]'];
    let fields: SectionName[] = [...SECTION_NAMES];
    if (rawFields !== undefined) {
      if (
        !Array.isArray(rawFields) ||
        rawFields.some((f) => typeof f !== 'string' || !(SECTION_NAMES as readonly string[]).includes(f))
      ) {
        errors.fields = [`must be an array of: ${SECTION_NAMES.join(', ')}`];
      } else fields = SECTION_NAMES.filter((s) => (rawFields as string[]).includes(s));
    }
    if (Object.keys(errors).length > 0)
      return { status: 400, json: errorBody('Validation failed', errors, now), usage: { endpoint } };
    const rows = this.catalogue.list(filters).length;
    // "The exact cost formula: not shown" → ceil(rows × exportCreditsPerRow) (docs/simulator.md).
    const cost = Math.ceil(rows * this.options.exportCreditsPerRow);
    if (!this.ledger.reserve(cost))
      return { status: 429, json: this.ledger.quotaExceededBody(cost), usage: { endpoint } };
    const record = this.jobs.createExport({ format: format as 'csv' | 'json', filters, fields, cost }, now);
    const data = { export_id: record.id, poll_url: this.url('pollUrl', `${BASE_PATH}/exports/${record.id}`) };
    return {
      status: 202,
      json: { success: true, message: 'Export started', data: this.renderer.extra(data, `xe:${record.id}`) },
      usage: { endpoint, credits: cost, exportId: record.id },
    };
  }

  private getExport(rawId: string, now: number): SimResponse {
    const endpoint = 'GET /exports/:id';
    const record = /^\d+$/.test(rawId) ? this.jobs.exports.get(Number(rawId)) : undefined;
    if (!record) return { status: 404, json: errorBody('Export not found', {}, now), usage: { endpoint } };
    const download = this.url('downloadUrl', `${BASE_PATH}/exports/${record.id}/download`);
    return {
      status: 200,
      json: ok(this.renderer.exportStatus(record, download, now)),
      usage: { endpoint, exportId: record.id },
    };
  }

  private download(rawId: string, now: number): SimResponse {
    const endpoint = 'GET /exports/:id/download';
    const record = /^\d+$/.test(rawId) ? this.jobs.exports.get(Number(rawId)) : undefined;
    // docs/service-api.md "GET /exports/:id/download": 404 when unknown, still pending, or expired.
    if (!record) return { status: 404, json: errorBody('Export not found', {}, now), usage: { endpoint } };
    if (record.status !== 'completed')
      return {
        status: 404,
        json: errorBody('Export is still pending', {}, now),
        usage: { endpoint, exportId: record.id },
      };
    if (now >= (record.expiresMs as number))
      return {
        status: 404,
        json: errorBody('Export file has expired', {}, now),
        usage: { endpoint, exportId: record.id },
      };
    return {
      status: 200,
      headers: {
        'content-type': exportContentType(record),
        'content-disposition': `attachment; filename="${exportFileName(record)}"`,
      },
      stream: () => exportChunks(record, this.catalogue, this.renderer, this.options.quirks),
      usage: { endpoint, exportId: record.id },
    };
  }
}
