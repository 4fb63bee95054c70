/**
 * Mixes integers into one 32-bit hash (murmur3 finaliser per step), so every (seed, index, salt)
 * triple gets an independent PRNG stream without storing anything.
 */
export function hash32(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as number;
    // Split doubles into two 32-bit halves so large indices and seeds stay distinct.
    h = mix(h, part >>> 0);
    h = mix(h, Math.floor(part / 4294967296) >>> 0);
  }
  return h >>> 0;
}

function mix(h: number, word: number): number {
  let x = Math.imul(h ^ word, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  return x ^ (x >>> 16);
}

/** Hash of a string (FNV-1a), for salting PRNG streams with names. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A small deterministic PRNG (mulberry32) with helpers. */
export class Prng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A PRNG for the stream (parts...). */
  static of(...parts: number[]): Prng {
    return new Prng(hash32(...parts));
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [min, max] inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** `count` distinct elements, in a random order. */
  sample<T>(items: readonly T[], count: number): T[] {
    const copy = items.slice();
    const n = Math.min(count, copy.length);
    for (let i = 0; i < n; i++) {
      const j = i + Math.floor(this.next() * (copy.length - i));
      const tmp = copy[i] as T;
      copy[i] = copy[j] as T;
      copy[j] = tmp;
    }
    return copy.slice(0, n);
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }
}
