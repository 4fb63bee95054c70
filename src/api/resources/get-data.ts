import type { z } from 'zod';
import type { ApiTransport } from '../transport.js';
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
