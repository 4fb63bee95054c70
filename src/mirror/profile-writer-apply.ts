import type Database from 'better-sqlite3';
import { bulkAutocheckpointPages, WRITER_AUTOCHECKPOINT_BYTES } from './checkpointer.js';
import { mirrorInternals } from './database.js';
import type { Mirror } from './database.js';
import type { DomainProfileInput, DomainSummaryInput, ProfileTextCheck } from './inputs.js';
import type {
  WriterError,
  WriterFailure,
  WriterReply,
  WriterWriteRequest,
} from './profile-writer-protocol.js';
import { upsertDomainSummaries } from './store/domains.js';
import type { HeldListing } from './store/held-listing.js';
import { upsertProfiles } from './store/profiles.js';
import { compareByKey } from './store/values.js';
import { updatePipelineRunStats } from './store/runs.js';

/*
 * What the mirror writer does with its requests, on whichever thread runs it (the worker of
 * profile-writer-worker.ts, or the calling thread for an in-memory mirror).
 */

/**
 * The writer thread's connection settings: SQLite's auto-checkpoint stays on, every
 * ~{@link WRITER_AUTOCHECKPOINT_BYTES} of WAL, so it runs on the writer, off the fetching thread;
 * and a page cache of `cacheSizeKib`. bench/sync-writer-floor.ts writes with the same settings.
 */
export function applyWriterPragmas(sqlite: Database.Database, cacheSizeKib: number): void {
  sqlite.pragma(`wal_autocheckpoint = ${bulkAutocheckpointPages(sqlite, WRITER_AUTOCHECKPOINT_BYTES)}`);
  sqlite.pragma(`cache_size = -${Math.trunc(cacheSizeKib)}`);
}

/** The code and message of a write's error, as a reply carries them. */
export function errorFields(error: unknown): WriterError {
  const code = (error as { code?: unknown } | null)?.code;
  return {
    code: typeof code === 'string' ? code : 'ERR_MIRROR_WRITE',
    message: error instanceof Error ? error.message : String(error),
  };
}

type ProfileTextsRequest = Extract<WriterWriteRequest, { kind: 'profileTexts' }>;

/**
 * The text check a writer was opened with (ProfileWriterOptions.textCheck), loaded by the URL of
 * its module: the function that module exports under `name`. Undefined without one.
 */
export async function loadTextCheck(
  spec: { module: string; name: string } | undefined,
): Promise<ProfileTextCheck | undefined> {
  if (spec === undefined) return undefined;
  const loaded = (await import(spec.module)) as Record<string, unknown>;
  const check = loaded[spec.name];
  if (typeof check !== 'function')
    throw new Error(`the profile text check module ${spec.module} exports no function "${spec.name}"`);
  return check as ProfileTextCheck;
}

/**
 * Profile texts parsed and written this many at a time, so that the parsed profiles of a chunk
 * die young: a whole batch parsed at once (or structured-cloned as objects, as before) stayed
 * alive across the thread's young-generation collections until written, and each of them copied
 * it (docs/benchmarks.md "sync", the garbage-collection note). 64 was not tuned.
 */
const PROFILE_TEXT_CHUNK = 64;

/**
 * Writes a `profileTexts` request: in the order of its keys (a sorted batch walks each B-tree
 * once), {@link PROFILE_TEXT_CHUNK} texts at a time, each chunk read (by `check` when the writer
 * has one, see {@link readProfileTextItem}), then written by upsertProfiles. A refused chunk
 * wrote nothing (upsertProfiles checks every value first) and is written again one profile at a
 * time, so every good profile lands and a bad one is reported by its domain. A text that cannot
 * be read is that item's failure, reported by its key (`texts[i]` without keys), and the rest are
 * written. Any other error is thrown: a write stopped part-way, and the caller's transaction must
 * roll back.
 */
function applyProfileTexts(
  m: Mirror,
  request: ProfileTextsRequest,
  check: ProfileTextCheck | undefined,
  heldListing: HeldListing | undefined,
): WriterReply {
  const { texts, keys, syncedAt } = request;
  const order = textOrder(texts.length, keys);
  const options = { syncedAt, ...(heldListing === undefined ? {} : { heldListing }) };
  const failures: WriterFailure[] = [];
  let written = 0;
  for (let start = 0; start < order.length; start += PROFILE_TEXT_CHUNK) {
    const chunk: unknown[] = [];
    for (const index of order.slice(start, start + PROFILE_TEXT_CHUNK)) {
      const read = readProfileTextItem(request, index, check);
      if ('profile' in read) chunk.push(read.profile);
      else failures.push(read);
    }
    try {
      written += upsertProfiles(m, chunk as DomainProfileInput[], options).profiles;
    } catch (error) {
      if (!leftNothingWritten(error)) throw error;
      for (const profile of chunk) {
        try {
          written += upsertProfiles(m, [profile as DomainProfileInput], options).profiles;
        } catch (itemError) {
          if (!leftNothingWritten(itemError)) throw itemError;
          failures.push({ item: domainOf(profile), ...errorFields(itemError) });
        }
      }
    }
  }
  return { id: request.id, ok: true, kind: 'profiles', profilesWritten: written, failures };
}

/** A request's text positions in the order of their keys (as given without keys). */
function textOrder(count: number, keys: readonly string[] | undefined): number[] {
  const order: number[] = [];
  if (keys === undefined) {
    for (let index = 0; index < count; index++) order.push(index);
    return order;
  }
  const keyed: Array<{ key: string; index: number }> = [];
  for (let index = 0; index < count; index++) keyed.push({ key: keys[index] ?? '', index });
  keyed.sort(compareByKey);
  for (const { index } of keyed) order.push(index);
  return order;
}

