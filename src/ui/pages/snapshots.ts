import type { DestinationConfig } from '../../config/destinations.js';
import { lastSnapshotRunDir } from '../../mirror/store/status-snapshots.js';
import { SNAPSHOT_TABLES } from '../../mirror/store/snapshot.js';
import { readConsistently } from '../../mirror/store/ui-overview.js';
import { listPipelineRuns } from '../../mirror/store/ui-runs.js';
import type { PipelineRunRecord } from '../../mirror/store/runs.js';
// Not the warehouse index: that loads the Parquet writer, which reading a manifest does not need.
import { readSnapshotManifest, type SnapshotManifest } from '../../warehouse/manifest.js';
import { listSnapshotDates } from '../../warehouse/snapshot-layout.js';
import type { UiContext } from '../context.js';
import { badge, formatCount, formatTime } from '../format.js';
import { html } from '../html.js';
import type { SafeHtml } from '../html.js';
import type { Page } from '../layout.js';
import { parseParams } from '../params.js';
import { statsSummary } from './runs.js';

/**
 * Pipelines whose runs deliver the mirror somewhere; their latest runs are listed with their
 * stats, which is where `publish` and an upload report what they sent. A delivery that keeps its
 * own state table gets a read function in `src/mirror/store/ui-*.ts` and a section below.
 */
export const DELIVERY_PIPELINES: readonly string[] = ['snapshot', 'publish'];
const DELIVERY_RUNS = 10;

/** One snapshot date under a snapshots dir: the tables with a file, and the manifest's figures. */
interface SnapshotDateView {
  date: string;
  tables: Array<{ table: string; rows: number | null; bytes: number | null; writtenAt: string | null }>;
  manifestError: boolean;
}

/** Every snapshot date under `dir`, newest first, from the partition folders and manifests. */
async function snapshotDates(dir: string): Promise<SnapshotDateView[]> {
  const byDate = new Map<string, Set<string>>();
  for (const table of SNAPSHOT_TABLES) {
    for (const date of await listSnapshotDates(dir, table)) {
      let tables = byDate.get(date);
      if (tables === undefined) byDate.set(date, (tables = new Set()));
      tables.add(table);
    }
  }
  const dates = [...byDate.keys()].sort().reverse();
  const views: SnapshotDateView[] = [];
  for (const date of dates) {
    let manifest: SnapshotManifest | null = null;
    let manifestError = false;
    try {
      manifest = await readSnapshotManifest(dir, date);
    } catch {
      manifestError = true;
    }
    views.push({
      date,
      manifestError,
      tables: [...(byDate.get(date) ?? [])].sort().map((table) => {
        const entry = manifest?.tables[table];
        return {
          table,
          rows: entry?.rows ?? null,
          bytes: entry?.bytes ?? null,
          writtenAt: entry?.written_at ?? null,
        };
      }),
    });
  }
  return views;
}

/**
 * Where a destination points, without anything that could be a secret: a PostgreSQL URL loses its
 * user info and query (the config refuses a password there anyway), an S3 destination shows its
 * bucket, prefix and endpoint.
 */
export function destinationTarget(destination: DestinationConfig): string {
  if (destination.type === 'postgres') {
    try {
      const url = new URL(destination.url);
      return `${url.protocol}//${url.host}${url.pathname} (schema ${destination.schema})`;
    } catch {
      return `(unreadable URL) (schema ${destination.schema})`;
    }
  }
  const where = `s3://${destination.bucket}/${destination.prefix}`;
  return destination.endpoint === null ? where : `${where} at ${new URL(destination.endpoint).origin}`;
}

