import { PUBLISH_STATE, type PublishRecord } from '../../../pipelines/publish-state.js';
import type { Config } from '../../config/config.js';
import type { Mirror } from '../../mirror/database.js';
import { changeState, PUBLISH_TABLES, rowsChangedSince } from '../../mirror/store/publish.js';
import { getSyncState } from '../../mirror/store/sync-state.js';
import { formatDuration } from '../../util/duration.js';

/** The `destinations` part of `status`: each PostgreSQL destination's last publish, from the mirror. */
export interface DestinationStatus {
  type: 'postgres';
  /** `host:port`, database and schema of the last publish (null before the first). */
  server: string | null;
  database: string | null;
  schema: string | null;
  /** When the last publish committed, or null when this mirror never published there. */
  lastPublishAt: string | null;
  /** Per table: rows the last publish of it sent, and when. */
  tables: Record<string, { rows: number; publishedAt: string }>;
  /** Rows of the published tables changed in the mirror since (a table never published counts whole). */
  rowsBehind: number;
}

/**
 * What `status` shows of each postgres destination, read from the mirror only (no connection):
 * the record each successful publish leaves in `sync_state` and the rows changed since.
 */
export function destinationsStatus(mirror: Mirror, config: Config): Record<string, DestinationStatus> {
  const out: Record<string, DestinationStatus> = {};
  const { mirrorId } = changeState(mirror);
  for (const destination of Object.values(config.destinations)) {
    if (destination.type !== 'postgres') continue;
    const state = getSyncState(mirror, PUBLISH_STATE, destination.name);
    const record = state?.cursor as PublishRecord | null | undefined;
    const mine = record !== null && record !== undefined && record.mirrorId === mirrorId ? record : null;
    const tables = Object.fromEntries(
      Object.entries(mine?.tables ?? {}).map(([t, v]) => [t, { rows: v.rows, publishedAt: v.publishedAt }]),
    );
    const times = Object.values(tables).map((t) => t.publishedAt);
    const afterSeq = Object.fromEntries(Object.entries(mine?.tables ?? {}).map(([t, v]) => [t, v.changeSeq]));
    out[destination.name] = {
      type: 'postgres',
      server: mine?.server ?? null,
      database: mine?.database ?? null,
      schema: mine?.schema ?? destination.schema,
      lastPublishAt: times.length ? times.reduce((a, b) => (a > b ? a : b)) : null,
      tables,
      rowsBehind: rowsChangedSince(mirror, afterSeq, PUBLISH_TABLES),
    };
  }
  return out;
}

/** Text lines of {@link destinationsStatus}. */
export function destinationLines(destinations: Record<string, DestinationStatus>, now: string): string[] {
  const entries = Object.entries(destinations);
  if (entries.length === 0) return [];
  const lines = ['destinations'];
  for (const [name, d] of entries) {
    if (d.lastPublishAt === null) {
      lines.push(
        `  ${name} (postgres, schema ${d.schema})  never published from this mirror; ${d.rowsBehind} rows to send`,
      );
      continue;
    }
    const ago = formatDuration(Math.max(0, Date.parse(now) - Date.parse(d.lastPublishAt)));
    lines.push(
      `  ${name} (postgres ${d.server}, database ${d.database}, schema ${d.schema})  last publish ${d.lastPublishAt} (${ago} ago); ` +
        `${d.rowsBehind} rows changed in the mirror since`,
    );
    lines.push(
      `    rows sent by the last publish: ${Object.entries(d.tables)
        .map(([t, v]) => `${t} ${v.rows}`)
        .join(', ')}`,
    );
  }
  return lines;
}
