/**
 * A mirror filled the way a user fills it: a sync of a simulator catalogue with quirks (Unicode
 * domains, nulls, unseen enum values), a change between two syncs (licence status, a removed
 * payment method), a few real enrichment runs and a completed export, plus one export left in
 * progress. It stands in for the demo data (`scripts/demo.ts`) in the snapshot and docs tests.
 *
 * Built once per test file (`beforeAll`), so it does not use the per-test helpers that register
 * `onTestFinished`; `close()` releases everything.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { syncPipeline } from '../../../pipelines/sync.js';
import { runCli } from '../../../src/cli/program.js';
import type { Config } from '../../../src/config/config.js';
import { recordCredits } from '../../../src/mirror/store/credits.js';
import { upsertEnrichmentRun } from '../../../src/mirror/store/enrichment.js';
import { upsertExport } from '../../../src/mirror/store/exports.js';
import { finishPipelineRun, startPipelineRun } from '../../../src/mirror/store/runs.js';
import type { EnrichmentRunInput, ExportInput } from '../../../src/mirror/inputs.js';
import { openRunContext } from '../../../src/runtime/run-context.js';
import { startSimulator } from '../../../src/simulator/index.js';
import type { RunningSimulator } from '../../../src/simulator/index.js';
import { isoFromMs } from '../../../src/util/time.js';
import { writeTestConfig } from '../../helpers/test-context.js';

/** The fixture: its dir, config file, mirror file and simulator. */
export interface SnapshotFixture {
  dir: string;
  configPath: string;
  config: Config;
  mirrorPath: string;
  sim: RunningSimulator;
  /** Domains whose licence changed / payment method was removed between the two syncs. */
  changed: { licenceDomain: string; paymentDomain: string };
  /** The export left pending (requested, never polled to completion). */
  pendingExportId: number;
  close(): Promise<void>;
}

