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
  it('returns canonical timestamps unchanged, exactly as Date writes them', () => {
    // Every day of several months and years, at varied times: a canonical value comes back as it
    // is, Date's own canonical form, on the 29th to 31st as on any other day.
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

describe('normalizeTimestamp, every UTC spelling', () => {
  // The service may write a UTC instant in any of these spellings (docs/contract.md "Behaviour
  // details"); each must come out as the instant Date itself gives, and an impossible day as null.
  const offsets = ['Z', 'z', '+00:00', '+0000', '-00:00', ''];
  const fractions = ['', '.5', '.12', '.123', '.123456', '.9999999'];
  const expectedFor = (y: number, mo: number, d: number, h: number, mi: number, s: number, frac: string) => {
    const date = new Date(0);
    date.setUTCFullYear(y, mo - 1, d);
    date.setUTCHours(h, mi, s, Number(frac.slice(1, 4).padEnd(3, '0')));
    // A day the month does not have rolls over into the next month: the input is no timestamp.
    return date.getUTCDate() === d ? date.toISOString() : null;
  };
  const two = (n: number) => String(n).padStart(2, '0');

  it('agrees with Date on every day of leap, common and century years, in every spelling', () => {
    let checked = 0;
    for (const year of [1900, 2000, 2023, 2024, 2100]) {
      for (let month = 1; month <= 12; month++) {
        for (let day = 27; day <= 31; day++) {
          const [h, mi, s] = [(day * 5) % 24, (day * 11) % 60, (month * 7) % 60];
          for (const offset of offsets) {
            for (const fraction of fractions) {
              for (const sep of ['T', ' ']) {
                const text = `${year}-${two(month)}-${two(day)}${sep}${two(h)}:${two(mi)}:${two(s)}${fraction}${offset}`;
                expect(normalizeTimestamp(text), text).toBe(
                  expectedFor(year, month, day, h, mi, s, fraction),
                );
                checked++;
              }
            }
          }
        }
      }
    }
    expect(checked).toBe(5 * 12 * 5 * offsets.length * fractions.length * 2);
  });

  it.each([
    ['2026-03-31T10:20+00:00', '2026-03-31T10:20:00.000Z'],
    ['2024-12-31T23:59:59.9999Z', '2024-12-31T23:59:59.999Z'],
    [' 2026-03-31T10:20:30Z ', '2026-03-31T10:20:30.000Z'],
    ['2026-03-31T12:20:30+02:00', '2026-03-31T10:20:30.000Z'],
    ['2026-03-01T00:30:00+01:00', '2026-02-28T23:30:00.000Z'],
    // Leap seconds: ISO 8601 allows second 60; stored as the last millisecond of the minute.
    ['2016-12-31T23:59:60Z', '2016-12-31T23:59:59.999Z'],
    ['2016-12-31T23:59:60.000Z', '2016-12-31T23:59:59.999Z'],
    ['2016-12-31T23:59:60.5+00:00', '2016-12-31T23:59:59.999Z'],
    ['2016-12-31 23:59:60', '2016-12-31T23:59:59.999Z'],
    ['2017-01-01T00:59:60+01:00', '2016-12-31T23:59:59.999Z'],
    [' 2016-12-31T23:59:60Z ', '2016-12-31T23:59:59.999Z'],
  ])('%s → %s', (input, expected) => expect(normalizeTimestamp(input)).toBe(expected));

  it.each([
    '2026-02-29T00:00:00+00:00',
    '2100-02-29T00:00:00Z',
    '2026-06-31T00:00:00.000+0000',
    '2026-01-01T23:60:00Z',
    '2026-01-01T23:59:61Z',
    '2026-01-01T12:00:00+00:0',
    '2026-01-01T12:00:00.Z',
  ])('rejects %s', (input) => expect(normalizeTimestamp(input)).toBeNull());
});
