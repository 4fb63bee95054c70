import type { ApiTransport } from '../transport.js';
import { AccountResponseSchema, parseWire } from '../wire.js';
import type { Account } from '../wire.js';
import type { RequestOptions } from './domains.js';

/**
 * `GET /account` (0 credits): plan and credit balance. `credits_granted` null means no quota is
 * enforced (docs/service-api.md "Account").
 */
export async function getAccount(transport: ApiTransport, options: RequestOptions = {}): Promise<Account> {
  const url = transport.url('/account');
  const response = await transport.requestJson({
    method: 'GET',
    url,
    safety: 'safe',
    signal: options.signal,
  });
  return parseWire(AccountResponseSchema, response.body, 'GET', url.endpointPath, response.status).data;
}
