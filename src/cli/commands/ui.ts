import { openMirror } from '../../mirror/database.js';
import { isLoopbackHost, startUiServer } from '../../ui/index.js';
import { DomainSyncError } from '../../util/domain-sync-error.js';
import type { CommandContext, CommandResult } from '../context.js';
import { EXIT } from '../exit-codes.js';

interface UiOptions {
  port: number;
  host: string;
}

/**
 * `domain-sync ui`: serves the read-only dashboard (docs/ui.md) until SIGINT/SIGTERM. Needs no
 * API key and never calls the service. Like every command it first creates or upgrades the
 * mirror's schema (a short read-write open); the dashboard itself reads through a read-only
 * connection.
 */
export async function uiCommand(ctx: CommandContext, options: UiOptions): Promise<CommandResult> {
  const path = ctx.config.database.path;
  const logger = ctx.logger;
  await (await openMirror(path, { logger })).close();
  const mirror = await openMirror(path, { logger, readonly: true });
  try {
    let ui;
    try {
      ui = await startUiServer({
        mirror,
        config: ctx.config,
        host: options.host,
        port: options.port,
        logger,
      });
    } catch (error) {
      throw new DomainSyncError(
        'ERR_UI_LISTEN',
        `cannot serve the dashboard on ${options.host}:${options.port}: ${(error as Error).message}`,
        { cause: error },
      );
    }
    const url = `${ui.origin}/`;
    if (!isLoopbackHost(options.host)) {
      ctx.io.stderr.write(
        `domain-sync: warning: --host ${options.host} lets other machines reach the dashboard; it has no login, so anyone who can reach ${url} can read the mirror\n`,
      );
    }
    if (ctx.output.json) {
      ctx.io.stderr.write(`${JSON.stringify({ event: 'listening', url, database: path })}\n`);
    } else {
      ctx.io.stdout.write(`dashboard of ${path} on ${url} (read-only; press Ctrl-C to stop)\n`);
    }
    await new Promise<void>((resolve) => {
      if (ctx.signal.aborted) resolve();
      else ctx.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    await ui.close();
    return { exitCode: EXIT.OK, summary: { url, database: path }, human: ['dashboard stopped'] };
  } finally {
    await mirror.close();
  }
}
