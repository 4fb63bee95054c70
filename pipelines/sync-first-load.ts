import { openBaselineIfEmpty } from '../src/mirror/store/baseline.js';
import { deferIndexesForBulkLoad } from '../src/mirror/store/deferred-indexes.js';
import type { PipelineRun } from '../src/runtime/run.js';

/** What {@link prepareFirstLoad} set up, as the sync's stats report it. */
export interface FirstLoad {
  /** Indexes set aside until the end of the load; 0 when the mirror had domains. */
  indexesDeferred: number;
  /** Whether the mirror's baseline is open for this run (opened now, or left open by an earlier run). */
  baseline: boolean;
}

/**
 * What a sync does before it writes into an empty mirror (or resumes such a load):
 * - sets the secondary indexes of the licence, payment-method and change_log tables aside, to be
 *   built at the end (src/mirror/store/deferred-indexes.ts); the rows go in first;
 * - opens the mirror's baseline (src/mirror/store/baseline.ts): the domains it loads get no
 *   `added` change_log rows. It stays open until a sync that fetched profiles finishes.
 * Both do nothing to a mirror that has domains, except that a baseline an earlier run left open
 * stays open. Logs what it did.
 */
export function prepareFirstLoad(run: PipelineRun): FirstLoad {
  const { mirror, logger } = run.ctx;
  const indexesDeferred = deferIndexesForBulkLoad(mirror, run.startedAt).length;
  if (indexesDeferred > 0)
    logger.info('empty mirror: licence, payment-method and change_log indexes are built after the load', {
      indexes: indexesDeferred,
    });
  const baseline = openBaselineIfEmpty(mirror, run.startedAt, run.id);
  if (baseline)
    logger.info(
      "mirror baseline: this sync's licences and payment methods are where change_log starts, not additions",
    );
  return { indexesDeferred, baseline };
}