/**
 * The profile in text `index` of a request, or that item's failure. With a `check` (the sync's:
 * src/api/profile-text-check.ts), the check parses and validates the text and says why one was
 * refused, and whether fetching it again may cure that. Without one, the texts were validated
 * where they were received, so one that is not a JSON object (with the named member object) is
 * a caller's bug.
 */
function readProfileTextItem(
  request: ProfileTextsRequest,
  index: number,
  check: ProfileTextCheck | undefined,
): { profile: object } | WriterFailure {
  const text = request.texts[index]!;
  const key = request.keys?.[index];
  const item = key ?? `texts[${index}]`;
  if (check !== undefined) {
    // A check that throws (its own bug) refuses this text only: nothing of it was written.
    let result: ReturnType<ProfileTextCheck>;
    try {
      result = check(text, key);
    } catch (error) {
      return { item, ...errorFields(error) };
    }
    return 'profile' in result ? result : { item, ...result.failure };
  }
  const { member } = request;
  const profile = memberOfText(text, member);
  if (profile !== undefined) return { profile };
  return {
    item,
    code: 'ERR_MIRROR_INPUT',
    message: `profile text ${index} of the batch is not a JSON object${member === undefined ? '' : ` with a "${member}" object`}`,
  };
}

/** The `member` object of a JSON text (the text's own object without one), else undefined. */
function memberOfText(text: string, member: string | undefined): object | undefined {
  try {
    const body = JSON.parse(text) as unknown;
    const profile =
      member === undefined || body === null || typeof body !== 'object'
        ? body
        : (body as Record<string, unknown>)[member];
    return profile !== null && typeof profile === 'object' && !Array.isArray(profile) ? profile : undefined;
  } catch {
    return undefined;
  }
}

function domainOf(profile: unknown): string {
  const key = (profile as { domain_normalized?: unknown } | null)?.domain_normalized;
  return typeof key === 'string' ? key : String(key);
}

/**
 * Runs one request on `m` (the caller decides about the transaction). With `heldListing`, the
 * listing rows of new domains are held there until their profile or the commit writes them.
 */
function apply(
  m: Mirror,
  request: WriterWriteRequest,
  check: ProfileTextCheck | undefined,
  heldListing?: HeldListing,
): WriterReply {
  if (request.kind === 'summaries') {
    const result = upsertDomainSummaries(m, request.summaries as readonly DomainSummaryInput[], {
      listedAt: request.listedAt,
      ...(heldListing === undefined ? {} : { heldListing }),
    });
    return { id: request.id, ok: true, kind: 'summaries', result };
  }
  if (request.kind === 'runStats') {
    updatePipelineRunStats(m, request.runId, request.stats);
    return { id: request.id, ok: true, kind: 'runStats' };
  }
  return applyProfileTexts(m, request, check, heldListing);
}

/**
 * BEGIN IMMEDIATE: the store reads before it writes, and a deferred transaction whose snapshot
 * went stale (the main thread wrote meanwhile) would fail at its first write instead of waiting.
 */
function immediate<T>(m: Mirror, fn: () => T): T {
  return mirrorInternals(m).sqlite.transaction(fn).immediate();
}

/** One request alone, in its own transaction; its error is the answer. */
function applyAlone(
  m: Mirror,
  request: WriterWriteRequest,
  check: ProfileTextCheck | undefined,
): WriterReply {
  try {
    return immediate(m, () => apply(m, request, check));
  } catch (error) {
    return { id: request.id, ok: false, error: errorFields(error) };
  }
}

/**
 * Applies requests in order and answers each. Several are committed in one transaction (fewer
 * commits, fewer WAL page rewrites); when something in the group is refused, nothing of it was
 * written and each request is applied again alone, and a refused profile batch one profile at a
 * time, so every good profile lands and a bad one is reported by its domain.
 */
export function applyRequests(
  m: Mirror,
  group: readonly WriterWriteRequest[],
  check?: ProfileTextCheck,
): WriterReply[] {
  if (group.length === 0) return [];
  if (group.length === 1) return [applyAlone(m, group[0]!, check)];
  try {
    return immediate(m, () => group.map((request) => apply(m, request, check)));
  } catch {
    return group.map((request) => applyAlone(m, request, check));
  }
}

/** An error a store function throws before it writes anything (bad input, an unknown run). */
function leftNothingWritten(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ERR_MIRROR_INPUT' || code === 'ERR_MIRROR_NOT_FOUND';
}

/**
 * Applies requests in order inside the transaction the caller holds open (the writer thread's),
 * each joining it: no savepoint, whose sub-journal copies every page a batch touches first.
 * The store functions check every value before they write, so a refused request wrote nothing
 * and the others go on; a refused profile batch is applied again one profile at a time, so
 * every good profile lands and a bad one is reported by its domain. Any other error means a
 * write stopped part-way: it is thrown, and the caller must roll the transaction back.
 * `heldListing` holds new domains' listing rows (store/held-listing.ts): the caller must flush it
 * before it commits, and clear it when it rolls back.
 */
export function applyInOpenTransaction(
  m: Mirror,
  group: readonly WriterWriteRequest[],
  check?: ProfileTextCheck,
  heldListing?: HeldListing,
): WriterReply[] {
  return group.map((request) => {
    try {
      return apply(m, request, check, heldListing);
    } catch (error) {
      if (!leftNothingWritten(error)) throw error;
      return { id: request.id, ok: false, error: errorFields(error) };
    }
  });
}
