import { openRunContext, type OwnedRunContext } from '../runtime/run-context.js';
import type { CommandContext } from './context.js';

/**
 * Opens the client and the mirror for a command that calls the service. Order matters: the
 * config (exit 2 on problems), the base URL and the key are checked before anything is opened.
 */
export async function openServices(ctx: CommandContext, progress = false): Promise<OwnedRunContext> {
  const config = ctx.config;
  const baseUrl = ctx.requireBaseUrl();
  const apiKey = ctx.requireApiKey();
  return openRunContext({
    config,
    apiKey,
    baseUrl,
    logger: ctx.logger,
    signal: ctx.signal,
    progress: progress ? ctx.output.progress() : undefined,
  });
}
