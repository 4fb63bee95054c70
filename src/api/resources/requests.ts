import type { z } from 'zod';
import { OutcomeUnknownError, ProtocolError } from '../errors.js';
import type { ApiTransport, JsonResponse } from '../transport.js';
import type { ResolvedUrl } from '../urls.js';
import { parseWire } from '../wire.js';
import type { RequestOptions } from './domains.js';

/**
 * A free `GET` (retried as `safe`) whose envelope is checked against `schema`; returns its `data`.
 * The one shape of every read-only endpoint: account, domains, enrichment runs, exports.
 */
export async function getData<S extends z.ZodType<{ data: unknown }>>(
  transport: ApiTransport,
  url: ResolvedUrl,
  schema: S,
  options: RequestOptions,
): Promise<z.output<S>['data']> {
  const response = await transport.requestJson({
    method: 'GET',
    url,
    safety: 'safe',
    signal: options.signal,
  });
  return parseWire(schema, response.body, 'GET', url.endpointPath, response.status).data;
}

/** A credit-costing POST: retried only when the service surely did not process it (`retry.ts`). */
export function postCredit(
  transport: ApiTransport,
  url: ResolvedUrl,
  body: unknown,
  options: RequestOptions,
): Promise<JsonResponse> {
  return transport.requestJson({
    method: 'POST',
    url,
    body,
    safety: 'credit',
    signal: options.signal,
  });
}

/**
 * Parses the 2xx answer of a credit-costing POST. The service processed (and billed) the request,
 * but when the answer cannot be read (a schema mismatch: no `export_id`, a wrong type) the caller
 * cannot know what it bought: that is an unknown outcome (`OutcomeUnknownError`, whose message
 * and `cause` name the field), never a plain refusal, so nothing upstream may treat it as "not
 * billed" and pay again.
 */
export function parsePaidAnswer<T>(
  parse: () => T,
  endpointPath: string,
  response: { status: number; body: unknown },
): T {
  try {
    return parse();
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    throw new OutcomeUnknownError({
      method: 'POST',
      path: endpointPath,
      status: response.status,
      body: response.body,
      cause: error,
    });
  }
}

/** {@link parsePaidAnswer} of a POST's answer checked against `schema`. */
export function parsePaidWire<S extends z.ZodType>(
  schema: S,
  url: ResolvedUrl,
  response: JsonResponse,
): z.output<S> {
  return parsePaidAnswer(
    () => parseWire(schema, response.body, 'POST', url.endpointPath, response.status),
    url.endpointPath,
    response,
  );
}
