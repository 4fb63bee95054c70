import type { Account } from '../../src/api/index.js';
import { redactText } from '../../src/log/redact.js';
import { recordAccountSnapshot } from '../../src/mirror/store/credits.js';
import { errorCode } from '../../src/runtime/run.js';
import type { RunContext } from '../../src/runtime/run-context.js';
import type { ItemFailure } from '../../src/runtime/run-result.js';
import type { AccountFigures } from './reconcile.js';
import { figuresOf, type EnrichStats } from './stats.js';

/** What the parts of one enrich invocation (run, gate, worker, intents) share. */
export interface EnrichScope {
  readonly ctx: RunContext;
  /** This invocation's `pipeline_runs.id`. */
  readonly runId: number;
  readonly stats: EnrichStats;
  /** Item failures, in the order they happened. */
  readonly failures: ItemFailure[];
  /** Our clock, as ISO text. */
  nowIso(): string;
}

/** Records an account reading (`account_snapshots`) and returns its figures. */
export function noteAccount(scope: EnrichScope, account: Account, when: string): AccountFigures {
  const figures = figuresOf(account);
  recordAccountSnapshot(scope.ctx.mirror, account, { at: scope.nowIso(), pipelineRunId: scope.runId });
  scope.ctx.logger.debug('account read', { when, ...figures });
  return figures;
}

/** An error as a stable code and a message with any key redacted. */
export function describe(error: unknown): { code: string; message: string } {
  return {
    code: errorCode(error),
    message: redactText(error instanceof Error ? error.message : String(error)),
  };
}
