import { describe, expect, it } from 'vitest';
import { normalizeTimestamp } from '../../../src/util/time.js';
import { backoffDelayMs } from '../../../src/util/sleep.js';

describe('normalizeTimestamp', () => {
  it('accepts February 29th of a leap year', () => {
    expect(normalizeTimestamp('2024-02-29T10:00:00+00:00')).toBe('2024-02-29T10:00:00.000Z');
  });

  it.each([
    ['2026-01-02T03:04:05.678Z', '2026-01-02T03:04:05.678Z'],
    ['2026-01-02T03:04:05Z', '2026-01-02T03:04:05.000Z'],
    ['2026-01-02T03:04:05+00:00', '2026-01-02T03:04:05.000Z'],
    ['2026-01-02T05:04:05.5+02:00', '2026-01-02T03:04:05.500Z'],
    ['2026-01-02T03:04:05.123456Z', '2026-01-02T03:04:05.123Z'],
    ['2026-01-02T03:04:05+0000', '2026-01-02T03:04:05.000Z'],
    ['2026-01-02T03:04:05', '2026-01-02T03:04:05.000Z'],
    ['2026-01-02 03:04:05Z', '2026-01-02T03:04:05.000Z'],
    ['2026-01-02', '2026-01-02T00:00:00.000Z'],
  ])('%s → %s', (input, expected) => expect(normalizeTimestamp(input)).toBe(expected));

  it.each(['', 'yesterday', '2026-13-45T00:00:00Z', '1700000000', '2026-01-02T03:04:05 GMT'])(
    'rejects "%s"',
    (input) => expect(normalizeTimestamp(input)).toBeNull(),
  );

  it('orders normalised values by text', () => {
    const a = normalizeTimestamp('2026-01-02T03:04:05+01:00')!;
    const b = normalizeTimestamp('2026-01-02T02:30:00Z')!;
    expect(a < b).toBe(true);
  });
});

describe('backoffDelayMs', () => {
  it('stays within [0, min(cap, base·2^attempt)]', () => {
    expect(backoffDelayMs(0, 100, 10_000, () => 0.999)).toBe(99);
    expect(backoffDelayMs(3, 100, 10_000, () => 0.5)).toBe(400);
    expect(backoffDelayMs(20, 100, 10_000, () => 0.5)).toBe(5000);
    expect(backoffDelayMs(5, 100, 10_000, () => 0)).toBe(0);
  });
});

describe('normalizeTimestamp fast path', () => {
  it('returns canonical timestamps unchanged, exactly as the full parse would', () => {
    // Every day of several months and years, at varied times: the fast path (day ≤ 28) and the
    // full parse (29–31) must agree with Date's own canonical form.
    for (const year of [1970, 2000, 2024, 2026, 2100]) {
      for (let month = 0; month < 12; month++) {
        for (let day = 1; day <= 31; day++) {
          const ms = Date.UTC(year, month, day, (day * 7) % 24, (day * 13) % 60, (day * 17) % 60, day * 31);
          const iso = new Date(ms).toISOString();
          expect(normalizeTimestamp(iso)).toBe(iso);
        }
      }
    }
  });

  it.each([
    '2026-02-29T00:00:00.000Z',
    '2026-13-01T00:00:00.000Z',
    '2026-00-10T00:00:00.000Z',
    '2026-04-31T12:00:00+02:00',
    '2026-01-10T25:00:00.000Z',
  ])('still rejects %s', (input) => expect(normalizeTimestamp(input)).toBeNull());
});
