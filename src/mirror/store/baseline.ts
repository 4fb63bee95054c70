import { cachedStatement, inImmediateTransaction } from '../database.js';
import type { Mirror } from '../database.js';

/*
 * The mirror's baseline: the mirror's first load, by a sync or an export's load
 * (migration 0007).
 *
 * `change_log` records how the catalogue changes under the mirror's eyes. A first load finds
 * every licence and payment method of the catalogue at once; those are the state the history
 * starts from, not changes. So while the baseline is open, a domain's first profile (its stored
 * `profile_hash` still NULL) is written without an `added` row in `change_log` for its licences
 * and payment methods (`first_seen_at` and `mirror_first_seen_at` still say when each was seen
 * first). Everything else is logged as always: a later profile of a domain already loaded (an
 * enrich, a re-fetch) logs its additions and changes, and a domain that a run after the baseline
 * finds new gets its `added` rows.
 *
 * Why: a first sync of the catalogue would otherwise write about six `added` rows per domain
 * (245,925 for 40,000 domains of the simulator's catalogue), which drown the dashboard's Changes
 * page and its week count in a day that changed nothing, and cost the sync's writer about a tenth
 * of its CPU plus the build of the `change_log` indexes at the end (docs/benchmarks.md "sync").
 * An export loaded into a mirror never loaded is the same bulk first load (docs/benchmarks.md
 * "export").
 *
 * The baseline opens when a sync starts on a mirror the catalogue was never loaded into, or an
 * export's load begins writing into one ({@link mirrorLoaded}): an empty mirror, or one holding
 * only domains `enrich` wrote one by one (`enrich --domain` before the first sync). It stays
 * open, across crashes and restarts, until a sync that fetched profiles finishes its pass (not
 * stopped by the service or a failure) or an export's load writes the last row of its file. So a
 * first load killed part-way and resumed writes the same history as one that ran through, and a
 * `--no-profiles` first sync leaves it open for the run that loads the profiles. A load that
 * brought no domain at all leaves it open too. A profile that failed during the baseline is
 * fetched by a later sync, after it, and gets its `added` rows then.
 * upsertProfiles asks {@link baselineOpen} inside each write transaction, so every writer of
 * profiles (sync, enrich, an export's load) agrees.
 */

/** The mirror's baseline, as recorded. */
export interface MirrorBaseline {
  startedAt: string;
  pipelineRunId: number | null;
  /** The pipeline of the run that opened it (`sync` or `export`); null when that run is unknown. */
  pipeline: string | null;
  /** When the run that loaded it finished it; null while it is open. */
  finishedAt: string | null;
}

/** "the mirror's first sync", "… first export load": the run a baseline was loaded by, for people. */
export function baselineLoadName(baseline: MirrorBaseline): string {
  if (baseline.pipeline === 'sync') return "the mirror's first sync";
  if (baseline.pipeline === 'export') return "the mirror's first export load";
  return "the mirror's first load";
}

/**
 * Whether the catalogue was ever loaded into the mirror: a domain a listing wrote (a sync; a
 * mirror made before migration 0007 by a sync has those) or an export's file loaded with rows in
 * it (a file whose row count was not recorded counts). Domains only `enrich` wrote, one by one
 * and by name, do not count: the first sync after them still loads the catalogue, and is still
 * its baseline and its first load (deferred-indexes.ts).
 */
export function mirrorLoaded(mirror: Mirror): boolean {
  const row = cachedStatement(
    mirror,
    `SELECT EXISTS (SELECT 1 FROM domains WHERE last_listed_at IS NOT NULL)
         OR EXISTS (SELECT 1 FROM exports WHERE loaded_at IS NOT NULL AND coalesce(rows_loaded, 1) > 0) AS loaded`,
  ).get() as { loaded: number };
  return row.loaded === 1;
}

/**
 * Opens the baseline when the catalogue was never loaded into the mirror ({@link mirrorLoaded})
 * and it never had a baseline; returns whether a baseline is open now (opened here or by an
 * earlier run that did not finish it).
 */
export function openBaselineIfFirstLoad(mirror: Mirror, at: string, pipelineRunId: number): boolean {
  return inImmediateTransaction(mirror, () => {
    const existing = readBaseline(mirror);
    if (existing !== undefined) return existing.finishedAt === null;
    if (mirrorLoaded(mirror)) return false;
    cachedStatement(
      mirror,
      'INSERT INTO mirror_baseline (id, started_at, pipeline_run_id, finished_at) VALUES (1, ?, ?, NULL)',
    ).run(at, pipelineRunId);
    return true;
  });
}

/** Whether the baseline is open: a domain's first profile then logs no `added` rows. */
export function baselineOpen(mirror: Mirror): boolean {
  const row = cachedStatement(
    mirror,
    'SELECT EXISTS (SELECT 1 FROM mirror_baseline WHERE finished_at IS NULL) AS open',
  ).get() as { open: number };
  return row.open === 1;
}

/**
 * Finishes an open baseline at `at`, once it holds something: while the mirror still has no
 * domain (a first export that matched none, a first listing that was empty) the baseline stays
 * open for the load that brings the catalogue. Returns whether it was finished now.
 */
export function finishBaseline(mirror: Mirror, at: string): boolean {
  return (
    cachedStatement(
      mirror,
      'UPDATE mirror_baseline SET finished_at = ? WHERE finished_at IS NULL AND EXISTS (SELECT 1 FROM domains)',
    ).run(at).changes > 0
  );
}

/** The mirror's baseline, or undefined when it never had one (a mirror made before migration 0007). */
export function readBaseline(mirror: Mirror): MirrorBaseline | undefined {
  const row = cachedStatement(
    mirror,
    `SELECT b.started_at, b.pipeline_run_id, r.pipeline, b.finished_at
     FROM mirror_baseline b LEFT JOIN pipeline_runs r ON r.id = b.pipeline_run_id WHERE b.id = 1`,
  ).get() as
    | {
        started_at: string;
        pipeline_run_id: number | null;
        pipeline: string | null;
        finished_at: string | null;
      }
    | undefined;
  return row === undefined
    ? undefined
    : {
        startedAt: row.started_at,
        pipelineRunId: row.pipeline_run_id,
        pipeline: row.pipeline,
        finishedAt: row.finished_at,
      };
}
