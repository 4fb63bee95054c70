import { resolve } from 'node:path';
import { resolveSnapshotTables, snapshotPipeline } from '../../../pipelines/snapshot.js';
import { openMirror } from '../../mirror/database.js';
import type { MirrorRunContext } from '../../runtime/run.js';
import { UsageError } from '../../util/domain-sync-error.js';
import { systemClock } from '../../util/time.js';
import type { CommandContext, CommandResult } from '../context.js';
import { exitCodeForOutcome } from '../exit-codes.js';

interface SnapshotFlags {
  out?: string;
  tables?: string;
}

/**
 * `domain-sync snapshot [--out DIR] [--tables a,b]`: see {@link snapshotPipeline}.
 * Opens only the mirror: no API key or base URL is needed. `--out` is resolved against the
 * working directory; an unknown or empty `--tables` is exit 2 before the mirror is opened.
 */
export async function snapshotCommand(ctx: CommandContext, flags: SnapshotFlags): Promise<CommandResult> {
  const tables = flags.tables === undefined ? undefined : parseTablesFlag(flags.tables);
  resolveSnapshotTables(tables);
  const config = ctx.config;
  const outDir = flags.out === undefined ? config.snapshots.dir : resolve(ctx.io.cwd, flags.out);
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
    const result = await snapshotPipeline(runCtx, { outDir, ...(tables ? { tables } : {}) });
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

/** `a,b` → `['a', 'b']`; blanks around names are ignored, an empty list is a usage error. */
function parseTablesFlag(value: string): string[] {
  const names = value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (names.length === 0) throw new UsageError('--tables: expected a comma-separated list of table names');
  return names;
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
