import { describe, expect, it } from 'vitest';
import { FaultInjector } from '../../../src/simulator/faults.js';

describe('FaultInjector', () => {
  it('matches by method and path prefix, honours times, and counts by kind', () => {
    const f = new FaultInjector(1);
    f.setRules([
      { kind: 'latency', latencyMs: 5, path: '/domains' },
      { kind: 'status', status: 502, method: 'POST', path: '/enrichments', times: 1 },
    ]);
    expect(f.decide('GET', '/enrichments').fault).toBeNull();
    expect(f.decide('POST', '/enrichments').fault?.status).toBe(502);
    expect(f.decide('POST', '/enrichments').fault).toBeNull();
    expect(f.decide('GET', '/domains/x.com')).toEqual({ latencyMs: 5, fault: null });
    expect(f.stats()).toEqual({ injected: { status: 1, latency: 1 }, total: 2 });
    f.resetStats();
    expect(f.stats().total).toBe(0);
  });

  it('draws probabilities from the seed, reproducibly', () => {
    const run = (seed: number): boolean[] => {
      const f = new FaultInjector(seed);
      f.setRules([{ kind: 'reset', probability: 0.5 }]);
      return Array.from({ length: 40 }, () => f.decide('GET', '/account').fault !== null);
    };
    expect(run(3)).toEqual(run(3));
    expect(run(3)).not.toEqual(run(4));
    expect(run(3).filter(Boolean).length).toBeGreaterThan(5);
  });

  it('rejects invalid rules', () => {
    const f = new FaultInjector(1);
    expect(() => f.setRules([{ kind: 'explode' as never }])).toThrow(/kind/);
    expect(() => f.setRules([{ kind: 'status', probability: 2 }])).toThrow(/probability/);
  });
});
