import { migrateMirror, openMirror } from '../../mirror/database.js';
import type { CommandContext, CommandResult } from '../context.js';
import { EXIT } from '../exit-codes.js';

/** `domain-sync migrate`: creates or upgrades the mirror schema (every command also does it itself). */
export async function migrateCommand(ctx: CommandContext): Promise<CommandResult> {
  const path = ctx.config.database.path;
  const mirror = await openMirror(path, { logger: ctx.logger, migrate: false });
  try {
    const { applied } = await migrateMirror(mirror);
    return {
      exitCode: EXIT.OK,
      summary: { database: path, applied },
      human: [applied.length ? `applied ${applied.join(', ')} to ${path}` : `${path} is up to date`],
    };
  } finally {
    await mirror.close();
  }
}
