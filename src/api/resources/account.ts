import type { ApiTransport } from '../transport.js';
import { AccountResponseSchema } from '../wire.js';
import type { Account } from '../wire.js';
import type { RequestOptions } from './domains.js';
import { getData } from './requests.js';

/**
 * `GET /account` (0 credits): plan and credit balance. `credits_granted` null means no quota is
 * enforced (docs/service-api.md "Account").
 */
export async function getAccount(transport: ApiTransport, options: RequestOptions = {}): Promise<Account> {
  const url = transport.url('/account');
  return getData(transport, url, AccountResponseSchema, options);
}
