import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { enrichPipeline } from '../../../pipelines/enrich/index.js';
import { exitCodeForOutcome } from '../../../src/cli/exit-codes.js';
import type { Config } from '../../../src/config/config.js';
import { MemoryLogger } from '../../../src/log/logger.js';
import { openRunContext } from '../../../src/runtime/run-context.js';
import type { RunningSimulator, UsageEntry } from '../../../src/simulator/index.js';
import { Prng } from '../../../src/simulator/prng.js';
import { runCli } from '../../helpers/cli.js';
import { diffMirrorWithTruth } from '../../helpers/mirror-truth.js';
import { queryMirror } from '../../helpers/mirror.js';
import { duckdbQuery, sqlString } from '../../helpers/read-parquet.js';
import { STATUS_LABELS } from './fault-mix.js';
import type { Invocation, SoakCounts } from './soak-types.js';

export type { Invocation, SoakCounts } from './soak-types.js';

const JURISDICTIONS = ['mga', 'ukgc', 'curacao', 'anjouan'] as const;

/**
 * Drives every pipeline against a faulted simulator, checks each invocation's contract (exit
 * status, one JSON summary, no POST sent twice, budget kept) and keeps the counts. Pipelines
 * run as child processes of the CLI, except `enrich` on odd rounds, which runs in-process
 * through a run context on the same config and mirror.
 */
export class ChaosSoak {
  readonly counts: SoakCounts = {
    rounds: 0,
    invocations: {},
    reruns: {},
    enrichItemFailures: 0,
    exportOverrides: 0,
    mutations: 0,
    pipelineWallMs: {},
  };
  readonly invocations: Invocation[] = [];
  private readonly random: () => number;
  /** Domains the soak removed from the catalogue; the mirror keeps them, marked unlisted. */
  private readonly removed: string[] = [];

  private readonly sim: RunningSimulator;
  private readonly dir: string;
  private readonly configPath: string;
  private readonly config: Config;
  private readonly options: { seed: number; enrichBudget: number; mutationsPerRound: number };

  constructor(
    sim: RunningSimulator,
    dir: string,
    configPath: string,
    config: Config,
    options: { seed: number; enrichBudget: number; mutationsPerRound: number },
  ) {
    this.sim = sim;
    this.dir = dir;
    this.configPath = configPath;
    this.config = config;
    this.options = options;
    const prng = new Prng(options.seed);
    this.random = () => prng.next();
  }

  get dbPath(): string {
    return this.config.database.path;
  }

  get snapshotsDir(): string {
    return this.config.snapshots.dir;
  }

  /** One round: sync, enrich, export, `run nightly` (sync + snapshot), each until it succeeds. */
  async round(index: number): Promise<void> {
    this.counts.rounds += 1;
    if (index > 0) {
      // A day between nightly runs, with the catalogue changing meanwhile.
      this.sim.control.advanceClock(24 * 3_600_000);
      this.mutateCatalogue(index);
    }
    await this.untilSucceeded('sync', () => this.cli('sync', ['sync']));
    await this.enrich(index);
    // Every run (the lost ones too) settles, so the export below sees a still catalogue.
    this.sim.control.advanceClock(130_000);
    await this.exportRound(index);
    await this.untilSucceeded('nightly', () => this.cli('nightly', ['run', 'nightly']));
    expect(diffMirrorWithTruth(this.dbPath, this.sim), `round ${index}: mirror vs truth`).toEqual([]);
    for (const domain of this.removed) {
      const [row] = queryMirror<{ unlisted_at: string | null }>(
        this.dbPath,
        'SELECT unlisted_at FROM domains WHERE domain_normalized = ?',
        domain,
      );
      expect(row?.unlisted_at, `round ${index}: ${domain} removed by the service, kept as unlisted`).toEqual(
        expect.any(String),
      );
    }
    await this.expectSnapshotEqualsMirror(index);
  }

  /**
   * After the last round: runs left pending by a poll that gave up are resumed (`--budget 0`
   * starts nothing new) until the mirror has none.
   */
  async settlePendingRuns(): Promise<void> {
    for (let attempt = 0; attempt < 6; attempt++) {
      if (this.pendingRunCount() === 0) return;
      const inv = await this.cli('enrich', ['enrich', '--budget', '0']);
      expect(inv.enrichmentPostDomains, 'enrich --budget 0 sends no POST').toEqual([]);
      if (inv.exitCode !== 0) this.countRerun('enrich');
    }
    expect(this.pendingRunCount(), 'runs still pending in the mirror after settling').toBe(0);
  }

