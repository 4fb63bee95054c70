import { DomainSyncError } from '../../util/domain-sync-error.js';
import type { CommandContext, CommandResult } from '../context.js';

// Placeholder until the enrich pipeline lands; it must not survive into a release.
export async function enrichCommand(_ctx: CommandContext): Promise<CommandResult> {
  throw new DomainSyncError('ERR_NOT_IMPLEMENTED', 'enrich is not implemented yet');
}
