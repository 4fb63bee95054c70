import { exportPipeline } from '../../../pipelines/export/index.js';
import type { ExportOptions, ExportStats } from '../../../pipelines/export/index.js';
import { EXPORT_SCHEMA } from '../../../pipelines/step-options/index.js';
import type { RunResult } from '../../runtime/run-result.js';
import { describeAllowance } from '../../runtime/allowance.js';
import type { CommandContext, CommandResult } from '../context.js';
import { exitCodeForOutcome } from '../exit-codes.js';
import { firstLoadLines } from '../first-load-summary.js';
import { openServices } from '../services.js';
import { optionsFromFlags } from '../step-flags.js';

// Same shape as the other command files (flags, options, services, run, report), by design.
/** Flags of `export` as commander hands them over (see program.ts). */
export interface ExportFlags {
  filter?: string[];
  format?: 'csv' | 'json';
  fields?: string;
  maxCredits?: number;
  /** `--no-load` sets this to false. */
  load?: boolean;
  recreateExpired?: boolean;
  forgetUnknown?: boolean;
}

/** The export pipeline's options from `export`'s flags: what an export step's options would mean. */
export function exportOptionsFromFlags(flags: ExportFlags, cwd: string): ExportOptions {
  return optionsFromFlags(EXPORT_SCHEMA, { ...flags }, cwd);
}

/**
 * `domain-sync export`: see {@link exportPipeline}. Exit status: 0 done, and also when
 * `--max-credits` refused the estimate (the budget rule of docs/contract.md "CLI"; nothing was spent
 * and the summary says so); 3 when the account has too few credits or the quota ran out; 1 for
 * every other failure (expired file, unknown POST outcome, bad file, failed export).
 */
export async function exportCommand(ctx: CommandContext, flags: ExportFlags): Promise<CommandResult> {
  const options = exportOptionsFromFlags(flags, ctx.io.cwd);
  const services = await openServices(ctx, true);
  try {
    const result = await exportPipeline(services, options);
    services.progress.stop();
    return {
      exitCode: exitCodeForOutcome(result.status, result.failures.length),
      summary: { ...result, mirror: services.mirror.path },
      human: humanLines(result, services.mirror.path, options.load !== false),
    };
  } finally {
    await services.close();
  }
}

function humanLines(result: RunResult<ExportStats>, mirrorPath: string, load: boolean): string[] {
  const s = result.stats;
  const lines = [
    `export ${result.status} (run ${result.runId}${s.exportId === null ? '' : `, export ${s.exportId} ${s.mode}`})`,
  ];
  if (s.estimatedCredits !== null) {
    lines.push(
      `  estimate ${s.estimatedCredits} credits for ${s.matchingDomains} domains at ${s.creditsPerRow} per row (${s.priceSource})` +
        (s.availableCredits === null ? '' : `; ${s.availableCredits} available`),
    );
  }
  if (s.allowance !== null) lines.push(`  ${describeAllowance(s.allowance)}`);
  if (s.creditsUsed !== null) {
    lines.push(
      `  credits used ${s.creditsUsed}${s.estimateError === null ? '' : ` (estimate off by ${s.estimateError})`}`,
    );
  }
  if (s.filePath !== null) lines.push(`  file ${s.filePath} (${s.bytes} bytes, sha256 ${s.sha256})`);
  if (s.rowsLoaded > 0 || (load && s.filePath !== null && result.status === 'done')) {
    lines.push(`  loaded ${s.rowsLoaded} rows into the mirror`);
  } else if (!load && result.status === 'done') {
    lines.push('  not loaded (--no-load); run export again without it to load the file');
  }
  lines.push(...firstLoadLines(s, 'load'));
  if (s.unknownColumns.length > 0)
    lines.push(`  unmapped columns kept in profile_extra: ${s.unknownColumns.join(', ')}`);
  if (s.filesRemoved > 0) lines.push(`  removed ${s.filesRemoved} old export file(s) (exports.retention)`);
  if (result.error)
    lines.push(
      `  ${result.status === 'budget_reached' ? 'refused' : 'stopped'}: ${result.error.code}: ${result.error.message}`,
    );
  lines.push(`  mirror: ${mirrorPath}`);
  return lines;
}
