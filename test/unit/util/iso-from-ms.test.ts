import { describe, expect, it } from 'vitest';
import { isoFromMs } from '../../../src/util/time.js';
import { Prng } from '../../../src/simulator/prng.js';

const LAST_FOUR_DIGIT_YEAR_MS = Date.parse('9999-12-31T23:59:59.999Z');

describe('isoFromMs', () => {
  it('writes exactly what toISOString writes at the edges of days, months, years and its range', () => {
    const edges = [
      0,
      -0,
      1,
      999,
      1000,
      86_399_999,
      86_400_000,
      Date.parse('1972-02-29T23:59:59.999Z'),
      Date.parse('2000-02-29T00:00:00.000Z'),
      Date.parse('2000-03-01T00:00:00.000Z'),
      Date.parse('2100-02-28T23:59:59.999Z'),
      Date.parse('2100-03-01T00:00:00.000Z'),
      Date.parse('2024-12-31T23:59:59.999Z'),
      Date.parse('2025-01-01T00:00:00.000Z'),
      LAST_FOUR_DIGIT_YEAR_MS,
    ];
    for (const ms of edges) expect(isoFromMs(ms), String(ms)).toBe(new Date(ms).toISOString());
  });

  it('agrees with toISOString on random instants, by millisecond and by day', () => {
    const rng = new Prng(20_250_601);
    for (let i = 0; i < 200_000; i++) {
      // Whole range, then a dense walk near now, where the catalogue's timestamps are.
      const ms =
        i % 2 === 0
          ? Math.floor(rng.next() * LAST_FOUR_DIGIT_YEAR_MS)
          : Date.parse('2024-01-01T00:00:00.000Z') + Math.floor(rng.next() * 2 * 365 * 86_400_000);
      const actual = isoFromMs(ms);
      const expected = new Date(ms).toISOString();
      if (actual !== expected) expect(actual, String(ms)).toBe(expected);
    }
    for (let day = 0; day < 3_000_000; day += 7) {
      const ms = day * 86_400_000 + (day % 86_400_000);
      if (ms > LAST_FOUR_DIGIT_YEAR_MS) break;
      const actual = isoFromMs(ms);
      const expected = new Date(ms).toISOString();
      if (actual !== expected) expect(actual, String(ms)).toBe(expected);
    }
  });

  it('falls back to toISOString outside 1970..9999 and for fractional instants', () => {
    for (const ms of [
      -1,
      -86_400_001,
      -62_198_755_200_000,
      LAST_FOUR_DIGIT_YEAR_MS + 1,
      8.64e15,
      1.5,
      1e12 + 0.25,
    ])
      expect(isoFromMs(ms), String(ms)).toBe(new Date(ms).toISOString());
    expect(() => isoFromMs(Number.NaN)).toThrow(RangeError);
    expect(() => isoFromMs(8.64e15 + 1)).toThrow(RangeError);
  });
});
