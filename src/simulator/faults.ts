import { Prng } from './prng.js';
import type { FaultKind, FaultRule } from './types.js';

/** What to do to one request: delays to apply, then at most one fault to deliver. */
export interface FaultDecision {
  latencyMs: number;
  fault: FaultRule | null;
}

/**
 * Fault injection by rules. Rules are checked in order: every matching 'latency' rule adds its
 * delay, and the first matching rule of another kind is delivered. Probabilities come from a PRNG
 * seeded with the simulator seed, so a run of a test suite is reproducible.
 */
export class FaultInjector {
  private rules: Array<{ rule: FaultRule; used: number }> = [];
  private readonly rng: Prng;
  private injected: Record<string, number> = {};

  constructor(seed: number) {
    this.rng = Prng.of(seed, 0xfa17);
  }

  /** Replaces the rules; each rule's `times` counter starts again. */
  setRules(rules: FaultRule[]): void {
    for (const rule of rules) validateRule(rule);
    this.rules = rules.map((rule) => ({ rule: { ...rule }, used: 0 }));
  }

  /** The current rules. */
  currentRules(): FaultRule[] {
    return this.rules.map((r) => ({ ...r.rule }));
  }

  /** Removes every rule. */
  clear(): void {
    this.rules = [];
  }

  /** Decides the faults of one request (path after the base path) and counts them. */
  decide(method: string, path: string): FaultDecision {
    const decision: FaultDecision = { latencyMs: 0, fault: null };
    for (const entry of this.rules) {
      const { rule } = entry;
      if (rule.method !== undefined && rule.method !== method) continue;
      if (rule.path !== undefined && !path.startsWith(rule.path)) continue;
      if (rule.times !== undefined && entry.used >= rule.times) continue;
      if (rule.probability !== undefined && rule.probability < 1 && !(this.rng.next() < rule.probability))
        continue;
      if (rule.kind === 'latency') {
        entry.used++;
        this.count('latency');
        decision.latencyMs += rule.latencyMs ?? 1000;
        continue;
      }
      entry.used++;
      this.count(rule.kind);
      decision.fault = rule;
      break;
    }
    return decision;
  }

  private count(kind: FaultKind): void {
    this.injected[kind] = (this.injected[kind] ?? 0) + 1;
  }

  /** Injections so far, by kind. */
  stats(): { injected: Record<string, number>; total: number } {
    const injected = { ...this.injected };
    return { injected, total: Object.values(injected).reduce((a, b) => a + b, 0) };
  }

  /** Resets the injection counters (not the rules). */
  resetStats(): void {
    this.injected = {};
  }
}

const KINDS: readonly FaultKind[] = ['status', 'rate_limit', 'reset', 'latency', 'truncate', 'malformed'];

function validateRule(rule: FaultRule): void {
  if (!rule || typeof rule !== 'object') throw new TypeError('fault rule must be an object');
  if (!KINDS.includes(rule.kind)) throw new TypeError(`fault rule kind must be one of ${KINDS.join(', ')}`);
  if (rule.method !== undefined && rule.method !== 'GET' && rule.method !== 'POST')
    throw new TypeError('fault rule method must be GET or POST');
  if (rule.probability !== undefined && !(rule.probability >= 0 && rule.probability <= 1))
    throw new TypeError('fault rule probability must be in 0..1');
  if (
    rule.status !== undefined &&
    !(Number.isInteger(rule.status) && rule.status >= 100 && rule.status <= 599)
  )
    throw new TypeError('fault rule status must be an HTTP status');
}
