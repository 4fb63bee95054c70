import { cachedStatement, indexedBy } from '../database.js';
import type { Mirror } from '../database.js';

/*
 * Reads of the dashboard's Changes page (docs/ui.md) over `change_log`, which holds one row per
 * licence or payment-method change. A licence row's `item_key` is `jurisdiction:number`; a
 * payment-method row's values are `category/confidence`. Each filter reads an index ordered by
 * time (migration 0004_dashboard_read_indexes), with the same expressions as here.
 */

/** SQL of the jurisdiction of a licence change (the expression of its index). */
const JURISDICTION_EXPR = `substr(item_key, 1, instr(item_key, ':') - 1)`;
/** SQL of the payment category of a payment-method change (the expression of its index). */
const CATEGORY_EXPR = `substr(coalesce(new_value, old_value), 1, instr(coalesce(new_value, old_value), '/') - 1)`;

/** The tables whose changes `change_log` records. */
export type ChangeKind = 'licenses' | 'payment_methods';

/** One `change_log` row. */
export interface ChangeRow {
  id: number;
  at: string;
  table_name: string;
  domain_normalized: string;
  item_key: string;
  change: string;
  old_value: string | null;
  new_value: string | null;
}

/** Where a page of changes starts: after the row with this time and id (newest first). */
export interface ChangeCursor {
  at: string;
  id: number;
}

/** Filters of {@link listChanges}; all combined with AND except the two facets (see there). */
export interface ListChangesOptions {
  kind?: ChangeKind | null;
  /** Licence changes in this jurisdiction. */
  jurisdiction?: string | null;
  /** Payment-method changes in this category. */
  category?: string | null;
  /** Changes at or after this time (ISO 8601). */
  fromAt?: string | null;
  /** Changes before this time (ISO 8601). */
  toAt?: string | null;
  before?: ChangeCursor | null;
  limit: number;
}

const COLUMNS = 'id, at, table_name, domain_normalized, item_key, change, old_value, new_value';
const WINDOW = 'at >= @from AND at < @to AND at <= @bAt AND (at < @bAt OR id < @bId)';

/**
 * Changes newest first (time, then id), `limit` + 1 rows when there is a next page. A
 * jurisdiction selects licence changes and a category payment-method changes; given both, the
 * page holds both kinds, each filtered by its own facet.
 */
export function listChanges(mirror: Mirror, options: ListChangesOptions): ChangeRow[] {
  const params = {
    from: options.fromAt ?? '',
    to: options.toAt ?? '~',
    bAt: options.before?.at ?? '~',
    bId: options.before?.id ?? Number.MAX_SAFE_INTEGER,
    limit: options.limit + 1,
  };
  const jurisdiction = options.jurisdiction ?? null;
  const category = options.category ?? null;
  if (jurisdiction === null && category === null) {
    return cachedStatement(
      mirror,
      `SELECT ${COLUMNS} FROM change_log ${indexedBy(mirror, 'change_log_at')}
       WHERE ${WINDOW} AND (@kind IS NULL OR table_name = @kind)
       ORDER BY at DESC, id DESC LIMIT @limit`,
    ).all({ ...params, kind: options.kind ?? null }) as ChangeRow[];
  }
  const rows: ChangeRow[] = [];
  if (jurisdiction !== null) {
    rows.push(
      ...(cachedStatement(
        mirror,
        `SELECT ${COLUMNS} FROM change_log ${indexedBy(mirror, 'change_log_licence_jurisdiction')}
         WHERE table_name = 'licenses' AND ${JURISDICTION_EXPR} = @facet AND ${WINDOW}
         ORDER BY at DESC, id DESC LIMIT @limit`,
      ).all({ ...params, facet: jurisdiction }) as ChangeRow[]),
    );
  }
  if (category !== null) {
    rows.push(
      ...(cachedStatement(
        mirror,
        `SELECT ${COLUMNS} FROM change_log ${indexedBy(mirror, 'change_log_payment_category')}
         WHERE table_name = 'payment_methods' AND ${CATEGORY_EXPR} = @facet AND ${WINDOW}
         ORDER BY at DESC, id DESC LIMIT @limit`,
      ).all({ ...params, facet: category }) as ChangeRow[]),
    );
  }
  rows.sort((a, b) => (a.at === b.at ? b.id - a.id : a.at < b.at ? 1 : -1));
  return rows.slice(0, params.limit);
}

/** What the dashboard counts of one change (see {@link changeFacts}). */
export interface ChangeFact {
  id: number;
  /** UTC day `YYYY-MM-DD`. */
  day: string;
  table_name: string;
  change: string;
  /** Jurisdiction of a licence change, category of a payment-method change ('' when none). */
  facet: string;
}

/**
 * Up to `limit` changes with an id above `afterId`, in id order, reduced to what the charts
 * count. `change_log` is append-only and its ids grow with every commit, so a reader that
 * remembers the last id it saw can count new changes without counting the old ones again.
 */
export function changeFacts(mirror: Mirror, afterId: number, limit: number): ChangeFact[] {
  return cachedStatement(
    mirror,
    `SELECT id, substr(at, 1, 10) AS day, table_name, change,
            coalesce(CASE table_name WHEN 'licenses' THEN ${JURISDICTION_EXPR} ELSE ${CATEGORY_EXPR} END, '') AS facet
     FROM change_log WHERE id > ? ORDER BY id LIMIT ?`,
  ).all(afterId, limit) as ChangeFact[];
}

/** The newest `limit` changes of one domain, oldest first. */
export function changesOfDomain(mirror: Mirror, domain: string, limit: number): ChangeRow[] {
  return cachedStatement(
    mirror,
    `SELECT * FROM (SELECT ${COLUMNS} FROM change_log
       WHERE table_name IN ('licenses', 'payment_methods') AND domain_normalized = ?
       ORDER BY at DESC, id DESC LIMIT ?) ORDER BY at, id`,
  ).all(domain, limit) as ChangeRow[];
}
