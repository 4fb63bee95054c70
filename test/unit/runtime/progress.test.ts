import { describe, expect, it } from 'vitest';
import { MemoryLogger } from '../../../src/log/logger.js';
import {
  PROGRESS_LOG_INTERVAL_MS,
  progressCadence,
  throttledProgressLog,
} from '../../../src/runtime/progress.js';

describe('throttledProgressLog', () => {
  it('logs the first call, then at most one call per interval of its clock', () => {
    const logger = new MemoryLogger();
    let now = 1_000_000;
    const log = throttledProgressLog(logger, () => now);
    const at = (ms: number, rows: number): void => {
      now = 1_000_000 + ms;
      log('work progress', { rows });
    };
    at(0, 1);
    at(1, 2);
    at(PROGRESS_LOG_INTERVAL_MS - 1, 3);
    at(PROGRESS_LOG_INTERVAL_MS, 4);
    at(PROGRESS_LOG_INTERVAL_MS + 10, 5);
    at(3 * PROGRESS_LOG_INTERVAL_MS, 6);
    expect(logger.events).toEqual([
      { level: 'info', msg: 'work progress', fields: { rows: 1 } },
      { level: 'info', msg: 'work progress', fields: { rows: 4 } },
      { level: 'info', msg: 'work progress', fields: { rows: 6 } },
    ]);
  });

  it('logs at most once per the interval it is given', () => {
    const logger = new MemoryLogger();
    let now = 0;
    const log = throttledProgressLog(logger, () => now, 100);
    for (now = 0; now < 1_000; now += 30) log('tick', { now });
    // Logged at 0, 120, 240, …: the first reading at least 100 ms after the last logged one.
    expect(logger.events.map((e) => e.fields.now)).toEqual([0, 120, 240, 360, 480, 600, 720, 840, 960]);
  });
});

describe('progressCadence', () => {
  it('given a start, says true only once the interval has passed since it (as sync starts it)', () => {
    let now = 500;
    const due = progressCadence(() => now, 100, 500);
    const at = (ms: number): boolean => {
      now = ms;
      return due();
    };
    expect([at(500), at(599), at(600), at(650), at(700), at(799), at(800)]).toEqual([
      false,
      false,
      true,
      false,
      true,
      false,
      true,
    ]);
  });
});
