import { StoreFailure } from './errors.js';

/*
 * The AWS SDK's errors → StoreFailure. Read from the error's name, HTTP status and Node error
 * code only: an SDK error also carries the raw response and, for a refused signature, the string
 * that was signed, none of which may reach a message or a log.
 */

/** Error names of S3 (and of S3-compatible stores) that mean the credentials were refused. */
const AUTH_NAMES = new Set([
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'AccessDenied',
  'Forbidden',
  'ExpiredToken',
  'InvalidToken',
  'TokenRefreshRequired',
  'AllAccessDisabled',
  'AccountProblem',
  'InvalidSecurity',
  'InvalidClientTokenId',
  'UnrecognizedClientException',
]);

/** Error names that mean "slow down" or a passing fault of the store. */
const TRANSIENT_NAMES = new Set([
  'SlowDown',
  'Throttling',
  'ThrottlingException',
  'TooManyRequestsException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestTimeout',
  'InternalError',
  'ServiceUnavailable',
  'ServiceUnavailableException',
]);

/** Node and SDK network failures: the request got no HTTP answer. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'ERR_STREAM_PREMATURE_CLOSE',
  'ERR_SOCKET_CONNECTION_TIMEOUT',
]);
const NETWORK_NAMES = new Set(['TimeoutError', 'RequestTimeoutError', 'NetworkingError']);

/** The longest part of a store's own message kept in ours. */
const MAX_MESSAGE = 300;

interface SdkErrorShape {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  cause?: unknown;
  $metadata?: { httpStatusCode?: unknown };
}

/**
 * Classifies what the SDK threw for one request. Never throws; anything unrecognised is a
 * `failed` (not retried) with the error's name and (shortened) message.
 */
export function classifyStoreError(error: unknown): StoreFailure {
  if (error instanceof StoreFailure) return error;
  const e = (typeof error === 'object' && error !== null ? error : {}) as SdkErrorShape;
  const name = typeof e.name === 'string' ? e.name : 'Error';
  const rawMessage = typeof e.message === 'string' ? e.message : String(error);
  const status = typeof e.$metadata?.httpStatusCode === 'number' ? e.$metadata.httpStatusCode : null;
  const networkCode = findNetworkCode(error);
  const said = shorten(rawMessage);

  if (name === 'CredentialsProviderError' || /could not load credentials/i.test(rawMessage)) {
    return new StoreFailure(
      'auth',
      "no AWS credentials were found in the AWS SDK's default chain (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, " +
        'AWS_PROFILE and ~/.aws, SSO, web identity, container or instance credentials)',
      { status, storeCode: name },
    );
  }
  if (/region is missing/i.test(rawMessage)) {
    return new StoreFailure(
      'failed',
      "no region: set the destination's region in the config, or AWS_REGION (or a profile's region)",
      { status, storeCode: name },
    );
  }
  if (name === 'NoSuchBucket') {
    return new StoreFailure('not_found', `the bucket does not exist (${name}: ${said})`, {
      status,
      storeCode: name,
    });
  }
  if (AUTH_NAMES.has(name) || status === 401 || status === 403) {
    return new StoreFailure('auth', `the credentials were refused (HTTP ${status ?? '-'} ${name}: ${said})`, {
      status,
      storeCode: name,
    });
  }
  if (status === null && (networkCode !== null || NETWORK_NAMES.has(name))) {
    const code = networkCode ?? name;
    return new StoreFailure('unreachable', `no answer (${code}: ${said})`, { status, storeCode: code });
  }
  if (TRANSIENT_NAMES.has(name) || (status !== null && (status >= 500 || status === 429))) {
    return new StoreFailure('server', `HTTP ${status ?? '-'} ${name}: ${said}`, { status, storeCode: name });
  }
  return new StoreFailure('failed', `${status === null ? '' : `HTTP ${status} `}${name}: ${said}`, {
    status,
    storeCode: name,
  });
}

/** A network error code on the error or its causes (the SDK sometimes wraps Node's error). */
function findNetworkCode(error: unknown): string | null {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return code;
    const message = (current as { message?: unknown }).message;
    if (typeof message === 'string' && /socket hang up/i.test(message)) return 'ECONNRESET';
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

function shorten(message: string): string {
  const oneLine = message.replace(/\s+/g, ' ').trim();
  return oneLine.length > MAX_MESSAGE ? `${oneLine.slice(0, MAX_MESSAGE)}…` : oneLine;
}
