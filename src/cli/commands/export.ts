import { exportPipeline } from '../../../pipelines/export/index.js';
import type { ExportStats } from '../../../pipelines/export/index.js';
import { PROFILE_SECTIONS } from '../../mirror/store/domains.js';
import type { RunResult } from '../../runtime/run-result.js';
import { UsageError } from '../../util/domain-sync-error.js';
import type { CommandContext, CommandResult } from '../context.js';
import { exitCodeForOutcome } from '../exit-codes.js';
import { parseFilterFlags } from '../filters.js';
import { openServices } from '../services.js';

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

/**
 * Parses `--fields a,b` into section names. The sections are the profile's (api-spec.md
 * "Domain profile"); an unknown name is a usage error naming the known ones, before any request.
 */
export function parseFieldsFlag(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const fields = value
    .split(',')
    .map((f) => f.trim())
    .filter((f) => f !== '');
  for (const field of fields) {
    if (
      !(PROFILE_SECTIONS as readonly string[]).includes(field) &&
      field !== 'licenses' &&
      field !== 'payment_methods'
    ) {
      throw new UsageError(
        `--fields: unknown section "${field}" (known: licenses, payment_methods, ${PROFILE_SECTIONS.join(', ')})`,
      );
    }
  }
  return fields;
}

/**
 * `domain-sync export`: see {@link exportPipeline}. Exit status: 0 done, and also when
 * `--max-credits` refused the estimate (the budget rule of PRODUCT.md "CLI"; nothing was spent
 * and the summary says so); 3 when the account has too few credits or the quota ran out; 1 for
 * every other failure (expired file, unknown POST outcome, bad file, failed export).
 */
export async function exportCommand(ctx: CommandContext, flags: ExportFlags): Promise<CommandResult> {
  const filters = parseFilterFlags(flags.filter, { forbid: ['page', 'per_page'] });
  const fields = parseFieldsFlag(flags.fields);
  const services = await openServices(ctx, true);
  try {
    const result = await exportPipeline(services, {
      filters,
      format: flags.format ?? 'csv',
      fields,
      maxCredits: flags.maxCredits,
      load: flags.load !== false,
      recreateExpired: flags.recreateExpired === true,
      forgetUnknown: flags.forgetUnknown === true,
    });
    services.progress.stop();
    return {
      exitCode: exitCodeForOutcome(result.status, result.failures.length),
      summary: { ...result, mirror: services.mirror.path },
      human: humanLines(result, services.mirror.path, flags.load !== false),
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
  if (s.unknownColumns.length > 0)
    lines.push(`  unmapped columns kept in raw_profile: ${s.unknownColumns.join(', ')}`);
  if (s.filesRemoved > 0) lines.push(`  removed ${s.filesRemoved} old export file(s) (exports.retention)`);
  if (result.error)
    lines.push(
      `  ${result.status === 'budget_reached' ? 'refused' : 'stopped'}: ${result.error.code}: ${result.error.message}`,
    );
  lines.push(`  mirror: ${mirrorPath}`);
  return lines;
}
