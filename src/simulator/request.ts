import { isoFromMs } from '../util/time.js';
import type { FieldErrors } from './filters.js';
import type { SectionName, UsageEntry } from './types.js';
import { SECTION_NAMES } from './types.js';

// Request and response shapes and the helpers every endpoint handler shares.

/** A response before it is sent (so faults can be applied after processing). */
export interface SimResponse {
  status: number;
  headers?: Record<string, string>;
  json?: unknown;
  /** A streamed body (export downloads). */
  stream?: () => AsyncIterable<string>;
  usage: { endpoint: string; credits?: number; domain?: string; exportId?: number; runId?: number };
  /** Called with the usage entry once it is logged (a run keeps it to note a refund). */
  onUsage?: (entry: UsageEntry) => void;
}

/** A parsed incoming request under the base path. */
export interface SimRequest {
  method: string;
  /** Path after the base path, still percent-encoded. */
  rawPath: string;
  query: URLSearchParams;
  body: unknown;
  /** Body text could not be parsed as JSON. */
  badJson: boolean;
  authValid: boolean;
}

/** The 400 of a POST whose JSON body is not an object (POST /enrichments, POST /exports). */
export function bodyNotAnObject(endpoint: string, now: number): SimResponse {
  return {
    status: 400,
    json: errorBody('Validation failed', { body: ['must be a JSON object'] }, now),
    usage: { endpoint },
  };
}

/** The 404 of a domain the catalogue does not hold (GET /domains/:domain, POST /enrichments). */
export function domainNotFound(endpoint: string, requested: string, now: number): SimResponse {
  return {
    status: 404,
    json: errorBody('Domain not found', {}, now),
    usage: { endpoint, domain: requested },
  };
}

/** The documented error body used for 400, 404 and other non-quota errors (docs/simulator.md "Errors"). */
export function errorBody(
  message: string,
  errors: FieldErrors = {},
  nowMs = Date.now(),
): Record<string, unknown> {
  return { success: false, message, errors, timestamp: isoFromMs(nowMs) };
}

export function ok(data: unknown): { success: true; data: unknown } {
  return { success: true, data };
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function mergeErrors(a: FieldErrors, b: FieldErrors): FieldErrors {
  const out: FieldErrors = { ...a };
  for (const [key, messages] of Object.entries(b)) out[key] = [...(out[key] ?? []), ...messages];
  return out;
}

/** `include[]` (repeatable), also `include` and comma-separated values; default all sections. */
export function parseInclude(query: URLSearchParams): { sections: SectionName[] } | { errors: FieldErrors } {
  if (!query.has('include[]') && !query.has('include')) return { sections: [...SECTION_NAMES] };
  const values = [...query.getAll('include[]'), ...query.getAll('include')]
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
  const unknown = values.filter((v) => !(SECTION_NAMES as readonly string[]).includes(v));
  if (unknown.length > 0)
    return {
      errors: {
        'include[]': [`unknown section(s): ${unknown.join(', ')}; allowed: ${SECTION_NAMES.join(', ')}`],
      },
    };
  return { sections: SECTION_NAMES.filter((s) => values.includes(s)) };
}

/** Endpoint template of a path, for the usage log. */
export function templateOf(method: string, segments: string[]): string {
  const [first, second, third, fourth] = segments;
  const m = method;
  if (first === 'domains')
    return second === undefined || second === '' ? `${m} /domains` : `${m} /domains/:domain`;
  if (first === 'enrichments') return `${m} /enrichments`;
  if (first === 'enrichment_runs') return `${m} /enrichment_runs/:id`;
  if (first === 'account') return `${m} /account`;
  if (first === 'exports') {
    if (second === undefined) return `${m} /exports`;
    return third === 'download' ? `${m} /exports/:id/download` : `${m} /exports/:id`;
  }
  if (first === 'companies') {
    if (second === 'search' && third === 'preview' && fourth === undefined)
      return `${m} /companies/search/preview`;
    if (second === 'search') return `${m} /companies/search`;
    if (second === 'resolve') return `${m} /companies/resolve`;
  }
  return 'unknown';
}
