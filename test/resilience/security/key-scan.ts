/**
 * Byte-level search for API keys in files and buffers, in every form a key could take on its way
 * out: as is, URL-encoded, JSON-escaped, and base64/base64url at each of the three byte
 * alignments (a key inside a longer base64 blob, such as a `Basic` header, only shows its
 * aligned core). Hits name the form and the offset, never the key.
 */
import { createHash } from 'node:crypto';
import { closeSync, lstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { join } from 'node:path';

/** One searchable form of a key. */
export interface KeyNeedle {
  /** Which key (its id in the caller's list), never the key itself. */
  keyId: string;
  /** `raw`, `url-encoded`, `json-escaped`, `base64@0`, `base64url@2`, … */
  form: string;
  bytes: Buffer;
}

/** Where a key was found. */
export interface KeyHit {
  file: string;
  offset: number;
  keyId: string;
  form: string;
}

/** Totals of a scan. */
export interface ScanResult {
  files: number;
  bytes: number;
  hits: KeyHit[];
}

/** Shortest key we search for: shorter strings would match by chance in binary files. */
export const MIN_KEY_LENGTH = 8;
/** Shortest base64 core searched: 8 characters are 48 bits, no chance matches in a test run. */
const MIN_BASE64_CORE = 8;
const ANCHOR_LENGTH = 6;
const CHUNK_BYTES = 4 * 1024 * 1024;

/** A label for a key that does not reveal it: `sha256:` and the first 10 hex digits. */
export function keyId(key: string): string {
  return `sha256:${createHash('sha256').update(key).digest('hex').slice(0, 10)}`;
}

/** Every form of `key` worth searching for (distinct byte strings only). */
export function keyNeedles(key: string): KeyNeedle[] {
  const id = keyId(key);
  const forms = new Map<string, string>();
  const add = (form: string, text: string): void => {
    if (text.length === 0) return;
    for (const existing of forms.values()) if (existing === text) return;
    forms.set(form, text);
  };
  add('raw', key);
  add('url-encoded', encodeURIComponent(key));
  add('url-encoded-form', new URLSearchParams({ k: key }).toString().slice(2));
  add('json-escaped', JSON.stringify(key).slice(1, -1));
  add('json-escaped-slash', JSON.stringify(key).slice(1, -1).replaceAll('/', '\\/'));
  const bytes = Buffer.from(key, 'utf8');
  for (const alphabet of ['base64', 'base64url'] as const) {
    for (let pad = 0; pad < 3; pad++) {
      const core = base64Core(bytes, pad, alphabet);
      if (core.length >= MIN_BASE64_CORE) add(`${alphabet}@${pad}`, core);
    }
  }
  return [...forms].map(([form, text]) => ({ keyId: id, form, bytes: Buffer.from(text, 'utf8') }));
}

/**
 * The base64 characters that depend only on the key's bytes when the key starts `pad` bytes
 * after a 3-byte group boundary: character i covers bits [6i, 6i + 6) of the padded input.
 */
export function base64Core(key: Buffer, pad: number, alphabet: 'base64' | 'base64url' = 'base64'): string {
  const padded = Buffer.concat([Buffer.alloc(pad), key, Buffer.alloc(3)]);
  const encoded = padded.toString(alphabet);
  const first = Math.ceil((8 * pad) / 6);
  const end = Math.floor((8 * (pad + key.length)) / 6);
  return encoded.slice(first, end);
}

/** Needles for a list of keys; keys shorter than {@link MIN_KEY_LENGTH} are left out (returned apart). */
export function needlesFor(keys: Iterable<string>): { needles: KeyNeedle[]; tooShort: number } {
  const needles: KeyNeedle[] = [];
  let tooShort = 0;
  for (const key of new Set(keys)) {
    if (key.length < MIN_KEY_LENGTH) tooShort++;
    else needles.push(...keyNeedles(key));
  }
  return { needles, tooShort };
}

/**
 * Finds every occurrence of every needle in `buffer`. Needles are grouped by their first bytes
 * so that keys sharing the `client_` prefix cost one pass per form, not one per key.
 */
export function scanBuffer(
  buffer: Buffer,
  needles: readonly KeyNeedle[],
  file = '(buffer)',
  base = 0,
): KeyHit[] {
  const hits: KeyHit[] = [];
  for (const group of anchorGroups(needles)) {
    for (let at = buffer.indexOf(group.anchor); at !== -1; at = buffer.indexOf(group.anchor, at + 1)) {
      for (const needle of group.needles) {
        if (
          at + needle.bytes.length <= buffer.length &&
          buffer.compare(needle.bytes, 0, needle.bytes.length, at, at + needle.bytes.length) === 0
        ) {
          hits.push({ file, offset: base + at, keyId: needle.keyId, form: needle.form });
        }
      }
    }
  }
  return hits;
}

/** Scans one file in chunks (overlapping by the longest needle), whatever its size. */
export function scanFile(path: string, needles: readonly KeyNeedle[]): { bytes: number; hits: KeyHit[] } {
  const longest = needles.reduce((max, n) => Math.max(max, n.bytes.length), 1);
  const fd = openSync(path, 'r');
  const hits: KeyHit[] = [];
  let bytes = 0;
  try {
    const buffer = Buffer.alloc(CHUNK_BYTES + longest);
    let carry = 0;
    let position = 0;
    for (;;) {
      const read = readSync(fd, buffer, carry, CHUNK_BYTES, position);
      if (read === 0) break;
      const filled = carry + read;
      const view = buffer.subarray(0, filled);
      const viewStart = position - carry;
      // A hit inside the carried-over bytes is found twice; dedupe() keeps one.
      hits.push(...scanBuffer(view, needles, path, viewStart));
      position += read;
      bytes += read;
      carry = Math.min(longest - 1, filled);
      buffer.copy(buffer, 0, filled - carry, filled);
    }
  } finally {
    closeSync(fd);
  }
  return { bytes, hits: dedupe(hits) };
}

/** Scans a file or every regular file under a directory (symlinks are not followed). */
export function scanPath(path: string, needles: readonly KeyNeedle[]): ScanResult {
  const result: ScanResult = { files: 0, bytes: 0, hits: [] };
  const visit = (p: string): void => {
    let stat;
    try {
      stat = lstatSync(p);
    } catch {
      return; // removed while we looked (a test's child process cleaning up)
    }
    if (stat.isDirectory()) {
      let names: string[];
      try {
        names = readdirSync(p);
      } catch {
        return;
      }
      for (const name of names) visit(join(p, name));
    } else if (stat.isFile()) {
      try {
        const scanned = scanFile(p, needles);
        result.files += 1;
        result.bytes += scanned.bytes;
        result.hits.push(...scanned.hits);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
  };
  visit(path);
  return result;
}

/** A hit as one line a human can act on, without the key. */
export function describeHit(hit: KeyHit): string {
  return `${hit.file} at byte ${hit.offset}: API key ${hit.keyId} (${hit.form})`;
}

function anchorGroups(needles: readonly KeyNeedle[]): Array<{ anchor: Buffer; needles: KeyNeedle[] }> {
  const groups = new Map<string, { anchor: Buffer; needles: KeyNeedle[] }>();
  for (const needle of needles) {
    const anchor = needle.bytes.subarray(0, Math.min(ANCHOR_LENGTH, needle.bytes.length));
    const id = anchor.toString('hex');
    const group = groups.get(id) ?? { anchor, needles: [] };
    group.needles.push(needle);
    groups.set(id, group);
  }
  return [...groups.values()];
}

function dedupe(hits: KeyHit[]): KeyHit[] {
  const seen = new Set<string>();
  return hits.filter((h) => {
    const id = `${h.offset}/${h.keyId}/${h.form}`;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}
