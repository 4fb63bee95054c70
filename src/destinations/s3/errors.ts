import { DomainSyncError } from '../../util/domain-sync-error.js';

/**
 * Why a destination operation failed, as the retry policy and the summary read it:
 *
 * - `auth`: the credentials were missing, refused or not allowed (`ERR_DESTINATION_AUTH`);
 * - `not_found`: the bucket does not exist (`ERR_DESTINATION_NOT_FOUND`);
 * - `unreachable`: no HTTP answer at all (refused, reset, timed out, name not resolved),
 *   retryable (`ERR_DESTINATION_UNREACHABLE` once the retries are spent);
 * - `server`: 5xx or throttling, retryable (`ERR_DESTINATION` once the retries are spent);
 * - `failed`: any other refusal (a 4xx the store gave for our request, a bad answer, a missing
 *   region), not retried (`ERR_DESTINATION`).
 */
export type DestinationFailureKind = 'auth' | 'not_found' | 'unreachable' | 'server' | 'failed';

/** The stable code of each kind. */
export const DESTINATION_ERROR_CODES: Readonly<Record<DestinationFailureKind, string>> = {
  auth: 'ERR_DESTINATION_AUTH',
  not_found: 'ERR_DESTINATION_NOT_FOUND',
  unreachable: 'ERR_DESTINATION_UNREACHABLE',
  server: 'ERR_DESTINATION',
  failed: 'ERR_DESTINATION',
};

/**
 * A destination could not be written. The message names the destination (`destination "lake"
 * (s3://bucket/prefix): …`), the operation and the object key, and what the store said; never a
 * credential, a header or a raw response. Exit status 1 (these codes are not the service's).
 */
export class DestinationError extends DomainSyncError {
  /** The destination's name (`destinations.NAME`). */
  readonly destination: string;
  readonly kind: DestinationFailureKind;
  /** HTTP status of the store's answer, or null when there was none. */
  readonly status: number | null;
  /** The store's error name (`NoSuchBucket`, `InvalidAccessKeyId`) or the network code (`ECONNREFUSED`). */
  readonly storeCode: string | null;
  /** Attempts made, retries included. */
  readonly attempts: number;

  constructor(
    details: {
      destination: string;
      kind: DestinationFailureKind;
      message: string;
      status?: number | null;
      storeCode?: string | null;
      attempts?: number;
    },
    options: { cause?: unknown } = {},
  ) {
    super(DESTINATION_ERROR_CODES[details.kind], details.message, {
      ...options,
      retryable: details.kind === 'unreachable' || details.kind === 'server',
    });
    this.destination = details.destination;
    this.kind = details.kind;
    this.status = details.status ?? null;
    this.storeCode = details.storeCode ?? null;
    this.attempts = details.attempts ?? 1;
  }
}

/**
 * What went wrong talking to the store, before the destination's name is attached: thrown by
 * the SDK wrapper (`store.ts`), read by the retry loop (`retry.ts`).
 */
export class StoreFailure extends Error {
  readonly kind: DestinationFailureKind;
  readonly status: number | null;
  readonly storeCode: string | null;

  constructor(
    kind: DestinationFailureKind,
    message: string,
    details: { status?: number | null; storeCode?: string | null; cause?: unknown } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'StoreFailure';
    this.kind = kind;
    this.status = details.status ?? null;
    this.storeCode = details.storeCode ?? null;
  }

  /** Whether trying the same operation again may succeed. */
  get retryable(): boolean {
    return this.kind === 'unreachable' || this.kind === 'server';
  }
}
