import { randomBytes } from 'node:crypto';

/**
 * A set of strings that keeps a 64-bit fingerprint of each instead of the string: 16 to 32 bytes
 * a member (an open-addressing table of 8-byte fingerprints, a quarter to half full, off the
 * JavaScript heap), where a `Set` holds the string itself (about 40 bytes for a domain name) and
 * about 21 bytes of entry. The sync keeps one for every domain a run lists and queues; at
 * 1,000,000 domains the two `Set`s of names held about 80 MB, which the heap then grows around
 * (docs/benchmarks.md "sync").
 *
 * The price is that two different strings can share a fingerprint: `add` can answer false for a
 * string never added. For n members the chance that any two collide is about n² / 2^65 (3 in
 * 100,000,000 at 1,000,000 members), so callers use it only where such an answer costs little
 * (a profile left for the next run, a listing pass repeated). Each set draws a random seed for
 * its fingerprints, so strings that collide in one set almost surely do not in the next: the
 * next run or pass does not repeat a miss.
 */
export class FingerprintSet {
  /** Fingerprints as (high, low) pairs of 32-bit words; (0, 0) marks an empty slot. */
  #slots = new Uint32Array(16 * 2);
  #mask = 15;
  #size = 0;
  readonly #seed = randomBytes(4).readUInt32LE(0);
  /** The fingerprint of the last string added ({@link FingerprintSet.#fingerprint}). */
  #high = 0;
  #low = 0;

  /** Members added (fingerprints, so two strings that share one count once). */
  get size(): number {
    return this.#size;
  }

  /** Adds `value`; false when it (or a string with its fingerprint) was already a member. */
  add(value: string): boolean {
    this.#fingerprint(value);
    if (this.#find(this.#high, this.#low) >= 0) return false;
    if ((this.#size + 1) * 2 > this.#mask + 1) this.#grow();
    this.#put(this.#high, this.#low);
    this.#size++;
    return true;
  }

  /** The slot of (high, low), or -1. */
  #find(high: number, low: number): number {
    const slots = this.#slots;
    const mask = this.#mask;
    for (let i = low & mask; ; i = (i + 1) & mask) {
      const h = slots[i * 2]!;
      const l = slots[i * 2 + 1]!;
      if (h === high && l === low) return i;
      if (h === 0 && l === 0) return -1;
    }
  }

  #put(high: number, low: number): void {
    const slots = this.#slots;
    const mask = this.#mask;
    let i = low & mask;
    while (slots[i * 2] !== 0 || slots[i * 2 + 1] !== 0) i = (i + 1) & mask;
    slots[i * 2] = high;
    slots[i * 2 + 1] = low;
  }

  #grow(): void {
    const old = this.#slots;
    this.#slots = new Uint32Array(old.length * 2);
    this.#mask = old.length - 1;
    for (let i = 0; i < old.length; i += 2) {
      const high = old[i]!;
      const low = old[i + 1]!;
      if (high !== 0 || low !== 0) this.#put(high, low);
    }
  }

  /**
   * A 64-bit fingerprint of the string's UTF-16 code units into #high and #low: two 32-bit
   * multiplicative lanes mixed into each other at the end, after bryc's public-domain cyrb53
   * (seeded as it is; both lanes kept, where cyrb53 keeps 53 bits). Not a cryptographic hash:
   * the service's own domain names are its input, and a collision only costs what the class
   * comment says.
   */
  #fingerprint(value: string): void {
    let h1 = 0xdeadbeef ^ this.#seed;
    let h2 = 0x41c6ce57 ^ this.#seed;
    for (let i = 0; i < value.length; i++) {
      const ch = value.charCodeAt(i);
      h1 = Math.imul(h1 ^ ch, 2654435761);
      h2 = Math.imul(h2 ^ ch, 1597334677);
    }
    h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
    h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
    h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
    h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
    this.#high = h2 >>> 0;
    // (0, 0) marks an empty slot.
    this.#low = this.#high === 0 && h1 === 0 ? 1 : h1 >>> 0;
  }
}
