import { DomainSyncError } from '../../util/domain-sync-error.js';
import type { CommandContext, CommandResult } from '../context.js';

// Placeholder until the schedule pipeline lands; it must not survive into a release.
export async function scheduleCommand(_ctx: CommandContext): Promise<CommandResult> {
  throw new DomainSyncError('ERR_NOT_IMPLEMENTED', 'schedule is not implemented yet');
}
