import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ProtocolError } from '../../../src/api/errors.js';
import { normalizeTimestamp } from '../../../src/util/time.js';
import {
  AccountResponseSchema,
  DomainProfileResponseSchema,
  DomainSearchResponseSchema,
  EnrichmentRunResponseSchema,
  EnrichmentStartedResponseSchema,
  ExportInfoResponseSchema,
  formatFieldPath,
  parseWire,
  TimestampSchema,
} from '../../../src/api/wire.js';

function fixture(name: string): unknown {
  return JSON.parse(
    readFileSync(fileURLToPath(new URL(`../../fixtures/api/${name}`, import.meta.url)), 'utf8'),
  );
}

function protocolError(fn: () => unknown): ProtocolError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ProtocolError);
    return error as ProtocolError;
  }
  throw new Error('expected a ProtocolError');
}

describe('wire schemas tolerate what the spec leaves open', () => {
  it('keeps unknown fields, accepts +00:00, missing and extra fraction digits, nulls', () => {
    const body = parseWire(DomainSearchResponseSchema, fixture('search-page-quirky.json'), 'GET', '/domains');
    expect(body.data.domains).toHaveLength(4);
    expect(body.data.domains[0]!.x_sim_revision).toBe(4);
    expect(body.data.domains[0]!.last_enriched_at).toBe('2025-11-02T10:00:00+00:00'); // kept as sent
    expect(body.data.domains[1]!.company_name).toBeNull();
    expect(body.data.next_cursor).toBe('opaque');
    expect(body.x_envelope_extra).toEqual({ nested: [1, 2] });
  });

  it('accepts unknown enum values, null optional strings and any section shape', () => {
    const profile = parseWire(
      DomainProfileResponseSchema,
      fixture('profile-quirky.json'),
      'GET',
      '/domains/x',
    ).data;
    expect(profile.status).toBe('reviewing');
    expect(profile.operator?.legal_entity_name).toBeNull();
    expect(profile.licenses?.[0]?.source_url).toBeNull();
    expect(profile.licenses?.[1]?.jurisdiction).toBe('isle_of_man');
    expect(profile.licenses?.[1]?.status).toBe('suspended');
    expect(profile.payment_methods?.[0]?.confidence).toBe('medium');
    expect(profile.payment_methods?.[1]?.category).toBe('instant_payment');
    expect(profile.related_domains).toBe('not even an array');
    expect(profile.game_providers).toEqual([{ name: 'NetEnt', anything: { goes: true } }]);
    expect(profile.x_unknown_section).toEqual({ a: 1 });
    expect(profile.meta?.extra).toBe(1);
  });

  it('accepts a run with an unknown status and a failed run without domain', () => {
    const run = parseWire(
      EnrichmentRunResponseSchema,
      fixture('run-unknown-status.json'),
      'GET',
      '/enrichment_runs/42',
    ).data;
    expect(run.status).toBe('queued_for_review');
    expect(run.x_queue_position).toBe(3);
    const failed = parseWire(
      EnrichmentRunResponseSchema,
      fixture('run-failed.json'),
      'GET',
      '/enrichment_runs/43',
    ).data;
    expect(failed.error_details?.error_type).toBe('captcha_wall');
    expect(failed.domain).toBeUndefined();
  });

  it('accepts credits_granted null (no quota) and a pending export shape', () => {
    expect(
      parseWire(AccountResponseSchema, fixture('account-unlimited.json'), 'GET', '/account').data
        .credits_granted,
    ).toBeNull();
    expect(
      parseWire(ExportInfoResponseSchema, fixture('export-pending.json'), 'GET', '/exports/5').data.status,
    ).toBe('processing');
  });
});

describe('wire schemas refuse what callers depend on', () => {
  it.each([
    [
      'a search item without domain_normalized',
      DomainSearchResponseSchema,
      'search-page-missing-field.json',
      'GET',
      '/domains',
      'GET /domains: data.domains[3].domain_normalized: expected string, got missing',
    ],
    [
      'a 202 without enrichment_run_id',
      EnrichmentStartedResponseSchema,
      'enrichment-202-missing-run-id.json',
      'POST',
      '/enrichments',
      'POST /enrichments: data.enrichment_run_id: expected number, got missing',
    ],
    [
      'an account without credits_granted',
      AccountResponseSchema,
      'account-missing-granted.json',
      'GET',
      '/account',
      'GET /account: data.credits_granted: expected number, got missing',
    ],
    [
      'a timestamp that is not ISO 8601',
      DomainSearchResponseSchema,
      'search-page-bad-timestamp.json',
      'GET',
      '/domains',
      'GET /domains: data.domains[0].last_enriched_at: expected an ISO 8601 timestamp',
    ],
  ] as const)('%s', (_name, schema, file, method, path, message) => {
    const error = protocolError(() => parseWire(schema, fixture(file), method, path, 200));
    expect(error.code).toBe('ERR_PROTOCOL');
    expect(error.failure).toBe('schema');
    expect(error.retryable).toBe(false);
    expect(error.message).toBe(message);
  });

  it('names the body when it is not an object', () => {
    const error = protocolError(() => parseWire(AccountResponseSchema, [1, 2], 'GET', '/account'));
    expect(error.fieldPath).toBe('(body)');
  });

  it('formats field paths', () => {
    expect(formatFieldPath(['data', 'domains', 3, 'x'])).toBe('data.domains[3].x');
    expect(formatFieldPath([])).toBe('(body)');
  });
});

describe('TimestampSchema', () => {
  it.each([
    '2025-11-02T10:00:00Z',
    '2025-11-02T10:00:00.123Z',
    '2025-11-02T10:00:00.123456Z',
    '2025-11-02T10:00:00+00:00',
    '2025-11-02T10:00:00+0000',
    '2025-11-02T10:00Z',
    '2025-11-02 10:00:00',
    '2025-11-02',
    '2016-12-31T23:59:60Z',
    '2016-12-31T23:59:60.5+00:00',
  ])('accepts %s, which the mirror can store', (value) => {
    expect(TimestampSchema.safeParse(value).success).toBe(true);
    // What the client accepts, the mirror normalises: no value passes one and fails the other.
    expect(normalizeTimestamp(value)).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });
  it.each(['yesterday', '2025-13-02T10:00:00Z', '2025-11-02T25:00:00Z', '2025-11-02T10:00:00 UTC', ''])(
    'refuses %s',
    (value) => {
      expect(TimestampSchema.safeParse(value).success).toBe(false);
    },
  );
});
