import { describe, expect, it } from 'vitest';
import type { PostgresDestinationConfig } from '../../../src/config/destinations.js';
import { copyTextRow, copyTextValue } from '../../../src/destinations/postgres/copy-text.js';
import { isTransient } from '../../../src/destinations/postgres/errors.js';
import { mergeSql, planSchema, type ExistingTable } from '../../../src/destinations/postgres/schema-plan.js';
import { resolveConnectionSettings } from '../../../src/destinations/postgres/settings.js';
import type { PublishColumn } from '../../../src/mirror/store/publish.js';

const destination = (url: string): PostgresDestinationConfig => ({
  type: 'postgres',
  name: 'warehouse',
  url,
  schema: 'domain_sync',
});

describe('COPY text', () => {
  it('escapes what COPY reads specially, writes NULL as \\N and booleans as t/f', () => {
    expect(copyTextValue('a\\b\tc\nd\re', 'text')).toBe('a\\\\b\\tc\\nd\\re');
    expect(copyTextValue(null, 'timestamp')).toBe('\\N');
    expect(copyTextValue('\\N', 'text')).toBe('\\\\N');
    expect(copyTextValue(1n, 'boolean')).toBe('t');
    expect(copyTextValue(0n, 'boolean')).toBe('f');
    expect(copyTextValue(9007199254740993n, 'integer')).toBe('9007199254740993');
    expect(copyTextValue('2026-01-02T03:04:05.678Z', 'timestamp')).toBe('2026-01-02T03:04:05.678Z');
    expect(copyTextValue('{"a":"x\\ny"}', 'json')).toBe('{"a":"x\\\\ny"}');
    expect(copyTextValue('ünïcødé ✓', 'text')).toBe('ünïcødé ✓');
  });

  it('joins a row with tabs and ends it with a newline', () => {
    expect(copyTextRow(['a', null, 1n, 2.5], ['text', 'text', 'boolean', 'real'])).toBe('a\t\\N\tt\t2.5\n');
  });
});

describe('connection settings (libpq rules)', () => {
  it('url first, then the PG* variables, then libpq defaults; never a password', () => {
    const s = resolveConnectionSettings(
      destination('postgres://alice@db.example:6543/analytics?sslmode=require'),
      {
        PGHOST: 'ignored',
        PGPASSWORD: 'secret',
        PGCONNECT_TIMEOUT: '5',
      },
    );
    expect(s).toEqual({
      destination: 'warehouse',
      host: 'db.example',
      port: 6543,
      user: 'alice',
      database: 'analytics',
      schema: 'domain_sync',
      sslMode: 'require',
      sslRootCert: null,
      connectTimeoutMs: 5_000,
      options: null,
      applicationName: 'domain-sync',
    });
    expect(JSON.stringify(s)).not.toContain('secret');
    const fromEnv = resolveConnectionSettings(destination('postgres:///'), {
      PGHOST: 'h',
      PGPORT: '7000',
      PGUSER: 'bob',
      PGSSLMODE: 'disable',
      PGOPTIONS: '-c statement_timeout=5000',
    });
    expect(fromEnv).toMatchObject({
      host: 'h',
      port: 7000,
      user: 'bob',
      database: 'bob',
      sslMode: 'disable',
    });
    expect(fromEnv.options).toBe('-c statement_timeout=5000');
  });

  it('defaults: prefer TLS, 10 s connect timeout (at least 2 s, never unlimited)', () => {
    expect(resolveConnectionSettings(destination('postgres://a@h/d'), {})).toMatchObject({
      port: 5432,
      sslMode: 'prefer',
      connectTimeoutMs: 10_000,
    });
    expect(
      resolveConnectionSettings(destination('postgres://a@h/d?connect_timeout=1'), {}).connectTimeoutMs,
    ).toBe(2_000);
    expect(
      resolveConnectionSettings(destination('postgres://a@h/d?connect_timeout=0'), {}).connectTimeoutMs,
    ).toBe(10_000);
  });

  it('refuses what libpq would not accept, naming the key (exit 2)', () => {
    expect(() => resolveConnectionSettings(destination('postgres://a@h/d?sslmode=maybe'), {})).toThrow(
      /destinations.warehouse.url sslmode: "maybe" is not an sslmode/,
    );
    expect(() => resolveConnectionSettings(destination('postgres://a@h/d?pasword=x'), {})).toThrow(
      /destinations.warehouse.url: unknown parameter "pasword"/,
    );
    try {
      resolveConnectionSettings(destination('postgres://a@h/d?sslmode=maybe'), {});
    } catch (error) {
      expect((error as { code: string }).code).toBe('ERR_CONFIG');
    }
  });
});

