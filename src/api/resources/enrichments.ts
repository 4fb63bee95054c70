import { InvalidArgumentError } from '../errors.js';
import type { PollOptions } from '../poll.js';
import type { ApiTransport } from '../transport.js';
import { resourceUrl } from '../transport.js';
import {
  EnrichmentCachedResponseSchema,
  EnrichmentRunResponseSchema,
  EnrichmentStartedResponseSchema,
} from '../wire.js';
import type { EnrichmentRun, Known } from '../wire.js';
import type { RequestOptions } from './domains.js';
import { pollResource } from './poll-resource.js';
import { getData, parsePaidWire, postCredit } from './requests.js';

/** Body of `POST /enrichments`. */
export interface StartEnrichmentParams {
  /** Domain to enrich. */
  domain: string;
  /**
   * Enrichment strategy; the allowed values are not described (docs/service-api.md).
   * @default not sent (the service's default is `full`)
   */
  strategy?: string | undefined;
}

/** A 200 answer: a recent enrichment exists; no run was started and nothing was billed. */
export interface EnrichmentCached {
  kind: 'cached';
  /** Domain as the service named it. */
  domain: string;
  /** Profile status (`enriched`). */
  status: Known<'enriched'> | null | undefined;
  /** Time of the cached enrichment, as sent. */
  last_enriched_at: string | null | undefined;
  /** `served_from_cache` (true) and `billable` (false), plus unknown fields. */
  meta: Record<string, unknown> | null | undefined;
  /** The whole validated `data` object, unknown fields included. */
  raw: Record<string, unknown>;
}

/** A 202 answer: a run was started and billed (10 credits, docs/service-api.md "POST /enrichments"). */
export interface EnrichmentStarted {
  kind: 'started';
  /** `enrichment_run_id`: record it at once; it is how the run is resumed. */
  runId: number;
  /** `poll_url` as sent (a path or URL; followed only on the base URL's origin). */
  pollUrl: string;
  /** `billable` (true per spec; false if the service says so). */
  billable: boolean;
  /** The whole validated `data` object, unknown fields included. */
  raw: Record<string, unknown>;
}

/** Result of `startEnrichment`: a 200 (cached) or a 202 (started). */
export type StartEnrichmentResult = EnrichmentCached | EnrichmentStarted;

/**
 * `POST /enrichments`: starts a run (10 credits) or returns the cached result (0 credits). The
 * status decides: 202 is a new run, 200 cached (docs/service-api.md "POST /enrichments").
 *
 * Credit-costing, so never retried blindly: it is retried only after a refusal (429 other than
 * `quota_exceeded`) or a connection that was never made. An ambiguous failure (5xx, reset or
 * timeout after sending, truncated body, a 2xx answer that cannot be read) throws
 * `OutcomeUnknownError` (`ERR_OUTCOME_UNKNOWN`; for an unreadable answer its message names the field),
 * exhausted credits `QuotaExceededError`. If aborted after sending, the outcome is also unknown.
 */
export async function startEnrichment(
  transport: ApiTransport,
  params: StartEnrichmentParams,
  options: RequestOptions = {},
): Promise<StartEnrichmentResult> {
  if (typeof params?.domain !== 'string' || params.domain.trim() === '') {
    throw new InvalidArgumentError('startEnrichment: domain must be a non-empty string');
  }
  const body: Record<string, string> = { domain: params.domain };
  if (params.strategy !== undefined) body.strategy = params.strategy;
  const url = transport.url('/enrichments');
  const response = await postCredit(transport, url, body, options);
  const looksStarted =
    response.status === 202 ||
    (response.status !== 200 &&
      typeof response.body === 'object' &&
      response.body !== null &&
      typeof (response.body as { data?: { enrichment_run_id?: unknown } }).data?.enrichment_run_id !==
        'undefined');
  if (looksStarted) {
    const data = parsePaidWire(EnrichmentStartedResponseSchema, url, response).data;
    return {
      kind: 'started',
      runId: data.enrichment_run_id,
      pollUrl: data.poll_url,
      billable: data.billable ?? true,
      raw: data,
    };
  }
  const data = parsePaidWire(EnrichmentCachedResponseSchema, url, response).data;
  return {
    kind: 'cached',
    domain: data.domain,
    status: data.status,
    last_enriched_at: data.last_enriched_at,
    meta: data.meta,
    raw: data,
  };
}

/**
 * `GET /enrichment_runs/:id` (0 credits): a run in any state. Takes the run id or its
 * `poll_url`; a `poll_url` on another origin throws `ForeignOriginError` without a request. An
 * unknown id is `NotFoundError` (the spec does not show that response; see docs/simulator.md).
 */
export async function getEnrichmentRun(
  transport: ApiTransport,
  idOrPollUrl: number | string,
  options: RequestOptions = {},
): Promise<EnrichmentRun> {
  const url = resourceUrl(transport, 'enrichment_runs', idOrPollUrl);
  return getData(transport, url, EnrichmentRunResponseSchema, options);
}

/**
 * Whether a run reached a final state, `completed` or `failed` (docs/service-api.md "States and
 * lifecycles").
 */
export function isRunSettled(run: Pick<EnrichmentRun, 'status'>): boolean {
  return run.status === 'completed' || run.status === 'failed';
}

/**
 * Polls a run until it is `completed` or `failed` and returns it, failed runs included. Any
 * other status (`pending` or one not known today) counts as in progress until the deadline,
 * then `PollTimeoutError`. Cancellable through `signal`.
 */
export function waitForEnrichmentRun(
  transport: ApiTransport,
  idOrPollUrl: number | string,
  options: Required<Pick<PollOptions<EnrichmentRun>, 'pollIntervalMs' | 'maxPollIntervalMs' | 'deadlineMs'>> &
    PollOptions<EnrichmentRun>,
): Promise<EnrichmentRun> {
  return pollResource(
    transport,
    {
      collection: 'enrichment_runs',
      subject: 'enrichment run',
      get: getEnrichmentRun,
      isSettled: isRunSettled,
    },
    idOrPollUrl,
    options,
  );
}
