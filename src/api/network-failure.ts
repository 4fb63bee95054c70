import type { NetworkFailure } from './errors.js';

/** Classifies a transport error by its code (undici `UND_ERR_*` or a system `E…` code). */
export function classifyNetworkError(error: unknown): {
  failure: NetworkFailure;
  requestSent: boolean;
  what: string;
  retryable: boolean;
} {
  const record = error as { code?: unknown; cause?: { code?: unknown } } | null;
  const code = String(record?.code ?? record?.cause?.code ?? '');
  switch (code) {
    // The connection was never made, so the request surely did not reach the service.
    case 'ECONNREFUSED':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return {
        failure: 'connect',
        requestSent: false,
        what: `connection refused (${code})`,
        retryable: true,
      };
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return { failure: 'dns', requestSent: false, what: `host not found (${code})`, retryable: true };
    case 'UND_ERR_CONNECT_TIMEOUT':
      return { failure: 'connect_timeout', requestSent: false, what: 'connect timeout', retryable: true };
    // The client itself is closed: nothing was sent, and retrying cannot help.
    case 'UND_ERR_CLOSED':
    case 'UND_ERR_DESTROYED':
      return { failure: 'other', requestSent: false, what: 'client closed', retryable: false };
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return {
        failure: 'timeout',
        requestSent: true,
        what: 'timed out waiting for the response',
        retryable: true,
      };
    // A reset may come before or after the service processed the request: ambiguous.
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
      return { failure: 'reset', requestSent: true, what: `connection reset (${code})`, retryable: true };
    default:
      return {
        failure: 'other',
        requestSent: true,
        what: code ? `request failed (${code})` : 'request failed',
        retryable: true,
      };
  }
}
