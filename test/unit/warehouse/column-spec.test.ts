import { describe, expect, it } from 'vitest';
import {
  INVALID,
  prepareColumns,
  previewValue,
  timestampMicros,
} from '../../../src/warehouse/column-spec.js';
import type { ColumnSpec } from '../../../src/warehouse/column-spec.js';

describe('timestampMicros', () => {
  it.each([
    ['2024-01-31T12:00:00.000Z', Date.UTC(2024, 0, 31, 12) * 1000],
    ['2024-01-31T12:00:00Z', Date.UTC(2024, 0, 31, 12) * 1000],
    ['2024-01-31T12:00:00.5Z', Date.UTC(2024, 0, 31, 12) * 1000 + 500_000],
    ['2024-01-31T12:00:00.123456Z', Date.UTC(2024, 0, 31, 12) * 1000 + 123_456],
    ['2024-02-29T00:00:00.000Z', Date.UTC(2024, 1, 29) * 1000],
    ['2000-02-29T00:00:00.000Z', Date.UTC(2000, 1, 29) * 1000],
    ['2024-01-31T14:00:00+02:00', Date.UTC(2024, 0, 31, 12) * 1000],
    ['2024-01-31T14:00:00.000+0200', Date.UTC(2024, 0, 31, 12) * 1000],
    ['1969-12-31T23:59:59.999Z', -1000],
  ])('parses %s', (text, micros) => {
    expect(timestampMicros(text)).toBe(micros);
  });

  it.each([
    'yesterday',
    '',
    '2024-01-31',
    '2023-02-29T00:00:00.000Z',
    '1900-02-29T00:00:00.000Z',
    '2024-04-31T00:00:00.000Z',
    '2024-13-01T00:00:00.000Z',
    '2024-01-01T24:00:00.000Z',
    '2024-01-01T00:60:00.000Z',
  ])('rejects %j', (text) => {
    expect(timestampMicros(text)).toBeNull();
  });

  it('reads the mirror spelling exactly as Date.parse does, over many instants', () => {
    // The 24-character form has its own fast path; it must agree with the general one.
    let ms = Date.UTC(1000, 0, 1);
    const step = 140_737_488_355; // about 4.5 years and an odd number of milliseconds: up to year 9900
    for (let i = 0; i < 2000; i++, ms += step) {
      const text = new Date(ms).toISOString();
      expect(text).toHaveLength(24);
      expect(timestampMicros(text)).toBe(Date.parse(text) * 1000);
    }
  });

  it.each([
    '2024-0a-31T12:00:00.000Z',
    '2024-01-31T12:00:00.00xZ',
    '2024-01-31t12:00:00.000Z',
    '0999-01-31T12:00:00.000Z',
  ])('does not take %j on the fast path', (text) => {
    const slow = /^0/.test(text) ? Date.UTC(999, 0, 31, 12) * 1000 : null;
    expect(timestampMicros(text)).toBe(slow);
  });

  it('takes Date objects and rejects invalid ones and other types', () => {
    expect(timestampMicros(new Date(1_700_000_000_123))).toBe(1_700_000_000_123_000);
    expect(timestampMicros(new Date(Number.NaN))).toBeNull();
    expect(timestampMicros(1_700_000_000_000)).toBeNull();
  });
});

describe('prepareColumns', () => {
  const all: ColumnSpec[] = [
    { name: 't', type: 'text' },
    { name: 'j', type: 'json', nullable: false },
    { name: 'i', type: 'integer' },
    { name: 'r', type: 'real' },
    { name: 'b', type: 'boolean' },
    { name: 'ts', type: 'timestamp' },
  ];

  it('builds an explicit schema: STRING, INT64, DOUBLE, BOOLEAN, TIMESTAMP(isAdjustedToUTC)', () => {
    const { schema } = prepareColumns(all, 'x');
    expect(schema).toEqual([
      { name: 'root', num_children: 6 },
      {
        name: 't',
        repetition_type: 'OPTIONAL',
        type: 'BYTE_ARRAY',
        converted_type: 'UTF8',
        logical_type: { type: 'STRING' },
      },
      {
        name: 'j',
        repetition_type: 'REQUIRED',
        type: 'BYTE_ARRAY',
        converted_type: 'UTF8',
        logical_type: { type: 'STRING' },
      },
      { name: 'i', repetition_type: 'OPTIONAL', type: 'INT64' },
      { name: 'r', repetition_type: 'OPTIONAL', type: 'DOUBLE' },
      { name: 'b', repetition_type: 'OPTIONAL', type: 'BOOLEAN' },
      {
        name: 'ts',
        repetition_type: 'OPTIONAL',
        type: 'INT64',
        converted_type: 'TIMESTAMP_MICROS',
        logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' },
      },
    ]);
    expect(prepareColumns([{ name: 'ts', type: 'timestamp' }], 'x', 'MILLIS').schema[1]).toMatchObject({
      converted_type: 'TIMESTAMP_MILLIS',
      logical_type: { unit: 'MILLIS' },
    });
  });

  it.each([
    ['integer', 9007199254740993n, 9007199254740993n],
    ['integer', 42, 42n],
    ['integer', -0, 0n],
    ['integer', 2 ** 53, INVALID],
    ['integer', 1.5, INVALID],
    ['integer', '1', INVALID],
    ['real', 1.5, 1.5],
    ['real', 3n, 3],
    ['boolean', 1, true],
    ['boolean', 0n, false],
    ['boolean', true, true],
    ['boolean', 'true', INVALID],
    ['text', 'казино.рф', 'казино.рф'],
    ['text', 1, INVALID],
    ['json', '{"a":1}', '{"a":1}'],
    ['json', { a: [1n] }, '{"a":["1"]}'],
    ['json', () => 1, INVALID],
    // A number (epoch microseconds, a safe integer): hyparquet-writer makes the INT64 bigint itself.
    ['timestamp', '2024-01-01T00:00:00.001Z', Date.UTC(2024, 0, 1) * 1000 + 1000],
    ['timestamp', 'nope', INVALID],
  ] as const)('%s converts %s', (type, input, expected) => {
    const { prepared } = prepareColumns([{ name: 'c', type }], 'x');
    expect(prepared[0]!.convert(input)).toEqual(expected);
  });

  it('rejects empty, duplicated and unknown columns naming the table', () => {
    expect(() => prepareColumns([], 'licenses')).toThrow(/table "licenses": at least one column/);
    expect(() =>
      prepareColumns(
        [
          { name: 'a', type: 'text' },
          { name: 'a', type: 'text' },
        ],
        'licenses',
      ),
    ).toThrow(/"a" is listed twice/);
    expect(() => prepareColumns([{ name: 'a', type: 'date' as never }], 'licenses')).toThrow(
      /unknown type "date"/,
    );
    expect(() => prepareColumns([{ name: '', type: 'text' }], 'licenses')).toThrow(/empty name/);
  });
});

describe('previewValue', () => {
  it('shortens long strings and names objects without dumping them', () => {
    expect(previewValue('x'.repeat(100))).toBe(`"${'x'.repeat(60)}…"`);
    expect(previewValue(5n)).toBe('5n');
    expect(previewValue({ secret: 'k' })).toBe('[object Object]');
    expect(previewValue(undefined)).toBe('undefined');
  });
});