  private pendingRunCount(): number {
    return queryMirror<{ n: number }>(
      this.dbPath,
      "SELECT count(*) AS n FROM enrichment_runs WHERE status = 'pending'",
    )[0]!.n;
  }

  /** Runs `attempt` until it exits 0, at most `max` times; each extra run is a rerun. */
  private async untilSucceeded(
    pipeline: string,
    attempt: () => Promise<Invocation>,
    max = 8,
  ): Promise<Invocation> {
    for (let n = 1; ; n++) {
      const inv = await attempt();
      if (inv.exitCode === 0) return inv;
      expect(
        n,
        `${pipeline} did not succeed in ${max} runs: ${JSON.stringify(inv.error ?? inv.failures)}`,
      ).toBeLessThan(max);
      this.countRerun(pipeline);
    }
  }

  private countRerun(pipeline: string): void {
    this.counts.reruns[pipeline] = (this.counts.reruns[pipeline] ?? 0) + 1;
  }

  private async enrich(index: number): Promise<void> {
    const budget = this.options.enrichBudget;
    for (let n = 1; ; n++) {
      const inv =
        index % 2 === 0
          ? await this.cli('enrich', ['enrich', '--budget', String(budget)])
          : await this.inProcessEnrich(budget);
      // docs/contract.md "Promises": never more than the budget, counting requests in flight, and
      // never a POST sent twice for a domain (a lost answer is reconciled, not retried).
      const billed = inv.usage
        .filter((u) => u.endpoint === 'POST /enrichments')
        .reduce((sum, u) => sum + u.credits, 0);
      expect(billed, `enrich invocation billed over its budget ${budget}`).toBeLessThanOrEqual(budget);
      expect(
        repeats(inv.enrichmentPostDomains),
        'POST /enrichments repeated for a domain, beyond refusals',
      ).toBeLessThanOrEqual(refusals(inv, 'POST /enrichments'));
      // Item failures (a run that failed, an outcome left unknown) are outcomes, not reasons to
      // run again: a rerun would spend a new budget. Only a failed invocation is rerun.
      if (inv.status === 'done' || inv.status === 'budget_reached') {
        if (inv.failures.length > 0) this.counts.enrichItemFailures += 1;
        return;
      }
      expect(n, `enrich failed ${n} times: ${JSON.stringify(inv.error)}`).toBeLessThan(8);
      this.countRerun('enrich');
    }
  }

  /**
   * One export per round (jurisdiction and format rotate) until it is loaded. When the product
   * refuses because an earlier POST's answer was lost and the account moved, the soak does what
   * docs/exports.md tells the operator: check the usage (here the simulator's log) and, the lost
   * POST being billed, run again with `--forget-unknown`.
   */
  private async exportRound(index: number): Promise<void> {
    const jurisdiction = JURISDICTIONS[index % JURISDICTIONS.length]!;
    const format = index % 2 === 0 ? 'csv' : 'json';
    const args = ['export', '--filter', `jurisdiction=${jurisdiction}`, '--format', format];
    let override = false;
    let inv: Invocation;
    // What each failed invocation met, so that a soak that gives up says why every run failed.
    const history: string[] = [];
    for (let n = 1; ; n++) {
      const faultsBefore = this.sim.control.faultStats().total;
      inv = await this.cli('export', override ? [...args, '--forget-unknown'] : args);
      const faultsMet = this.sim.control.faultStats().total - faultsBefore;
      expect(
        inv.exportPosts - 1,
        'POST /exports repeated in one invocation, beyond refusals',
      ).toBeLessThanOrEqual(refusals(inv, 'POST /exports'));
      if (inv.exitCode === 0) break;
      const refused = inv.error?.code === 'ERR_OUTCOME_UNKNOWN' && inv.exportPosts === 0;
      history.push(describeFailedRun(inv, faultsMet));
      // Every failed run has a cause: a fault it met, or (a refusal) a lost answer before it,
      // checked below. A POST's answer is lost in about one run in five, and each loss takes two
      // runs (the one that lost it, the refusal), so the number of runs is only bounded against a
      // loop that never ends (8 was reached once by bad luck).
      expect(
        refused || faultsMet > 0,
        `an export run failed with no fault injected:\n${history.join('\n')}`,
      ).toBe(true);
      expect(n, `export did not succeed in ${MAX_EXPORT_RUNS} runs:\n${history.join('\n')}`).toBeLessThan(
        MAX_EXPORT_RUNS,
      );
      override = false;
      if (refused) {
        // A refusal before paying: justified only if a POST whose answer was lost was billed.
        expect(
          this.lostBilledExports().length,
          'refused although no lost POST /exports was billed',
        ).toBeGreaterThan(this.counts.exportOverrides);
        override = true;
        this.counts.exportOverrides += 1;
      } else {
        this.countRerun('export');
      }
    }
    const id = Number(inv.stats.exportId);
    const truth = this.sim.control.truth.export(id) as { total_rows: number; credits_used: number };
    const [row] = queryMirror<{ loaded_at: string | null; total_rows: number; credits_used: number }>(
      this.dbPath,
      'SELECT loaded_at, total_rows, credits_used FROM exports WHERE id = ?',
      id,
    );
    expect(row?.loaded_at, `export ${id} loaded`).toEqual(expect.any(String));
    expect({ total_rows: row!.total_rows, credits_used: row!.credits_used }).toEqual({
      total_rows: truth.total_rows,
      credits_used: truth.credits_used,
    });
    expect(inv.stats.rowsLoaded).toBe(truth.total_rows);
    const matching = this.sim.control.truth.listDomains({ jurisdiction });
    expect(matching.length).toBe(truth.total_rows);
    expect(
      diffMirrorWithTruth(this.dbPath, this.sim, matching),
      `export ${id}: loaded rows vs truth`,
    ).toEqual([]);
  }

