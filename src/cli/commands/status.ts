import { baselineLoadName, readBaseline } from '../../mirror/store/baseline.js';
import type { MirrorBaseline } from '../../mirror/store/baseline.js';
import { openMirror } from '../../mirror/database.js';
import {
  creditsPerDay,
  creditsPerPipeline,
  creditsSummary,
  latestAccountSnapshot,
} from '../../mirror/store/credits.js';
import { describeAllowance, readAllowance } from '../../runtime/allowance.js';
import { listLocks } from '../../mirror/store/locks.js';
import { lastRuns, listRunningPipelineRuns } from '../../mirror/store/runs.js';
import { SNAPSHOT_TABLES } from '../../mirror/store/snapshot.js';
import { freshness, mirrorCounts } from '../../mirror/store/status.js';
import { exportsInProgress, lastSnapshotRunDir } from '../../mirror/store/status-snapshots.js';
import { snapshotUploadsByDestination } from '../../mirror/store/snapshot-uploads.js';
// Not the warehouse index: that loads the Parquet writer, which reading a manifest does not need.
import { readSnapshotManifest, type SnapshotManifest } from '../../warehouse/manifest.js';
import { listSnapshotDates } from '../../warehouse/snapshot-layout.js';
import { formatDuration } from '../../util/duration.js';
import type { CommandContext, CommandResult } from '../context.js';
import { destinationLines, destinationsStatus } from './status-destinations.js';
import { EXIT } from '../exit-codes.js';
import type { Config } from '../../config/config.js';
import { destinationUrl } from '../../destinations/s3/layout.js';
import type { SnapshotUploadStatus } from '../../mirror/store/snapshot-uploads.js';

/** The latest snapshot of one table, as `status` reports it. */
export interface TableSnapshotStatus {
  /** Newest `snapshot_date=` partition with a complete file. */
  snapshotDate: string;
  /** Rows and file size from that date's manifest; null when the manifest does not list the table. */
  rows: number | null;
  bytes: number | null;
}

/** The `snapshots` part of `status`: what is under one snapshots dir. */
export interface SnapshotsStatus {
  dir: string;
  /** Newest snapshot date of any table, or null when there is no snapshot. */
  latestDate: string | null;
  /** Mirror tables with at least one snapshot, by name. */
  tables: Record<string, TableSnapshotStatus>;
  /** The dir of the latest `snapshot` run when it differs from `dir` (written with `--out`). */
  lastRunDir: string | null;
}

/** Where the mirror's change history starts (src/mirror/store/baseline.ts). */
function describeBaseline(baseline: MirrorBaseline | null): string {
  if (baseline === null) return 'every change since the mirror was first written';
  if (baseline.finishedAt === null)
    return `${baselineLoadName(baseline)} (begun ${baseline.startedAt}) is still loading the baseline: its domains are not logged as added`;
  return `changes since ${baselineLoadName(baseline)} (${baseline.startedAt}), the baseline; what it loaded is not logged as added`;
}

/**
 * `domain-sync status`: what is in the mirror, how fresh it is, the last run of each pipeline,
 * the credits spent, unfinished exports, and the latest Parquet snapshot of each table (date and
 * row counts from the snapshot manifests under `snapshots.dir`). Reads the mirror and the
 * snapshots dir only: no API key or network needed (the account figures are the last ones
 * recorded by `account`, `enrich` or `export`).
 */
