import { upsertProfiles } from '../../src/mirror/store/profiles.js';
import { listOpenEnrichmentIntents, resolveEnrichmentIntent } from '../../src/mirror/store/enrichment.js';
import { errorCode } from '../../src/runtime/run.js';
import { isoFromMs, normalizeTimestamp } from '../../src/util/time.js';
import type { EnrichScope } from './scope.js';

/**
 * Intents an earlier invocation could not resolve (crash mid-POST, lost answer), open for longer
 * than `lapseMs`. Once a run would have ended, the domain's profile tells: enriched after the
 * intent → something was enriched (billing unknown, reported); not enriched → nothing ran, the
 * domain is free again.
 */
export async function resolveLapsedIntents(scope: EnrichScope, lapseMs: number): Promise<void> {
  const { ctx, stats } = scope;
  const cutoff = isoFromMs(ctx.clock() - lapseMs);
  for (const intent of listOpenEnrichmentIntents(ctx.mirror)) {
    if (intent.created_at > cutoff) continue;
    let lastEnrichedAt: string | null = null;
    try {
      const profile = await ctx.api.getDomain(intent.domain, { signal: ctx.signal });
      lastEnrichedAt = profile.last_enriched_at ? normalizeTimestamp(profile.last_enriched_at) : null;
      upsertProfiles(ctx.mirror, [profile], { syncedAt: scope.nowIso() });
    } catch (error) {
      if (errorCode(error) !== 'ERR_NOT_FOUND') continue;
    }
    // The intent's time is our clock and last_enriched_at the service's, so the label may be
    // wrong under clock skew; either way the intent is closed and the mirror holds the
    // profile just read, whose freshness decides whether the domain is stale again.
    const enriched = lastEnrichedAt !== null && lastEnrichedAt > intent.created_at;
    resolveEnrichmentIntent(ctx.mirror, intent.id, {
      status: enriched ? 'enriched_unattributed' : 'lapsed',
      at: scope.nowIso(),
      note: enriched
        ? `profile enriched at ${lastEnrichedAt} after the intent; whether it was billed is unknown`
        : 'no enrichment followed the intent; treated as not started',
    });
    stats.intentsResolved += 1;
    ctx.logger.warn('unresolved enrichment intent closed', {
      domain: intent.domain,
      intentId: intent.id,
      enriched,
    });
  }
}
