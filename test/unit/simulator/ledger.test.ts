import { describe, expect, it } from 'vitest';
import { Ledger } from '../../../src/simulator/ledger.js';

describe('Ledger', () => {
  it('reserves, settles and releases with available = granted − used − reserved', () => {
    const ledger = new Ledger(100);
    expect(ledger.reserve(10)).toBe(true);
    expect(ledger.reserve(30)).toBe(true);
    expect({ used: ledger.used, reserved: ledger.reserved, available: ledger.available() }).toEqual({
      used: 0,
      reserved: 40,
      available: 60,
    });
    ledger.settle(10);
    ledger.release(30);
    expect({ used: ledger.used, reserved: ledger.reserved, available: ledger.available() }).toEqual({
      used: 10,
      reserved: 0,
      available: 90,
    });
  });

  it('refuses a reservation larger than what is available and changes nothing', () => {
    const ledger = new Ledger(15);
    expect(ledger.reserve(10)).toBe(true);
    expect(ledger.reserve(10)).toBe(false);
    expect(ledger.reserved).toBe(10);
    expect(ledger.charge(6)).toBe(false);
    expect(ledger.charge(5)).toBe(true);
    expect(ledger.available()).toBe(0);
  });

  it('never refuses when no quota is enforced (granted null)', () => {
    const ledger = new Ledger(null);
    expect(ledger.reserve(1_000_000)).toBe(true);
    expect(ledger.charge(1_000_000)).toBe(true);
    expect(ledger.available()).toBe(2_147_483_647);
  });

  it('builds the quota_exceeded body exactly as docs/service-api.md "Errors" shows it', () => {
    const ledger = new Ledger(25);
    ledger.reserve(10);
    ledger.settle(10);
    ledger.reserve(10);
    const body = ledger.quotaExceededBody(10);
    expect(Object.keys(body)).toEqual(['error']);
    expect(Object.keys(body.error).sort()).toEqual(['code', 'details', 'message']);
    expect(body.error.code).toBe('quota_exceeded');
    expect(typeof body.error.message).toBe('string');
    expect(body.error.details).toEqual({ granted: 25, used: 10, reserved: 10 });
  });
});
