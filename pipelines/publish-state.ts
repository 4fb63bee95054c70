/*
 * What the mirror keeps of each destination's last publish: written by the publish pipeline
 * (./publish.ts), read by `status`. Apart from that pipeline so that reading it does not load the
 * PostgreSQL client (pg and kysely), which `status` does not need.
 */

/** The `sync_state` pipeline name under which each destination's last publish is kept in the mirror. */
export const PUBLISH_STATE = 'publish';

/** What the mirror remembers of a destination's last publish (`status` shows it). */
export interface PublishRecord {
  mirrorId: string;
  server: string;
  database: string;
  schema: string;
  /** Per table: the change counter it is current up to, and the rows the last publish of it sent. */
  tables: Record<string, { changeSeq: number; rows: number; publishedAt: string }>;
}
