import { mirrorInternals } from './database.js';
import type { Mirror } from './database.js';
import type { DomainProfileInput, DomainSummaryInput } from './inputs.js';
import type {
  WriterError,
  WriterFailure,
  WriterReply,
  WriterWriteRequest,
} from './profile-writer-protocol.js';
import { upsertDomainSummaries } from './store/domains.js';
import { upsertProfiles } from './store/profiles.js';
import { updatePipelineRunStats } from './store/runs.js';

/*
 * What the mirror writer does with its requests, on whichever thread runs it (the worker of
 * profile-writer-worker.ts, or the calling thread for an in-memory mirror).
 */

/** The code and message of a write's error, as a reply carries them. */
export function errorFields(error: unknown): WriterError {
  const code = (error as { code?: unknown } | null)?.code;
  return {
    code: typeof code === 'string' ? code : 'ERR_MIRROR_WRITE',
    message: error instanceof Error ? error.message : String(error),
  };
}

/** Runs one request on `m` (the caller decides about the transaction). */
function apply(m: Mirror, request: WriterWriteRequest): WriterReply {
  if (request.kind === 'summaries') {
    const result = upsertDomainSummaries(m, request.summaries as readonly DomainSummaryInput[], {
      listedAt: request.listedAt,
    });
    return { id: request.id, ok: true, kind: 'summaries', result };
  }
  if (request.kind === 'runStats') {
    updatePipelineRunStats(m, request.runId, request.stats);
    return { id: request.id, ok: true, kind: 'runStats' };
  }
  const result = upsertProfiles(m, request.profiles as readonly DomainProfileInput[], {
    syncedAt: request.syncedAt,
  });
  return { id: request.id, ok: true, kind: 'profiles', profilesWritten: result.profiles, failures: [] };
}

/**
 * BEGIN IMMEDIATE: the store reads before it writes, and a deferred transaction whose snapshot
 * went stale (the main thread wrote meanwhile) would fail at its first write instead of waiting.
 */
function immediate<T>(m: Mirror, fn: () => T): T {
  return mirrorInternals(m).sqlite.transaction(fn).immediate();
}

/** One request alone; a refused profile batch is retried one profile at a time. */
function applyAlone(m: Mirror, request: WriterWriteRequest): WriterReply {
  try {
    return immediate(m, () => apply(m, request));
  } catch (error) {
    // A listing page is written whole or not at all, and so are a run's stats: the error is the answer.
    if (request.kind !== 'profiles') return { id: request.id, ok: false, error: errorFields(error) };
    // A profile the mirror refuses (a bad timestamp, a missing key) must not sink the batch:
    // one by one, every good profile lands and the bad one is reported by its domain (a batch
    // of one is simply tried again and reported the same way).
    return oneByOne(
      request,
      (profile) => immediate(m, () => upsertProfile(m, profile, request)),
      () => true,
    );
  }
}

type ProfilesRequest = Extract<WriterWriteRequest, { kind: 'profiles' }>;

/** upsertProfiles of one profile of `request`; the number of profiles written (1). */
function upsertProfile(m: Mirror, profile: unknown, request: ProfilesRequest): number {
  return upsertProfiles(m, [profile as DomainProfileInput], { syncedAt: request.syncedAt }).profiles;
}

/**
 * A profile batch written again one profile at a time by `write`: every good profile lands and a
 * refused one is reported by its domain. An error `isRefusal` does not accept is thrown.
 */
function oneByOne(
  request: ProfilesRequest,
  write: (profile: unknown) => number,
  isRefusal: (error: unknown) => boolean,
): WriterReply {
  const failures: WriterFailure[] = [];
  let written = 0;
  for (const profile of request.profiles) {
    try {
      written += write(profile);
    } catch (itemError) {
      if (!isRefusal(itemError)) throw itemError;
      failures.push({ item: domainOf(profile), ...errorFields(itemError) });
    }
  }
  return { id: request.id, ok: true, kind: 'profiles', profilesWritten: written, failures };
}

function domainOf(profile: unknown): string {
  const key = (profile as { domain_normalized?: unknown } | null)?.domain_normalized;
  return typeof key === 'string' ? key : String(key);
}

/**
 * Applies requests in order and answers each. Several are committed in one transaction (fewer
 * commits, fewer WAL page rewrites); when something in the group is refused, nothing of it was
 * written and each request is applied again alone, and a refused profile batch one profile at a
 * time, so every good profile lands and a bad one is reported by its domain.
 */
export function applyRequests(m: Mirror, group: readonly WriterWriteRequest[]): WriterReply[] {
  if (group.length === 0) return [];
  if (group.length === 1) return [applyAlone(m, group[0]!)];
  try {
    return immediate(m, () => group.map((request) => apply(m, request)));
  } catch {
    return group.map((request) => applyAlone(m, request));
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
 */
export function applyInOpenTransaction(m: Mirror, group: readonly WriterWriteRequest[]): WriterReply[] {
  return group.map((request) => {
    try {
      return apply(m, request);
    } catch (error) {
      if (!leftNothingWritten(error)) throw error;
      if (request.kind !== 'profiles') return { id: request.id, ok: false, error: errorFields(error) };
      return oneByOne(request, (profile) => upsertProfile(m, profile, request), leftNothingWritten);
    }
  });
}
