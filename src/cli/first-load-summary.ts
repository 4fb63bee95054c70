import type { FirstLoad } from '../../pipelines/first-load.js';

/**
 * The summary lines of a run that made the mirror's first load (a first sync, or an export's load
 * into a mirror never loaded: pipelines/first-load.ts), or that set indexes aside for a load
 * bringing at least as many new domains as the mirror held; none for any other run. `run` names
 * the run in them ("sync", "load").
 */
export function firstLoadLines(firstLoad: FirstLoad, run: 'sync' | 'load'): string[] {
  return [
    ...(firstLoad.indexesDeferred > 0
      ? [
          `  ${firstLoad.baseline ? 'first load' : 'bulk load'}: rows loaded first, then built ${firstLoad.indexesDeferred} indexes of licences, payment methods, change_log and domains`,
        ]
      : []),
    ...(firstLoad.baseline
      ? [
          `  the mirror's baseline: change_log records changes from this ${run} on, not the licences and payment methods it ${run === 'sync' ? 'found' : 'loaded'}`,
        ]
      : []),
  ];
}
