import type { Config } from '../config/config.js';
import type { Mirror } from '../mirror/database.js';
import type { ChangeCounts } from './change-counts.js';

/** The parts of the config the dashboard shows. A `Config` holds no secret (docs/contract.md). */
export type UiConfig = Pick<Config, 'snapshots' | 'destinations' | 'credits' | 'enrich' | 'pipelines'>;

/** What every page handler gets. */
export interface UiContext {
  /** The mirror, opened read-only. */
  readonly mirror: Mirror;
  readonly config: UiConfig;
  /** The current time in ms (injectable for tests). */
  readonly now: () => number;
  /** Change counts for the charts, refreshed by the server before a page that shows them. */
  readonly changes: ChangeCounts;
}

/** Rows per page of every paginated table. */
export const PAGE_SIZE = 50;

/** The URL path of a domain's page. */
export function domainHref(domain: string): string {
  return `/domains/${encodeURIComponent(domain)}`;
}
