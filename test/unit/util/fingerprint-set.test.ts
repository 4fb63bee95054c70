import { describe, expect, it } from 'vitest';
import { FingerprintSet } from '../../../src/util/fingerprint-set.js';

/** Domain-like names that differ in one character, in their length, in case and in script. */
function names(count: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    switch (i % 4) {
      case 0:
        out.push(`casino-${i}.example.com`);
        break;
      case 1:
        out.push(`Casino-${i}.example.com`);
        break;
      case 2:
        out.push(`казино-${i}.рф`);
        break;
      default:
        out.push(`${'b'.repeat(i % 50)}${i}.bet`);
    }
  }
  return out;
}

describe('FingerprintSet', () => {
  it('answers as a Set of the same strings would, while growing from its smallest table', () => {
    const all = names(300_000);
    const inside = all.filter((_, i) => i % 3 !== 0);
    const outside = all.filter((_, i) => i % 3 === 0);
    const set = new FingerprintSet();
    for (const name of inside) expect(set.add(name)).toBe(true);
    expect(set.size).toBe(inside.length);
    for (const name of inside) expect(set.add(name)).toBe(false);
    // A string never added is not a member (no two of these 300,000 share a fingerprint).
    for (const name of outside) expect(set.add(name)).toBe(true);
    expect(set.size).toBe(all.length);
  });

  it('adds a string once: a second add is false and leaves the size alone', () => {
    const set = new FingerprintSet();
    expect(set.add('a.com')).toBe(true);
    expect(set.add('b.com')).toBe(true);
    expect(set.add('a.com')).toBe(false);
    expect(set.size).toBe(2);
    expect(set.add('c.com')).toBe(true);
    expect(set.size).toBe(3);
  });

  it('tells apart the empty string, the same code units in another order, and one more or fewer', () => {
    const set = new FingerprintSet();
    expect(set.add('')).toBe(true);
    expect(set.add('ab')).toBe(true);
    expect(set.add('')).toBe(false);
    expect(set.add('ba')).toBe(true);
    expect(set.add('ab\u0000')).toBe(true);
    expect(set.add('a')).toBe(true);
    expect(set.size).toBe(5);
  });
});
