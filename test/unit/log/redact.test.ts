import { describe, expect, it } from 'vitest';
import { redact, redactText, registerSecret } from '../../../src/log/redact.js';
import { parseLogLevel } from '../../../src/log/logger.js';

describe('redact', () => {
  it('removes client_ keys, bearer tokens and registered secrets from text', () => {
    registerSecret('odd-secret-value-42');
    const text = 'key client_AbC123 and Bearer tok.en_9 and odd-secret-value-42 and ?api_key=zzz&x=1';
    const out = redactText(text);
    expect(out).not.toContain('client_AbC123');
    expect(out).not.toContain('tok.en_9');
    expect(out).not.toContain('odd-secret-value-42');
    expect(out).not.toContain('zzz');
    expect(out).toContain('x=1');
  });

  it('masks secret headers and walks nested values and errors', () => {
    const value = redact({
      headers: { 'X-API-Key': 'anything', Authorization: 'Bearer x', accept: 'application/json' },
      nested: [{ msg: 'used client_zz9' }],
      error: new Error('failed with client_qq1'),
    });
    expect(value.headers['X-API-Key']).toBe('[REDACTED]');
    expect(value.headers.Authorization).toBe('[REDACTED]');
    expect(value.headers.accept).toBe('application/json');
    expect(JSON.stringify(value.nested)).not.toContain('client_zz9');
    expect(value.error.message).not.toContain('client_qq1');
  });
});

describe('parseLogLevel', () => {
  it('accepts known levels and warns about unknown ones, naming the source', () => {
    expect(parseLogLevel('DEBUG', 'x')).toEqual({ level: 'debug' });
    expect(parseLogLevel(undefined, 'x')).toEqual({ level: 'info' });
    const bad = parseLogLevel('chatty', 'DOMAIN_SYNC_LOG');
    expect(bad.level).toBe('info');
    expect(bad.warning).toMatch(/^DOMAIN_SYNC_LOG: unknown log level "chatty"/);
  });
});
