import { describe, expect, it } from 'vitest';
import { appendBounded, recentEntries } from '../../../src/simulator/service.js';

describe('the simulator logs keep their most recent entries (SimulatorOptions.logLimit)', () => {
  it('never holds more than the limit plus a tenth of it, and reads back the last `limit` in order', () => {
    const log: number[] = [];
    let longest = 0;
    for (let i = 0; i < 10_000; i++) {
      appendBounded(log, i, 1000);
      longest = Math.max(longest, log.length);
      const recent = recentEntries(log, 1000);
      expect(recent.length).toBe(Math.min(i + 1, 1000));
      expect(recent[recent.length - 1]).toBe(i);
      expect(recent[0]).toBe(Math.max(0, i - 999));
    }
    expect(longest).toBe(1100);
  });

  it('trims one entry at a time when the limit is below ten', () => {
    const log: string[] = [];
    for (const entry of ['a', 'b', 'c', 'd', 'e']) appendBounded(log, entry, 2);
    expect(log.length).toBeLessThanOrEqual(3);
    expect(recentEntries(log, 2)).toEqual(['d', 'e']);
  });
});
