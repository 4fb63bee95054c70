import { publishPipeline, type PublishOptions, type PublishStats } from '../../../pipelines/publish.js';
import { PUBLISH_SCHEMA } from '../../../pipelines/step-options/index.js';
import { openMirror } from '../../mirror/database.js';
import type { MirrorRunContext } from '../../runtime/run.js';
import type { RunResult } from '../../runtime/run-result.js';
import { systemClock } from '../../util/time.js';
import type { CommandContext, CommandResult } from '../context.js';
import { exitCodeForOutcome } from '../exit-codes.js';
import { optionsFromFlags } from '../step-flags.js';

// Same shape as the other command files (flags, options, services, run, report), by design.
/** Flags of `publish` as commander hands them over (see program.ts). */
export interface PublishFlags {
  to?: string[];
  tables?: string;
  full?: boolean;
}

/** The publish pipeline's options from `publish`'s flags: what a publish step's options would mean. */
export function publishOptionsFromFlags(flags: PublishFlags, cwd: string): PublishOptions {
  return optionsFromFlags(PUBLISH_SCHEMA, { ...flags }, cwd);
}

/**
 * `domain-sync publish [--to NAME]... [--tables a,b] [--full]`: see {@link publishPipeline}.
 * Opens only the mirror: no API key or base URL is needed. The PostgreSQL password comes from
 * PGPASSWORD or the password file (~/.pgpass, PGPASSFILE), like every libpq setting the url
 * leaves out. An unknown destination or table, or a bad url parameter, is exit 2 before the
 * mirror is opened; a destination that fails is exit 1 naming it.
 */
export async function publishCommand(ctx: CommandContext, flags: PublishFlags): Promise<CommandResult> {
  const options: PublishOptions = { ...publishOptionsFromFlags(flags, ctx.io.cwd), env: ctx.io.env };
  const config = ctx.config;
  const mirror = await openMirror(config.database.path, { logger: ctx.logger });
  const progress = ctx.output.progress();
  try {
    const runCtx: MirrorRunContext = {
      config,
      mirror,
      logger: ctx.logger,
      signal: ctx.signal,
      progress,
      clock: systemClock,
    };
    const result = await publishPipeline(runCtx, options);
    progress.stop();
    return {
      exitCode: exitCodeForOutcome(result.status, result.failures.length),
      summary: { ...result, mirror: mirror.path },
      human: describePublish(result),
    };
  } finally {
    progress.stop();
    await mirror.close();
  }
}

/** Text lines of a publish: per destination, where to and the rows per table. */
export function describePublish(result: RunResult<PublishStats>): string[] {
  const lines = [`publish ${result.status} (run ${result.runId ?? 'not started'})`];
  for (const [name, d] of Object.entries(result.stats.destinations)) {
    const where = `${d.server ?? '?'}, database ${d.database ?? '?'}, schema ${d.schema}`;
    if (d.status === 'failed') {
      lines.push(`  ${name}: failed (${where})`, `    ${d.error?.code}: ${d.error?.message}`);
      continue;
    }
    lines.push(
      `  ${name}: ${d.rows} ${d.rows === 1 ? 'row' : 'rows'} sent to ${where}` +
        (d.attempts > 1 ? ` after ${d.attempts} attempts` : ''),
    );
    const width = Math.max(0, ...Object.keys(d.tables).map((t) => t.length));
    for (const [table, t] of Object.entries(d.tables)) {
      lines.push(
        `    ${table.padEnd(width)}  ${String(t.rows).padStart(9)} ${t.mode === 'full' ? '(all rows)' : ''}`.trimEnd(),
      );
    }
    if (d.created.length > 0) lines.push(`    created: ${d.created.join(', ')}`);
  }
  if (result.error && Object.keys(result.stats.destinations).length === 0) {
    lines.push(`  stopped: ${result.error.code}: ${result.error.message}`);
  }
  return lines;
}
