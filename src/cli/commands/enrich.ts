import {
  enrichPipeline,
  planEnrichment,
  readPlanInput,
  type EnrichOptions,
  type EnrichStats,
} from '../../../pipelines/enrich/index.js';
import { ENRICH_SCHEMA } from '../../../pipelines/step-options/index.js';
import { openMirror } from '../../mirror/database.js';
import { describeAllowance, hasAllowance, readAllowance } from '../../runtime/allowance.js';
import type { RunResult } from '../../runtime/run-result.js';
import type { CommandContext, CommandResult } from '../context.js';
import { exitCodeForOutcome } from '../exit-codes.js';
import { openServices } from '../services.js';
import { optionsFromFlags } from '../step-flags.js';

// Same shape as the other command files (flags, options, services, run, report), by design.
/** Flags of `enrich` as commander hands them over (see program.ts). */
export interface EnrichFlags {
  budget?: number;
  staleAfter?: string;
  domain?: string[];
  filter?: string[];
  concurrency?: number;
  strategy?: string;
  wait?: string;
  dryRun?: boolean;
}

/**
 * The enrich pipeline's options from `enrich`'s flags: what an enrich step's options would mean.
 * `--dry-run` is not among them: it is what the command does with them.
 */
export function enrichOptionsFromFlags(flags: EnrichFlags, cwd: string): EnrichOptions {
  return optionsFromFlags(ENRICH_SCHEMA, { ...flags }, cwd);
}

/**
 * `domain-sync enrich`: see {@link enrichPipeline}. The flags mean what an enrich step's options
 * mean: `--domain` alone enriches just those domains, and with `--stale-after` or `--filter` also
 * the stale domains they select. `--dry-run` reads only the mirror (no API key needed) and
 * prints the plan: how many domains, the worst-case credits (10 each) and the budget.
 */
export async function enrichCommand(ctx: CommandContext, flags: EnrichFlags): Promise<CommandResult> {
  const options = enrichOptionsFromFlags(flags, ctx.io.cwd);
  if (flags.dryRun === true) return dryRun(ctx, options);

  const services = await openServices(ctx, true);
  try {
    const result = await enrichPipeline(services, options);
    services.progress.stop();
    return {
      exitCode: exitCodeForOutcome(result.status, result.failures.length),
      summary: { ...result, mirror: services.mirror.path },
      human: humanSummary(result, services.mirror.path),
    };
  } finally {
    await services.close();
  }
}

async function dryRun(ctx: CommandContext, options: EnrichOptions): Promise<CommandResult> {
  const config = ctx.config;
  const mirror = await openMirror(config.database.path, { logger: ctx.logger });
  try {
    const plan = planEnrichment(
      readPlanInput(mirror, config, options, Date.now(), { requestedOnly: options.requestedOnly ?? false }),
    );
    const allowance = hasAllowance(config.credits) ? readAllowance(mirror, config.credits, Date.now()) : null;
    // Cached answers cost nothing, so the allowances (like the budget) bound only billed runs.
    const allowedRuns =
      allowance === null || allowance.remaining === null
        ? plan.affordableRuns
        : Math.floor(allowance.remaining / 10);
    const wouldStart = Math.min(plan.entries.length, plan.affordableRuns, allowedRuns);
    const summary = {
      dryRun: true,
      planned: plan.entries.length,
      worstCaseCredits: plan.worstCaseCredits,
      budget: plan.budget,
      affordableRuns: plan.affordableRuns,
      allowance,
      wouldEnrichAtLeast: wouldStart,
      skippedInFlight: plan.skipped.filter((s) => s.reason === 'in_flight').length,
      skippedBackoff: plan.skipped.filter((s) => s.reason === 'failure_backoff').length,
      domains: plan.entries.slice(0, 1000).map((e) => e.domain),
      mirror: mirror.path,
    };
    const human = [
      `enrich dry run: ${plan.entries.length} domains would be enriched, worst case ${plan.worstCaseCredits} credits (10 each), budget ${plan.budget}`,
      `  the budget pays for ${plan.affordableRuns} runs; cached answers cost 0, so at least ${wouldStart} domains would be tried`,
      ...(allowance === null ? [] : [`  ${describeAllowance(allowance)}`]),
      ...(summary.skippedInFlight
        ? [`  ${summary.skippedInFlight} domains held back: a run or an unresolved request is in flight`]
        : []),
      ...(summary.skippedBackoff
        ? [`  ${summary.skippedBackoff} domains held back: their last run failed recently`]
        : []),
      ...plan.entries
        .slice(0, 10)
        .map((e) => `  ${e.domain} (${e.reason}, last enriched ${e.lastEnrichedAt ?? 'never'})`),
      ...(plan.entries.length > 10 ? [`  … and ${plan.entries.length - 10} more`] : []),
      '  nothing was spent',
    ];
    return { exitCode: 0, summary, human };
  } finally {
    await mirror.close();
  }
}

function humanSummary(result: RunResult<EnrichStats>, mirrorPath: string): string[] {
  const s = result.stats;
  const lines = [
    `enrich ${result.status} (run ${result.runId}): ${s.creditsSpent} of ${s.budget} credits spent`,
    `  ${s.started} runs started, ${s.cached} served from cache (0 credits), ${s.resumed} resumed from earlier runs`,
    `  ${s.completed} completed (${s.profilesUpdated} profiles updated), ${s.failedRuns} failed, ${s.leftPending} still pending (resumed by the next enrich)`,
  ];
  if (s.unknown) lines.push(`  ${s.unknown} requests with an unknown outcome were not retried`);
  if (s.notTried)
    lines.push(`  ${s.notTried} planned domains left for a later run (${s.stopReason ?? 'stopped'})`);
  if (s.skippedInFlight || s.skippedBackoff) {
    lines.push(`  held back: ${s.skippedInFlight} in flight, ${s.skippedBackoff} failed recently`);
  }
  if (s.stoppedByAllowance) lines.push(`  stopped by an allowance: ${s.stoppedByAllowance.message}`);
  else if (s.allowance) lines.push(`  at the start, ${describeAllowance(s.allowance)}`);
  if (s.reconciliation) lines.push(`  ${s.reconciliation.message}`);
  for (const f of result.failures.slice(0, 20)) lines.push(`  failed: ${f.item}: ${f.code}: ${f.message}`);
  if (result.failures.length > 20) lines.push(`  … and ${result.failures.length - 20} more failures`);
  if (result.error) lines.push(`  stopped: ${result.error.code}: ${result.error.message}`);
  lines.push(`  mirror: ${mirrorPath}`);
  return lines;
}
