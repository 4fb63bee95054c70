import { describe, expect, it } from 'vitest';
import { BoundedLog } from '../../../src/simulator/bounded-log.js';

describe('the simulator logs keep their most recent entries (SimulatorOptions.logLimit)', () => {
  it('never holds more than the limit plus a tenth of it, and reads back the last `limit` in order', () => {
    const log = new BoundedLog<number>(1000);
    let longest = 0;
    for (let i = 0; i < 10_000; i++) {
      log.push(i);
      longest = Math.max(longest, log.held);
      const recent = log.entries();
      expect(recent.length).toBe(Math.min(i + 1, 1000));
      expect(recent[recent.length - 1]).toBe(i);
      expect(recent[0]).toBe(Math.max(0, i - 999));
    }
    expect(longest).toBe(1100);
  });

  it('trims one entry at a time when the limit is below ten, and clear() empties it', () => {
    const log = new BoundedLog<string>(2);
    for (const entry of ['a', 'b', 'c', 'd', 'e']) log.push(entry);
    expect(log.held).toBeLessThanOrEqual(3);
    expect(log.entries()).toEqual(['d', 'e']);
    log.clear();
    expect(log.entries()).toEqual([]);
  });
});
