import type { FirstLoad } from '../../pipelines/first-load.js';

/**
 * The summary lines of a run that loaded an empty mirror (a first sync, or an export's load into
 * one: pipelines/first-load.ts); none for a run into a mirror that had domains. `run` names the
 * run in them ("sync", "load").
 */
export function firstLoadLines(firstLoad: FirstLoad, run: 'sync' | 'load'): string[] {
  return [
    ...(firstLoad.indexesDeferred > 0
      ? [
          `  empty mirror: loaded first, then built ${firstLoad.indexesDeferred} indexes of licences, payment methods and change_log`,
        ]
      : []),
    ...(firstLoad.baseline
      ? [
          `  the mirror's baseline: change_log records changes from this ${run} on, not the licences and payment methods it ${run === 'sync' ? 'found' : 'loaded'}`,
        ]
      : []),
  ];
}