  /** `POST /exports` billed by the simulator whose export id never reached the mirror. */
  lostBilledExports(): UsageEntry[] {
    const known = new Set(
      queryMirror<{ id: number }>(this.dbPath, 'SELECT id FROM exports').map((r) => r.id),
    );
    return this.sim.control
      .usage()
      .filter((u) => u.endpoint === 'POST /exports' && u.credits > 0 && !known.has(u.exportId ?? -1));
  }

  /** The Parquet files of the latest snapshot hold exactly the mirror's rows (read by DuckDB). */
  private async expectSnapshotEqualsMirror(index: number): Promise<void> {
    const tables = {
      domains: [
        'domain_normalized',
        'company_name',
        'last_enriched_at',
        'operator_name',
        'brand_slug',
        'unlisted_at',
      ],
      licenses: [
        'domain_normalized',
        'jurisdiction',
        'license_number',
        'status',
        'last_confirmed_at',
        'removed_at',
      ],
      payment_methods: [
        'domain_normalized',
        'normalized_name',
        'category',
        'last_confirmed_at',
        'removed_at',
      ],
    } as const;
    for (const [table, columns] of Object.entries(tables)) {
      const partitions = (await readdir(join(this.snapshotsDir, table))).filter((p) =>
        p.startsWith('snapshot_date='),
      );
      const latest = partitions.sort().at(-1)!;
      const file = join(this.snapshotsDir, table, latest, 'part-0.parquet');
      const list = columns.join(', ');
      const parquet = (await duckdbQuery(`SELECT ${list} FROM read_parquet(${sqlString(file)})`)).rows;
      const mirror = queryMirror<Record<string, unknown>>(this.dbPath, `SELECT ${list} FROM ${table}`);
      expect(parquet.length, `round ${index}: ${table} rows in the snapshot`).toBe(mirror.length);
      expect(sortRows(parquet), `round ${index}: ${table} snapshot vs mirror`).toEqual(sortRows(mirror));
    }
  }

  private mutateCatalogue(round: number): void {
    const { mutate, truth } = this.sim.control;
    const pick = (): string => {
      const all = truth.listDomains();
      return all[Math.floor(this.random() * all.length)]!;
    };
    for (let i = 0; i < this.options.mutationsPerRound; i++) {
      const domain = pick();
      const profile = truth.profile(domain)!;
      switch (i % 7) {
        case 0:
          if (profile.licenses[0])
            mutate.setLicenceStatus(domain, profile.licenses[0].license_number, 'suspended');
          break;
        case 1:
          if (profile.licenses[0]) mutate.removeLicence(domain, profile.licenses[0].license_number);
          break;
        case 2:
          mutate.addPaymentMethod(domain, { normalized_name: `chaos_pay_${round}_${i}`, category: 'crypto' });
          break;
        case 3:
          if (profile.payment_methods.length > 1)
            mutate.removePaymentMethod(domain, profile.payment_methods[0]!.normalized_name);
          break;
        case 4:
          mutate.addDomain({ position: this.random() < 0.5 ? 'start' : 'end' });
          break;
        case 5:
          mutate.removeDomain(domain);
          this.removed.push(domain);
          break;
        default:
          mutate.reenrich(domain);
      }
      this.counts.mutations += 1;
    }
  }

