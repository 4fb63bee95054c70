import { openMirror } from '../../mirror/database.js';
import { creditsPerPipeline, creditsSummary, latestAccountSnapshot } from '../../mirror/store/credits.js';
import { lastRuns, listRunningPipelineRuns } from '../../mirror/store/runs.js';
import { freshness, mirrorCounts } from '../../mirror/store/status.js';
import { formatDuration } from '../../util/duration.js';
import type { CommandContext, CommandResult } from '../context.js';
import { EXIT } from '../exit-codes.js';

/**
 * `domain-sync status`: what is in the mirror, how fresh it is, the last run of each pipeline
 * and the credits spent. Reads the mirror only: no API key or network needed (the account
 * figures are the last ones recorded by `account`, `enrich` or `export`).
 */
export async function statusCommand(ctx: CommandContext): Promise<CommandResult> {
  const path = ctx.config.database.path;
  const mirror = await openMirror(path, { logger: ctx.logger });
  try {
    const now = new Date().toISOString();
    const counts = mirrorCounts(mirror);
    const fresh = freshness(mirror);
    const runs = lastRuns(mirror);
    const running = listRunningPipelineRuns(mirror);
    const credits = creditsSummary(mirror, { now });
    const perPipeline = creditsPerPipeline(mirror);
    const account = latestAccountSnapshot(mirror) ?? null;
    const human = [
      `mirror ${path}`,
      `  domains          ${counts.domains.listed} listed, ${counts.domains.unlisted} no longer listed, ${counts.domains.withProfile} with a profile`,
      `  licences         ${counts.licenses.active} active, ${counts.licenses.removed} removed`,
      `  payment methods  ${counts.paymentMethods.active} active, ${counts.paymentMethods.removed} removed`,
      `  freshness        last_enriched_at from ${fresh.oldestEnrichedAt ?? '-'} to ${fresh.newestEnrichedAt ?? '-'} (median ${fresh.medianEnrichedAt ?? '-'}); ${fresh.profilesNeverFetched} profiles never fetched`,
      `credits spent      today ${credits.today}, this month ${credits.thisMonth}, total ${credits.total}`,
      ...(account
        ? [`account            ${account.available_credits ?? '?'} available of ${account.credits_granted ?? 'unlimited'} (as of ${account.at})`]
        : []),
      'last runs',
      ...(runs.length === 0 ? ['  none yet'] : []),
      ...runs.map((r) => {
        const took = r.finished_at ? formatDuration(Date.parse(r.finished_at) - Date.parse(r.started_at)) : 'running';
        return `  ${r.pipeline.padEnd(12)} ${r.status.padEnd(18)} ${r.started_at}  ${took}${r.credits_spent ? `  ${r.credits_spent} credits` : ''}`;
      }),
    ];
    return {
      exitCode: EXIT.OK,
      summary: { database: path, counts, freshness: fresh, lastRuns: runs, running, credits: { ...credits, perPipeline }, account },
      human,
    };
  } finally {
    await mirror.close();
  }
}
