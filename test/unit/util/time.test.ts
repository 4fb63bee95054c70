import { describe, expect, it } from 'vitest';
import { normalizeTimestamp } from '../../../src/util/time.js';
import { backoffDelayMs } from '../../../src/util/sleep.js';

describe('normalizeTimestamp', () => {
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
