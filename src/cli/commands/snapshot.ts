import { snapshotPipeline, type SnapshotOptions } from '../../../pipelines/snapshot.js';
import { SNAPSHOT_SCHEMA, type NormaliseEnv } from '../../../pipelines/step-options/index.js';
import { openMirror } from '../../mirror/database.js';
import type { MirrorRunContext } from '../../runtime/run.js';
import { raiseYoungGenerationCap } from '../../util/heap-growth.js';
import { systemClock } from '../../util/time.js';
import type { CommandContext, CommandResult } from '../context.js';
import { exitCodeForOutcome } from '../exit-codes.js';
import { optionsFromFlags } from '../step-flags.js';

// Same shape as the other command files (flags, options, services, run, report), by design.
/** Flags of `snapshot` as commander hands them over (see program.ts). */
export interface SnapshotFlags {
  out?: string;
  tables?: string;
  to?: string[];
}

/**
 * The snapshot pipeline's options from `snapshot`'s flags: what a snapshot step's options would
 * mean. `--to` names are checked against `destinations` (the config's) when given.
 */
export function snapshotOptionsFromFlags(
  flags: SnapshotFlags,
  cwd: string,
  destinations?: NormaliseEnv['destinations'],
): SnapshotOptions {
  return optionsFromFlags(SNAPSHOT_SCHEMA, { ...flags }, cwd, destinations);
}

/**
 * `domain-sync snapshot [--out DIR] [--tables a,b] [--to NAME]…`: see {@link snapshotPipeline}.
 * Opens only the mirror: no API key or base URL is needed (an upload's credentials come from the
 * AWS SDK's default chain). The flags mean what a snapshot step's options mean: `--out` is
 * resolved against the working directory (default `snapshots.dir`); an unknown or empty
 * `--tables`, or a `--to` that is not an s3 destination of the config, is exit 2 before the
 * mirror is opened.
 */
export async function snapshotCommand(ctx: CommandContext, flags: SnapshotFlags): Promise<CommandResult> {
  const config = ctx.config;
  const options = snapshotOptionsFromFlags(flags, ctx.io.cwd, config.destinations);
  // Its row groups outlive a small young generation (src/util/heap-growth.ts).
  raiseYoungGenerationCap();
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
    const result = await snapshotPipeline(runCtx, options);
    const s = result.stats;
    const written = Object.entries(s.tables);
    const width = Math.max(0, ...written.map(([table]) => table.length));
    const human = [
      `snapshot ${result.status} (run ${result.runId}, snapshot_date=${s.snapshotDate})`,
      ...written.map(
        ([table, t]) =>
          `  ${table.padEnd(width)}  ${String(t.rows).padStart(9)} ${t.rows === 1 ? 'row ' : 'rows'}  ${formatBytes(t.bytes)}`,
      ),
      ...(s.removedPartitions.length
        ? [`  removed by snapshots.retainDates: ${s.removedPartitions.join(', ')}`]
        : []),
      ...Object.values(s.uploads).map(
        (u) =>
          `  → ${u.destination} ${u.url}: ${u.status}, ${u.uploaded.objects} uploaded (${formatBytes(u.uploaded.bytes)}), ` +
          `${u.skipped.objects} already in place (${formatBytes(u.skipped.bytes)})` +
          (u.dates.length ? `, dates ${u.dates.join(', ')}` : '') +
          (u.removedDates.length ? `, removed by retention ${u.removedDates.join(', ')}` : '') +
          (u.retries ? `, ${u.retries} retries` : ''),
      ),
      ...(result.error ? [`  stopped: ${result.error.code}: ${result.error.message}`] : []),
      `  dir: ${s.dir}`,
    ];
    return {
      exitCode: exitCodeForOutcome(result.status, result.failures.length),
      summary: { ...result, mirror: mirror.path },
      human,
    };
  } finally {
    progress.stop();
    await mirror.close();
  }
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
