/** Header names whose values are secrets. */
const SECRET_HEADERS = new Set(['x-api-key', 'authorization', 'proxy-authorization', 'cookie', 'set-cookie']);
/** Query parameter names whose values are secrets. */
const SECRET_PARAMS = /([?&](?:api[_-]?key|key|token|access[_-]?token|auth)=)[^&#\s]*/gi;
/** Anything that looks like a service API key (`client_` prefix, docs/service-api.md "Authentication"). */
const KEY_LIKE = /\bclient_[A-Za-z0-9_\-.~+/=]{2,}/g;
const BEARER = /(Bearer\s+)[A-Za-z0-9_\-.~+/=]+/gi;

const secrets = new Set<string>();

/**
 * Registers a secret value (the API key) so that {@link redact} replaces it wherever it appears,
 * even when it does not look like a key.
 */
export function registerSecret(value: string | undefined): void {
  if (value && value.length >= 4) secrets.add(value);
}

/**
 * Removes secrets from text, header objects, URLs and nested values: registered secrets,
 * `client_…` keys, bearer tokens, secret headers and secret query parameters.
 * Runs on everything before it is logged, stored or shown.
 */
export function redact<T>(value: T): T {
  return redactValue(value, 0) as T;
}

/** {@link redact} for a string. */
export function redactText(text: string): string {
  let out = text;
  for (const secret of secrets) out = out.split(secret).join('[REDACTED]');
  return out
    .replace(KEY_LIKE, '[REDACTED]')
    .replace(BEARER, '$1[REDACTED]')
    .replace(SECRET_PARAMS, '$1[REDACTED]');
}

function redactValue(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return redactText(value);
  if (value === null || typeof value !== 'object' || depth > 8) return value;
  if (value instanceof Error) {
    const copy = new Error(redactText(value.message));
    copy.name = value.name;
    if (value.stack) copy.stack = redactText(value.stack);
    return copy;
  }
  if (Array.isArray(value)) return value.map((item) => redactValue(item, depth + 1));
  if (value instanceof Date || value instanceof Uint8Array) return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
    out[key] = SECRET_HEADERS.has(key.toLowerCase()) ? '[REDACTED]' : redactValue(inner, depth + 1);
  }
  return out;
}
