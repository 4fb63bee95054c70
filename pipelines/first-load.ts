import { openBaselineIfFirstLoad } from '../src/mirror/store/baseline.js';
import { deferIndexesForBulkLoad } from '../src/mirror/store/deferred-indexes.js';
import type { BulkLoadOptions } from '../src/mirror/store/deferred-indexes.js';
import type { PipelineRun } from '../src/runtime/run.js';

/** What {@link prepareFirstLoad} set up, as the stats of a sync and of an export report it. */
export interface FirstLoad {
  /**
   * Indexes set aside while the run made the mirror's first load, or a load that brings at least
   * as many new domains as the mirror held, and built after its rows
   * (src/mirror/store/deferred-indexes.ts); 0 for any other load.
   */
  indexesDeferred: number;
  /**
   * Whether the mirror's baseline was open during the run (the mirror's first load, or the
   * resumption of one: src/mirror/store/baseline.ts): the domains it loaded got no `added`
   * change_log rows.
   */
  baseline: boolean;
}

/**
 * What a bulk load (a sync, or an export's load) does before it makes the mirror's first load
 * (into an empty mirror, or one that holds only domains `enrich` wrote one by one), or resumes
 * such a load:
 * - sets the secondary indexes of the licence, payment-method and change_log tables and five of
 *   the domain indexes aside, to be
 *   built at the end (src/mirror/store/deferred-indexes.ts); the rows go in first. The caller
 *   builds them with buildIndexesSetAside (src/runtime/run.ts) once its rows are written, also
 *   when it stops early;
 * - opens the mirror's baseline (src/mirror/store/baseline.ts): the domains it loads get no
 *   `added` change_log rows. It stays open until the caller finishes it (finishBaseline) at the
 *   end of a load that ran through.
 * Both do nothing to a mirror a sync or an export's load filled before, except that a baseline an
 * earlier run left open stays open, and that the indexes are set aside as well when `newDomains`
 * (the domains the load brings that the mirror does not hold, when the caller counted them) is at
 * least the number of domains the mirror holds. Logs what it did; `what` names the load in those
 * lines ("sync", "export load").
 */
export function prepareFirstLoad(
  run: Pick<PipelineRun, 'id' | 'startedAt' | 'ctx'>,
  what: string,
  options: BulkLoadOptions = {},
): FirstLoad {
  const { mirror, logger } = run.ctx;
  const indexesDeferred = deferIndexesForBulkLoad(mirror, run.startedAt, options).length;
  if (indexesDeferred > 0)
    logger.info(
      `bulk load: indexes of licences, payment methods, change_log and domains are built after this ${what}`,
      {
        indexes: indexesDeferred,
        ...(options.newDomains === undefined ? {} : { newDomains: options.newDomains }),
      },
    );
  const baseline = openBaselineIfFirstLoad(mirror, run.startedAt, run.id);
  if (baseline)
    logger.info(
      `mirror baseline: this ${what}'s licences and payment methods are where change_log starts, not additions`,
    );
  return { indexesDeferred, baseline };
}
