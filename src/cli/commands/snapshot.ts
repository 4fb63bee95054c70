import { DomainSyncError } from '../../util/domain-sync-error.js';
import type { CommandContext, CommandResult } from '../context.js';

// Placeholder until the snapshot pipeline lands; it must not survive into a release.
export async function snapshotCommand(_ctx: CommandContext): Promise<CommandResult> {
  throw new DomainSyncError('ERR_NOT_IMPLEMENTED', 'snapshot is not implemented yet');
}
