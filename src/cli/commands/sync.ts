import { SYNC_SCHEMA } from '../../../pipelines/step-options/index.js';
import { syncPipeline, type SyncOptions } from '../../../pipelines/sync.js';
import type { CommandContext, CommandResult } from '../context.js';
import { exitCodeForOutcome } from '../exit-codes.js';
import { firstLoadLines } from '../first-load-summary.js';
import { openServices } from '../services.js';
import { optionsFromFlags } from '../step-flags.js';

// Same shape as the other command files (flags, options, services, run, report), by design.
/** Flags of `sync` as commander hands them over (see program.ts). */
export interface SyncFlags {
  filter?: string[];
  full?: boolean;
  profiles?: boolean;
  concurrency?: number;
}

/** The sync pipeline's options from `sync`'s flags: what a sync step's options would mean. */
export function syncOptionsFromFlags(flags: SyncFlags, cwd: string): SyncOptions {
  return optionsFromFlags(SYNC_SCHEMA, { ...flags }, cwd);
}

/** `domain-sync sync`: see {@link syncPipeline}. */
export async function syncCommand(ctx: CommandContext, flags: SyncFlags): Promise<CommandResult> {
  const options = syncOptionsFromFlags(flags, ctx.io.cwd);
  const services = await openServices(ctx, true);
  try {
    const result = await syncPipeline(services, options);
    services.progress.stop();
    const s = result.stats;
    const human = [
      `sync ${result.status} (run ${result.runId}, ${s.mode} listing${s.enrichedAfter ? ` after ${s.enrichedAfter}` : ''})`,
      `  listed ${s.listed} domains in ${s.pages} pages (${s.new} new, ${s.changed} changed, ${s.unchanged} unchanged)`,
      `  profiles fetched ${s.profilesFetched}, failed ${s.profilesFailed}${s.due ? `, ${s.due} due from earlier runs` : ''}`,
      ...(s.unlisted ? [`  ${s.unlisted} domains no longer listed (marked, not deleted)`] : []),
      ...(s.driftDetected ? ['  the catalogue changed while listing; listed again to catch up'] : []),
      ...firstLoadLines(s, 'sync'),
      ...result.failures.slice(0, 20).map((f) => `  failed: ${f.item}: ${f.code}: ${f.message}`),
      ...(result.failures.length > 20 ? [`  … and ${result.failures.length - 20} more failures`] : []),
      ...(result.error ? [`  stopped: ${result.error.code}: ${result.error.message}`] : []),
      `  mirror: ${services.mirror.path}`,
    ];
    return {
      exitCode: exitCodeForOutcome(result.status, result.failures.length),
      summary: { ...result, mirror: services.mirror.path },
      human,
    };
  } finally {
    await services.close();
  }
}
