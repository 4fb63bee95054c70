import { describe, expect, it } from 'vitest';
import {
  canonicalJson,
  hashJson,
  integerColumn,
  jsonColumn,
  requiredTimestamp,
  timestampColumn,
} from '../../../src/mirror/store/values.js';

describe('timestampColumn', () => {
  it.each([
    ['2025-03-01T10:00:00Z', '2025-03-01T10:00:00.000Z'],
    ['2025-03-01T10:00:00+00:00', '2025-03-01T10:00:00.000Z'],
    ['2025-03-01T12:00:00.5+02:00', '2025-03-01T10:00:00.500Z'],
    ['2025-03-01T10:00:00.123456Z', '2025-03-01T10:00:00.123Z'],
  ])('normalises %s', (input, expected) => {
    expect(timestampColumn(input, 'f')).toBe(expected);
  });

  it.each([['not a time'], ['2025-13-45T99:00:00Z'], [12345]])('rejects %s naming the field', (input) => {
    expect(() => timestampColumn(input, 'profiles[0] (x).last_enriched_at')).toThrow(
      expect.objectContaining({ code: 'ERR_MIRROR_INPUT', field: 'profiles[0] (x).last_enriched_at' }),
    );
  });

  it('passes null through, and requiredTimestamp refuses it', () => {
    expect(timestampColumn(null, 'f')).toBeNull();
    expect(() => requiredTimestamp(undefined, 'syncedAt')).toThrow(/syncedAt: timestamp is required/);
  });
});

describe('json helpers', () => {
  it('canonical JSON ignores key order and keeps bigints exact', () => {
    expect(canonicalJson({ b: 1, a: { d: 2, c: 3 } })).toBe('{"a":{"c":3,"d":2},"b":1}');
    expect(hashJson({ a: 1, b: 2 })).toBe(hashJson({ b: 2, a: 1 }));
    expect(jsonColumn({ n: 2n ** 60n })).toBe(`{"n":"${String(2n ** 60n)}"}`);
  });

  it('integers: bigint kept, fractions refused', () => {
    expect(integerColumn(2n ** 60n, 'x')).toBe(2n ** 60n);
    expect(() => integerColumn(1.5, 'x')).toThrow(/x: expected an integer/);
  });
});