function deliveryRuns(runs: readonly PipelineRunRecord[]): SafeHtml {
  if (runs.length === 0) return html`<p class="muted">No snapshot or publish run yet.</p>`;
  return html`<table>
    <thead>
      <tr>
        <th class="num">run</th>
        <th>pipeline</th>
        <th>outcome</th>
        <th>started</th>
        <th>stats</th>
      </tr>
    </thead>
    <tbody>
      ${runs.map(
        (r) =>
          html`<tr>
            <td class="num"><a href="/runs/${r.id}">${r.id}</a></td>
            <td>${r.pipeline}</td>
            <td>${badge(r.status)}</td>
            <td>${formatTime(r.started_at)}</td>
            <td>${statsSummary(r.stats)}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

/**
 * `/snapshots`: the Parquet snapshot dates under `snapshots.dir` (tables, rows, sizes from the
 * manifests), the destinations of the config and the latest delivery runs.
 */
export async function snapshotsPage(ctx: UiContext, search: URLSearchParams): Promise<Page> {
  parseParams(search, {});
  const { runs, lastDir } = readConsistently(ctx.mirror, () => ({
    runs: DELIVERY_PIPELINES.flatMap((pipeline) =>
      listPipelineRuns(ctx.mirror, { pipeline, limit: DELIVERY_RUNS - 1 }),
    ),
    lastDir: lastSnapshotRunDir(ctx.mirror),
  }));
  runs.sort((a, b) => b.id - a.id);
  const dir = ctx.config.snapshots.dir;
  const dates = await snapshotDates(dir);
  const destinations = Object.values(ctx.config.destinations);
  const uploadsTo = ctx.config.snapshots.to;
  const body = html`<h1>Snapshots</h1>
    <p>
      Parquet snapshots in
      <code>${dir}</code>${
        uploadsTo.length === 0
          ? ', kept locally'
          : html`; <code>snapshots.to</code> also sends them to ${uploadsTo.join(', ')}`
      };
      ${
        ctx.config.snapshots.retainDates === 0
          ? 'every date is kept'
          : `the newest ${ctx.config.snapshots.retainDates} dates are kept`
      }.${lastDir !== null && lastDir !== dir ? html` The latest snapshot run wrote to <code>${lastDir}</code>.` : ''}
    </p>
    ${
      dates.length === 0
        ? html`<p class="muted">No snapshot yet (<code>domain-sync snapshot</code> writes one).</p>`
        : html`<table>
            <thead>
              <tr>
                <th>date</th>
                <th>table</th>
                <th class="num">rows</th>
                <th class="num">bytes</th>
                <th>written</th>
              </tr>
            </thead>
            <tbody>
              ${dates.map((d) =>
                d.tables.map(
                  (t, i) =>
                    html`<tr>
                      ${i === 0 ? html`<td rowspan="${d.tables.length}">${d.date}${d.manifestError ? html` ${badge('unreadable manifest')}` : ''}</td>` : ''}
                      <td>${t.table}</td>
                      <td class="num">${formatCount(t.rows)}</td>
                      <td class="num">${formatCount(t.bytes)}</td>
                      <td>${formatTime(t.writtenAt)}</td>
                    </tr>`,
                ),
              )}
            </tbody>
          </table>`
    }
    <h2>Destinations</h2>
    ${
      destinations.length === 0
        ? html`<p class="muted">None configured (<code>destinations</code> in the config).</p>`
        : html`<table>
            <thead>
              <tr>
                <th>name</th>
                <th>type</th>
                <th>where</th>
                <th>receives</th>
              </tr>
            </thead>
            <tbody>
              ${destinations.map(
                (d) =>
                  html`<tr>
                    <td>${d.name}</td>
                    <td>${d.type}</td>
                    <td>${destinationTarget(d)}</td>
                    <td>
                      ${d.type === 's3' ? (uploadsTo.includes(d.name) ? 'every snapshot' : 'snapshots uploaded with --to') : 'publish'}
                    </td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }
    <h2>Latest delivery runs</h2>
    ${deliveryRuns(runs.slice(0, DELIVERY_RUNS))}`;
  return { title: 'Snapshots', current: 'Snapshots', body };
}