  /** Runs the CLI with `--json`, checks its contract and records the invocation. */
  async cli(pipeline: string, args: string[]): Promise<Invocation> {
    const mark = this.mark();
    const run = await runCli(
      [...args, '--json', '--config', this.configPath, '--base-url', this.sim.baseUrl, '--log-level', 'warn'],
      { env: { DOMAIN_SYNC_API_KEY: this.sim.apiKey }, cwd: this.dir, timeoutMs: 240_000 },
    );
    expect(run.signal, `${args.join(' ')}: killed (${run.stderr.slice(-500)})`).toBeNull();
    // --json: exactly one JSON object on stdout, also when the command fails.
    const lines = run.stdout.trim().split('\n');
    expect(
      lines,
      `${args.join(' ')}: stdout ${run.stdout.slice(0, 300)} / stderr ${run.stderr.slice(-500)}`,
    ).toHaveLength(1);
    const summary = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(run.stderr).not.toContain('this is a bug');
    expect(run.stdout + run.stderr).not.toContain(this.sim.apiKey);
    return this.record(pipeline, 'cli', run.code ?? -1, summary, mark);
  }

  /** `enrich` through a run context in this process, with the CLI's config and mirror. */
  private async inProcessEnrich(budget: number): Promise<Invocation> {
    const mark = this.mark();
    const ctx = await openRunContext({
      config: this.config,
      apiKey: this.sim.apiKey,
      baseUrl: this.sim.baseUrl,
      logger: new MemoryLogger(),
    });
    try {
      const result = await enrichPipeline(ctx, { budget });
      const summary = JSON.parse(JSON.stringify(result)) as Record<string, unknown>;
      return this.record(
        'enrich',
        'in-process',
        exitCodeForOutcome(result.status, result.failures.length),
        summary,
        mark,
      );
    } finally {
      await ctx.close();
    }
  }

  private mark(): { usage: number; requests: number; at: number } {
    return {
      usage: this.sim.control.usage().length,
      requests: this.sim.control.requests().length,
      at: Date.now(),
    };
  }

  private record(
    pipeline: string,
    via: Invocation['via'],
    exitCode: number,
    summary: Record<string, unknown>,
    mark: { usage: number; requests: number; at: number },
  ): Invocation {
    const status = String(summary.status);
    const failures = (summary.failures ?? []) as Invocation['failures'];
    // docs/contract.md "Exit statuses": 0 done, 1 failed or item failures; 2 and 3 never happen here
    // (valid config, credits to spare, faults come before authentication).
    expect([0, 1], `${pipeline}: exit ${exitCode} (${JSON.stringify(summary.error)})`).toContain(exitCode);
    expect(exitCode, `${pipeline}: exit status vs summary`).toBe(exitCodeForOutcome(status, failures.length));
    const requests = this.sim.control.requests().slice(mark.requests);
    const inv: Invocation = {
      pipeline,
      via,
      exitCode,
      status,
      error: summary.error as Invocation['error'],
      failures,
      stats: (summary.stats ?? {}) as Record<string, unknown>,
      usage: this.sim.control.usage().slice(mark.usage),
      enrichmentPostDomains: requests
        .filter((r) => r.method === 'POST' && r.path === '/enrichments')
        .map((r) => String((r.body as { domain?: unknown } | undefined)?.domain)),
      exportPosts: requests.filter((r) => r.method === 'POST' && r.path === '/exports').length,
    };
    this.invocations.push(inv);
    this.counts.invocations[pipeline] = (this.counts.invocations[pipeline] ?? 0) + 1;
    this.counts.pipelineWallMs[pipeline] = (this.counts.pipelineWallMs[pipeline] ?? 0) + Date.now() - mark.at;
    return inv;
  }