export async function statusCommand(ctx: CommandContext): Promise<CommandResult> {
  const path = ctx.config.database.path;
  const mirror = await openMirror(path, { logger: ctx.logger });
  try {
    const now = new Date().toISOString();
    const counts = mirrorCounts(mirror);
    const fresh = freshness(mirror);
    const runs = lastRuns(mirror);
    const running = listRunningPipelineRuns(mirror);
    const credits = creditsSummary(mirror, { now });
    const allowance = readAllowance(mirror, ctx.config.credits, Date.parse(now));
    const perPipeline = creditsPerPipeline(mirror);
    const sinceDay = new Date(Date.parse(now) - 6 * 86_400_000).toISOString().slice(0, 10);
    // Per UTC day and pipeline over the last 7 days (operations folded together).
    const perDay = new Map<string, { day: string; pipeline: string; credits: number }>();
    for (const row of creditsPerDay(mirror, { sinceDay })) {
      const key = `${row.day} ${row.pipeline}`;
      const entry = perDay.get(key) ?? { day: row.day, pipeline: row.pipeline, credits: 0 };
      entry.credits += row.credits;
      perDay.set(key, entry);
    }
    const last7Days = [...perDay.values()];
    const account = latestAccountSnapshot(mirror) ?? null;
    const exports = exportsInProgress(mirror);
    // The token is the holder's secret for renewing; status has no use for it.
    const locks = listLocks(mirror, now).map(({ token: _token, ...lock }) => lock);
    const snapshots = await snapshotsStatus(ctx.config.snapshots.dir, lastSnapshotRunDir(mirror));
    const destinations = destinationsStatus(mirror, ctx.config);
    const snapshotUploads = snapshotUploadsStatus(ctx.config, snapshotUploadsByDestination(mirror));
    const baseline = readBaseline(mirror) ?? null;
    const snapshotTables = Object.entries(snapshots.tables);
    const width = Math.max(0, ...snapshotTables.map(([table]) => table.length));
    const human = [
      `mirror ${path}`,
      `  domains          ${counts.domains.listed} listed, ${counts.domains.unlisted} no longer listed, ${counts.domains.withProfile} with a profile`,
      `  licences         ${counts.licenses.active} active, ${counts.licenses.removed} removed`,
      `  payment methods  ${counts.paymentMethods.active} active, ${counts.paymentMethods.removed} removed`,
      `  change_log       ${describeBaseline(baseline)}`,
      `  freshness        last_enriched_at from ${fresh.oldestEnrichedAt ?? '-'} to ${fresh.newestEnrichedAt ?? '-'} (median ${fresh.medianEnrichedAt ?? '-'}); ${fresh.profilesNeverFetched} profiles never fetched`,
      `credits spent      today ${credits.today}, this month ${credits.thisMonth}, total ${credits.total}`,
      `  ${describeAllowance(allowance)}`,
      ...perPipeline.map(
        (p) => `  ${p.pipeline.padEnd(16)} ${p.credits} credits in ${p.entries} ledger entries`,
      ),
      ...last7Days.map((d) => `  ${d.day}  ${d.pipeline.padEnd(12)} ${d.credits}`),
      ...(account
        ? [
            `account            ${account.available_credits ?? '?'} available of ${account.credits_granted ?? 'unlimited'} (as of ${account.at})`,
          ]
        : []),
      ...(exports.length
        ? [
            'exports in progress',
            ...exports.map(
              (e) =>
                `  export ${e.id} ${e.status}${e.download_status ? `/${e.download_status}` : ''}, requested ${e.requested_at ?? '-'}, expires ${e.expires_at ?? '-'}`,
            ),
          ]
        : []),
      `snapshots          ${snapshots.latestDate === null ? 'none yet' : `latest ${snapshots.latestDate}`} in ${snapshots.dir}`,
      ...snapshotTables.map(
        ([table, t]) =>
          `  ${table.padEnd(width)}  ${t.snapshotDate}  ${t.rows === null ? '? (no manifest entry)' : `${t.rows} rows`}`,
      ),
      ...(snapshots.lastRunDir ? [`  the latest snapshot run wrote to ${snapshots.lastRunDir}`] : []),
      ...destinationLines(destinations, now),
      ...snapshotUploads.map(
        (u) =>
          `  → ${u.destination}${u.url ? ` ${u.url}` : ''}: ${u.latestDate === null ? 'nothing uploaded yet' : `latest ${u.latestDate} (uploaded ${u.latestDateUploadedAt ?? '?'})`}` +
          (u.lastError ? `; last upload failed: ${u.lastError}` : ''),
      ),
      ...(locks.length === 0
        ? ['locks              none (no pipeline is writing the mirror)']
        : [
            'locks',
            ...locks.map(
              (l) =>
                `  ${l.pipeline} (pid ${l.pid} on ${l.hostname}) since ${l.acquired_at}, lease until ${l.expires_at}${l.stale ? ' (stale: its holder stopped renewing; the next run takes it over)' : ''}`,
            ),
          ]),
      'last runs',
      ...(runs.length === 0 ? ['  none yet'] : []),
      ...runs.map((r) => {
        const took = r.finished_at
          ? formatDuration(Date.parse(r.finished_at) - Date.parse(r.started_at))
          : 'running';
        return `  ${r.pipeline.padEnd(12)} ${r.status.padEnd(18)} ${r.started_at}  ${took}${r.credits_spent ? `  ${r.credits_spent} credits` : ''}`;
      }),
    ];
    return {
      exitCode: EXIT.OK,
      summary: {
        database: path,
        counts,
        freshness: fresh,
        baseline,
        lastRuns: runs,
        running,
        locks,
        credits: {
          ...credits,
          // What the allowances leave now (spends in flight or unknown count as spent); null: none set.
          remaining: {
            today: allowance.day?.remaining ?? null,
            thisMonth: allowance.month?.remaining ?? null,
          },
          allowance,
          perPipeline,
          last7Days,
        },
        account,
        exportsInProgress: exports,
        snapshots,
        destinations,
        snapshotUploads,
      },
      human,
    };
  } finally {
    await mirror.close();
  }
}

