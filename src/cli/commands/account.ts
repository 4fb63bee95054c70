import { recordAccountSnapshot } from '../../mirror/store/credits.js';
import { isoFromMs } from '../../util/time.js';
import type { CommandContext, CommandResult } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { openServices } from '../services.js';

/** `domain-sync account`: the plan and credit balance (GET /account, 0 credits), also recorded in the mirror. */
export async function accountCommand(ctx: CommandContext): Promise<CommandResult> {
  const services = await openServices(ctx);
  try {
    const account = await services.api.getAccount({ signal: ctx.signal });
    recordAccountSnapshot(services.mirror, account, { at: isoFromMs(services.clock()) });
    const granted =
      account.credits_granted === null ? 'unlimited (no quota enforced)' : String(account.credits_granted);
    return {
      exitCode: EXIT.OK,
      summary: { account },
      human: [
        `plan               ${account.plan}`,
        `credits granted    ${granted}`,
        `credits used       ${account.credits_used}`,
        `credits reserved   ${account.credits_reserved}`,
        `available credits  ${account.available_credits}`,
      ],
    };
  } finally {
    await services.close();
  }
}