  /**
   * The end-of-soak ledger from the simulator's usage log: nothing paid twice, nothing lost.
   * Returns the figures for the report.
   */
  finalChecks(): Record<string, unknown> {
    const usage = this.sim.control.usage();
    const posts = usage.filter((u) => u.endpoint === 'POST /enrichments');
    // Enrichment: a domain is billed (net of refunds of failed runs) at most once in the soak.
    // Stale-after is 30 d and the soak spans days, so no domain is due twice.
    const netBilled = new Map<string, number>();
    for (const u of posts) {
      if (u.credits - (u.refundedCredits ?? 0) > 0)
        netBilled.set(u.domain ?? '?', (netBilled.get(u.domain ?? '?') ?? 0) + 1);
    }
    const enrichPaidTwice = [...netBilled].filter(([, n]) => n > 1);

    // Runs the service started but whose id never reached the mirror (the 202 was lost): the
    // mirror must still know that something was sent for the domain (an intent), never forget it.
    const knownRuns = new Map(
      queryMirror<{ id: number; domain: string; status: string; completed_at: string | null }>(
        this.dbPath,
        'SELECT id, domain, status, completed_at FROM enrichment_runs',
      ).map((r) => [r.id, r]),
    );
    const intents = queryMirror<{ domain: string; status: string }>(
      this.dbPath,
      'SELECT domain, status FROM enrichment_intents',
    );
    const lostRuns = posts.filter((u) => u.runId !== undefined && !knownRuns.has(u.runId));
    for (const u of lostRuns) {
      const statuses = intents.filter((i) => i.domain === u.domain).map((i) => i.status);
      expect(statuses, `run ${u.runId} (${u.domain}) lost its answer; the mirror's intents`).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^(unknown|reconciled_billed|enriched_unattributed)$/),
        ]),
      );
    }
    // Every run the mirror knows has the service's outcome.
    for (const run of knownRuns.values()) {
      const truth = this.sim.control.truth.run(run.id) as {
        status: string;
        completed_at: string | null;
        domain?: string;
      };
      expect({ status: run.status, completed_at: run.completed_at }, `enrichment run ${run.id}`).toEqual({
        status: truth.status,
        completed_at: truth.completed_at,
      });
    }

    // Exports: every billed POST is an export loaded, or a lost one the operator knowingly
    // replaced (one --forget-unknown each); nothing else was bought.
    const exportBilled = usage.filter((u) => u.endpoint === 'POST /exports' && u.credits > 0);
    const loaded = queryMirror<{ n: number }>(
      this.dbPath,
      'SELECT count(*) AS n FROM exports WHERE loaded_at IS NOT NULL',
    )[0]!.n;
    const lostExports = this.lostBilledExports().length;
    expect(lostExports, 'lost billed exports = operator overrides').toBe(this.counts.exportOverrides);
    const exportPaidTwice = exportBilled.length - loaded - this.counts.exportOverrides;
    expect(enrichPaidTwice, 'domains billed twice for enrichment').toEqual([]);
    expect(exportPaidTwice, 'exports bought again without the operator asking').toBe(0);

    const statuses: Record<string, number> = {};
    for (const u of usage) {
      const label = STATUS_LABELS[u.status];
      if (label) statuses[label] = (statuses[label] ?? 0) + 1;
    }
    return {
      enrichmentPosts: posts.length,
      enrichmentRuns: knownRuns.size,
      lostEnrichmentAnswers: lostRuns.length,
      openIntents: intents.filter((i) => i.status === 'unknown' || i.status === 'intended').length,
      exportPostsBilled: exportBilled.length,
      exportsLoaded: loaded,
      lostExportAnswers: lostExports,
      statuses,
      paidTwice: enrichPaidTwice.length + exportPaidTwice,
    };
  }
}

/**
 * Only a POST the service refused (429 `rate_limited`: not processed) may be sent again; the
 * simulator does not log the domain of a request faulted before processing, so this is the
 * number of such refusals in the invocation, the bound on repeats.
 */
function refusals(inv: Invocation, endpoint: string): number {
  return inv.usage.filter((u) => u.endpoint === endpoint && u.status === 429).length;
}

/** How many items of `list` repeat an earlier one. */
function repeats(list: readonly string[]): number {
  return list.length - new Set(list).size;
}

function sortRows(rows: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  const key = (r: Record<string, unknown>): string => JSON.stringify(Object.values(r));
  return [...rows].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** Export invocations of one round at most; see exportRound. */
const MAX_EXPORT_RUNS = 16;

/** One line about a failed invocation: its exit, error, POSTs and the faults it met. */
function describeFailedRun(inv: Invocation, faultsMet: number): string {
  const faulted = inv.usage
    .filter((u) => u.status < 200 || u.status >= 300)
    .map((u) => `${u.endpoint} ${u.status}`);
  return (
    `exit ${inv.exitCode} ${inv.error?.code ?? inv.status}, ${inv.exportPosts} POST /exports, ` +
    `${faultsMet} faults injected; non-2xx: ${faulted.join(', ') || 'none'}; ${inv.error?.message ?? ''}`
  );
}