/** One destination in `status`: the latest date uploaded there, from the snapshot runs. */
export interface SnapshotUploadsStatusEntry extends SnapshotUploadStatus {
  /** `s3://bucket/prefix` when the destination is still in the config, else null. */
  url: string | null;
}

/**
 * The s3 destinations of the config and any other destination a snapshot run uploaded to, each
 * with the latest date uploaded there (null: nothing yet) and the last attempt's error.
 */
function snapshotUploadsStatus(
  config: Config,
  recorded: SnapshotUploadStatus[],
): SnapshotUploadsStatusEntry[] {
  const out = new Map<string, SnapshotUploadsStatusEntry>();
  for (const d of Object.values(config.destinations)) {
    if (d.type !== 's3') continue;
    out.set(d.name, {
      destination: d.name,
      url: destinationUrl(d.bucket, d.prefix),
      latestDate: null,
      latestDateUploadedAt: null,
      lastRunId: 0,
      lastStatus: 'never',
      lastAt: null,
      lastError: null,
    });
  }
  for (const r of recorded) out.set(r.destination, { ...r, url: out.get(r.destination)?.url ?? null });
  return [...out.values()].sort((a, b) => a.destination.localeCompare(b.destination));
}

/**
 * Latest snapshot date per mirror table under `dir` (from the partition folders, so a table
 * written alone with `--tables` shows its own date) and its row count from that date's manifest.
 */
async function snapshotsStatus(dir: string, lastRunDir: string | null): Promise<SnapshotsStatus> {
  const tables: Record<string, TableSnapshotStatus> = {};
  const manifests = new Map<string, SnapshotManifest | null>();
  for (const table of SNAPSHOT_TABLES) {
    const [latest] = await listSnapshotDates(dir, table);
    if (latest === undefined) continue;
    if (!manifests.has(latest)) {
      // An unreadable manifest should not make `status` fail; the counts just show as unknown.
      manifests.set(latest, await readSnapshotManifest(dir, latest).catch(() => null));
    }
    const entry = manifests.get(latest)?.tables[table];
    tables[table] = { snapshotDate: latest, rows: entry?.rows ?? null, bytes: entry?.bytes ?? null };
  }
  const dates = Object.values(tables).map((t) => t.snapshotDate);
  return {
    dir,
    latestDate: dates.length ? dates.reduce((a, b) => (a > b ? a : b)) : null,
    tables,
    lastRunDir: lastRunDir !== null && lastRunDir !== dir ? lastRunDir : null,
  };
}
