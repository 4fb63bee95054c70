import { expect } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { queryMirror } from './mirror.js';

/*
 * Reading a mirror's change history back from its file, independently of the store functions,
 * for the tests of the mirror's baseline (src/mirror/store/baseline.ts).
 */

/** Licences, payment methods and change_log rows (all, and `added` ones) of the mirror or one domain. */
export interface ChangeCounts {
  licences: number;
  methods: number;
  added: number;
  logged: number;
}

/** {@link ChangeCounts} of every domain in the mirror at `path`, or of `domain` alone. */
export function changeCounts(path: string, domain?: string): ChangeCounts {
  // Every row, or one domain's: the same filter on each table.
  const filter = domain === undefined ? '1 = 1' : 'domain_normalized = ?';
  const args = domain === undefined ? [] : [domain];
  const one = (from: string, extra = '') =>
    queryMirror<{ n: number }>(path, `SELECT count(*) AS n FROM ${from} WHERE ${filter}${extra}`, ...args)[0]!
      .n;
  return {
    licences: one('licenses'),
    methods: one('payment_methods'),
    added: one('change_log', " AND change = 'added'"),
    logged: one('change_log'),
  };
}

/** The rows of `mirror_baseline` (at most one). */
export function baselineRows(path: string): { pipeline_run_id: number | null; finished_at: string | null }[] {
  return queryMirror(path, 'SELECT pipeline_run_id, finished_at FROM mirror_baseline');
}

/** What {@link baselineRows} holds once the run `pipelineRunId` opened the baseline and it finished. */
export function baselineFinishedBy(
  pipelineRunId: unknown,
): { pipeline_run_id: unknown; finished_at: unknown }[] {
  return [{ pipeline_run_id: pipelineRunId, finished_at: expect.any(String) as unknown }];
}

/** The change_log rows other than additions, as the tests compare them. */
export function changesOtherThanAdded(
  path: string,
): { domain_normalized: string; change: string; old_value: string | null; new_value: string | null }[] {
  return queryMirror(
    path,
    `SELECT domain_normalized, change, old_value, new_value FROM change_log WHERE change <> 'added'`,
  );
}

type TruthProfile = NonNullable<ReturnType<RunningSimulator['control']['truth']['profile']>>;

/**
 * Adds domains to the simulator's catalogue until one whose profile `accept`s (at most 200);
 * returns it. `what` names the wanted domain in the error when none was.
 */
export function addDomainWhere(
  sim: RunningSimulator,
  accept: (profile: TruthProfile) => boolean,
  what: string,
): string {
  for (let i = 0; i < 200; i++) {
    const domain = sim.control.mutate.addDomain();
    const p = sim.control.truth.profile(domain);
    if (p !== undefined && accept(p)) return domain;
  }
  throw new Error(`the simulator added no domain ${what}`);
}

/** Adds a domain to the simulator's catalogue with at least one licence and one payment method. */
export function addDomainWithChildren(sim: RunningSimulator): string {
  return addDomainWhere(
    sim,
    (p) => p.licenses.length > 0 && p.payment_methods.length > 0,
    'with a licence and a payment method',
  );
}

/**
 * Changes the status of one licence of a domain (not `except`) in the simulator's catalogue;
 * returns the domain and the status before and after.
 */
export function changeALicenceStatus(
  sim: RunningSimulator,
  except: string,
): { domain: string; before: string; after: string } {
  const domain = sim.control.truth
    .listDomains()
    .find((d) => d !== except && (sim.control.truth.profile(d)?.licenses.length ?? 0) > 0)!;
  const licence = sim.control.truth.profile(domain)!.licenses[0]!;
  const after = licence.status === 'active' ? 'suspended' : 'active';
  sim.control.mutate.setLicenceStatus(domain, licence.license_number, after);
  return { domain, before: licence.status, after };
}