/** Builds the fixture; see the file comment. `configOverrides` go into the test config file. */
export async function buildSnapshotFixture(
  options: { domains?: number; seed?: number; configOverrides?: Record<string, unknown> } = {},
): Promise<SnapshotFixture> {
  const dir = await mkdtemp(join(tmpdir(), 'snapshot-fixture-'));
  const sim = await startSimulator({
    domains: options.domains ?? 400,
    seed: options.seed ?? 11,
    quirks: true,
    // Runs last 30–120 s × 0.002 and exports are ready after 20 s × 0.002: the test waits < 1 s.
    timeScale: 0.002,
    cacheWindowMs: 0,
    runFailureRate: 0.3,
  });
  const { path: configPath, config } = await writeTestConfig(dir, options.configOverrides);
  const ctx = await openRunContext({ config, apiKey: sim.apiKey, baseUrl: sim.baseUrl });
  let pendingExportId: number;
  let changed: SnapshotFixture['changed'];
  try {
    const first = await syncPipeline(ctx);
    if (first.status !== 'done')
      throw new Error(`fixture sync: ${first.status} ${JSON.stringify(first.error)}`);

    const all = sim.control.truth.listDomains();
    const licenceDomain = all.find((d) => (sim.control.truth.profile(d)?.licenses.length ?? 0) > 0)!;
    const paymentDomain = all.find(
      (d) => d !== licenceDomain && (sim.control.truth.profile(d)?.payment_methods.length ?? 0) > 1,
    )!;
    const licence = sim.control.truth.profile(licenceDomain)!.licenses[0]!;
    const method = sim.control.truth.profile(paymentDomain)!.payment_methods[0]!;
    sim.control.mutate.setLicenceStatus(
      licenceDomain,
      licence.license_number,
      licence.status === 'active' ? 'suspended' : 'active',
    );
    sim.control.mutate.removePaymentMethod(paymentDomain, method.normalized_name);
    changed = { licenceDomain, paymentDomain };
    const second = await syncPipeline(ctx);
    if (second.status !== 'done') throw new Error(`fixture resync: ${second.status}`);

    // Enrichment runs and an export through the real API, recorded with the mirror's stores the
    // way `enrich` and `export` record them (those pipelines are not needed for snapshot tests).
    const now = (): string => isoFromMs(Date.now());
    const run = startPipelineRun(ctx.mirror, { pipeline: 'enrich', startedAt: now() });
    const unicode = all.find((d) => /[\u0080-\u{10ffff}]/u.test(d));
    const targets = [...new Set([unicode ?? all[0]!, ...all.slice(0, 5)])];
    for (const domain of targets) {
      const started = await ctx.api.startEnrichment({ domain });
      if (started.kind === 'cached') {
        recordCredits(ctx.mirror, {
          at: now(),
          operation: 'enrichment_cached',
          credits: 0,
          domain,
          pipelineRunId: run,
        });
        continue;
      }
      upsertEnrichmentRun(
        ctx.mirror,
        { id: started.runId, status: 'pending', domain },
        { at: now(), requestedAt: now(), credits: 10, pipelineRunId: run },
      );
      recordCredits(ctx.mirror, {
        at: now(),
        operation: 'enrichment',
        credits: 10,
        estimatedCredits: 10,
        domain,
        runId: started.runId,
        pipelineRunId: run,
        entryKey: `enrichment_run:${started.runId}`,
      });
      const settled = await ctx.api.waitForEnrichmentRun(started.runId);
      upsertEnrichmentRun(ctx.mirror, settled as unknown as EnrichmentRunInput, { at: now() });
    }
    finishPipelineRun(ctx.mirror, run, {
      status: 'done',
      finishedAt: now(),
      stats: { runs: targets.length },
    });

    const exportRun = startPipelineRun(ctx.mirror, { pipeline: 'export', startedAt: now() });
    const created = await ctx.api.createExport({ format: 'csv', filters: { jurisdiction: 'mga' } });
    upsertExport(
      ctx.mirror,
      { id: created.exportId, status: 'pending' },
      { at: now(), requestedAt: now(), filters: { jurisdiction: 'mga' }, pipelineRunId: exportRun },
    );
    const info = await ctx.api.waitForExport(created.exportId);
    upsertExport(ctx.mirror, info as unknown as ExportInput, { at: now(), downloadStatus: 'pending' });
    recordCredits(ctx.mirror, {
      at: now(),
      operation: 'export',
      credits: Number((info as unknown as ExportInput).credits_used ?? 0),
      exportId: created.exportId,
      pipelineRunId: exportRun,
    });
    const pending = await ctx.api.createExport({ format: 'json' });
    upsertExport(
      ctx.mirror,
      { id: pending.exportId, status: 'pending' },
      { at: now(), requestedAt: now(), filters: {}, pipelineRunId: exportRun },
    );
    pendingExportId = pending.exportId;
    finishPipelineRun(ctx.mirror, exportRun, { status: 'done', finishedAt: now(), stats: {} });
  } catch (error) {
    await ctx.close();
    await sim.close();
    throw error;
  }
  await ctx.close();
  return {
    dir,
    configPath,
    config,
    mirrorPath: config.database.path,
    sim,
    changed,
    pendingExportId,
    async close() {
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** What {@link cli} returns: the exit status, stdout, stderr and the parsed `--json` summary. */
export interface CliRun {
  exitCode: number;
  stdout: string;
  stderr: string;
  json: Record<string, unknown> | null;
}

/** Runs the CLI in-process (`runCli`) with captured stdout/stderr and no API key in the env. */
export async function cli(argv: string[], cwd: string): Promise<CliRun> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  stdout.on('data', (b: Buffer) => out.push(b));
  stderr.on('data', (b: Buffer) => err.push(b));
  const exitCode = await runCli(argv, { stdout, stderr, env: {}, cwd }, new AbortController().signal);
  const text = Buffer.concat(out).toString('utf8');
  let json: Record<string, unknown> | null = null;
  if (argv.includes('--json')) json = JSON.parse(text) as Record<string, unknown>;
  return { exitCode, stdout: text, stderr: Buffer.concat(err).toString('utf8'), json };
}