const col = (name: string, type: PublishColumn['type'], pk = 0): PublishColumn => ({ name, type, pk });
const shape = {
  table: 'licenses',
  columns: [
    col('domain_normalized', 'text', 1),
    col('jurisdiction', 'text', 2),
    col('status', 'text'),
    col('removed_at', 'timestamp'),
  ],
};
const table = (
  columns: Record<string, string>,
  uniqueKeys: string[][],
  notNull: string[] = [],
): ExistingTable => ({
  columns: new Map(
    Object.entries(columns).map(([n, type]) => [
      n,
      { type, notNull: notNull.includes(n), hasDefault: false },
    ]),
  ),
  uniqueKeys,
});

describe('schema plan', () => {
  it('creates missing tables and adds missing columns', () => {
    expect(planSchema('s', [shape], new Map()).create).toEqual([shape]);
    const plan = planSchema(
      's',
      [shape],
      new Map([
        [
          'licenses',
          table({ domain_normalized: 'text', jurisdiction: 'text', status: 'text' }, [
            ['domain_normalized', 'jurisdiction'],
          ]),
        ],
      ]),
    );
    expect(plan).toEqual({
      create: [],
      addColumns: [{ table: 'licenses', column: shape.columns[3] }],
      problems: [],
    });
  });

  it('names every table and column that cannot hold the data, and a missing key', () => {
    const plan = planSchema(
      's',
      [shape],
      new Map([
        [
          'licenses',
          table(
            {
              domain_normalized: 'text',
              jurisdiction: 'character varying(2)',
              status: 'text',
              removed_at: 'timestamp without time zone',
              extra: 'text',
            },
            [['jurisdiction']],
            ['extra'],
          ),
        ],
      ]),
    );
    expect(plan.problems).toEqual([
      'table s.licenses, column jurisdiction: its type character varying(2) cannot hold text (publish creates it as text)',
      'table s.licenses, column removed_at: its type timestamp without time zone cannot hold timestamps with a time zone (publish creates it as timestamp with time zone)',
      'table s.licenses, column extra: NOT NULL without a default, and the mirror has no such column to fill it',
      'table s.licenses: no primary key or unique index on (domain_normalized, jurisdiction), the key publish merges rows by',
    ]);
  });

  it('merges by key and leaves identical rows alone', () => {
    expect(mergeSql('s', shape, '_stage_licenses')).toBe(
      'INSERT INTO "s"."licenses" AS t ("domain_normalized", "jurisdiction", "status", "removed_at") ' +
        'SELECT "domain_normalized", "jurisdiction", "status", "removed_at" FROM "_stage_licenses" ' +
        'ON CONFLICT ("domain_normalized", "jurisdiction") DO UPDATE SET "status" = EXCLUDED."status", "removed_at" = EXCLUDED."removed_at" ' +
        'WHERE (t."status", t."removed_at") IS DISTINCT FROM (EXCLUDED."status", EXCLUDED."removed_at")',
    );
  });
});

describe('transient failures', () => {
  it('a dropped connection or a server restart may be retried; a timeout, a bad value or refused credentials may not', () => {
    expect(
      isTransient(
        Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
      ),
    ).toBe(true);
    expect(isTransient(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isTransient(Object.assign(new Error('x'), { code: 'ECONNRESET' }))).toBe(true);
    expect(
      isTransient(
        Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }),
      ),
    ).toBe(false);
    expect(isTransient(Object.assign(new Error('invalid input syntax'), { code: '22007' }))).toBe(false);
    expect(isTransient(Object.assign(new Error('password authentication failed'), { code: '28P01' }))).toBe(
      false,
    );
  });
});
