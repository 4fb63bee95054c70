import type Database from 'better-sqlite3';
import { cachedStatement } from '../database.js';
import type { Mirror } from '../database.js';
import { keyColumn, MirrorInputError, objectOrEmpty, textColumn, timestampColumn } from './values.js';

/*
 * History of the keyed child rows of a profile (licences, payment methods): one diff, generic
 * over the table's key columns and compared columns. A child missing from a profile that has its
 * section gets `removed_at`; one that comes back has it cleared; nothing is deleted. Each
 * addition, removal, restoration and change of the kept value gets a `change_log` row, written
 * in the same transaction as the change itself (migration 0003 replaced the triggers that wrote
 * them before, and the rows keep the shape those triggers gave them). The additions of a domain's
 * first profile while the mirror's baseline is open (its first load: store/baseline.ts) are not.
 */

/** A child table whose rows are identified, within their domain, by some key columns. */
export interface KeyedChildTable<Row> {
  /** The table; also its `change_log.table_name`. */
  table: string;
  /** Columns that, with `domain_normalized`, are the table's unique key. */
  keyColumns: readonly (keyof Row & string)[];
  /** Columns stored as given; the row is rewritten when any of them differs. */
  comparedColumns: readonly (keyof Row & string)[];
  /** Those of {@link comparedColumns} that hold timestamps (normalised); the others hold text. */
  timestampColumns: readonly (keyof Row & string)[];
  /** The row's `change_log.item_key`. */
  itemKey: (row: Row) => string;
  /** The row's value in `change_log`; a change is logged only when this value differs. */
  loggedValue: (row: Row) => string | null;
}

/** What one {@link KeyedChildWriter} did. */
export interface ChildHistoryCounts {
  added: number;
  /** Rows rewritten because a compared column differed (logged only when the kept value did). */
  changed: number;
  removed: number;
  restored: number;
}

/** A stored child row: its columns plus the domain and the removal time. */
export type StoredChild<Row> = Row & { domain_normalized: string; removed_at: string | null };

/** The diff of one child table, with its statements, for one transaction's worth of profiles. */
export interface KeyedChildWriter<Row> {
  readonly counts: ChildHistoryCounts;
  /** The stored rows of these domains (removed ones included), by domain and then by key. */
  readStored(domains: readonly string[]): Map<string, Map<string, StoredChild<Row>>>;
  /**
   * Brings one domain's rows in line with `rows` (from {@link childRows}), given what is stored:
   * upserts new, restored and changed rows, marks the missing ones removed at `at`, and logs each.
   * With `logAdditions` false (a domain's first profile while the mirror's baseline is open:
   * store/baseline.ts), a new row is written and counted without its `added` row. Returns how many
   * of the table's rows it wrote (0: the domain's rows are as given already).
   */
  apply(
    domain: string,
    rows: ReadonlyMap<string, Row>,
    stored: ReadonlyMap<string, StoredChild<Row>> | undefined,
    logAdditions?: boolean,
  ): number;
}

type ChildColumns = { [column: string]: string | null };

// Unit separator: cannot occur in a key value such as a jurisdiction code, so "a"+"bc" and
// "ab"+"c" stay distinct.
const KEY_SEPARATOR = '\u001f';

/** The key of a child row within its domain: its key columns, joined. */
function childKey<Row>(table: KeyedChildTable<Row>, row: Row): string {
  const columns = row as ChildColumns;
  const keys = table.keyColumns;
  let key = String(columns[keys[0]!]);
  for (let i = 1; i < keys.length; i++) key += KEY_SEPARATOR + String(columns[keys[i]!]);
  return key;
}

/**
 * Converts a profile's section (`licenses`, `payment_methods`) to the rows the table stores, by
 * {@link childKey} (the last of a repeated key wins), or null when the section is absent (not
 * requested: stored rows are left alone). Key columns must be non-empty strings; timestamps are
 * normalised. A bad value throws `ERR_MIRROR_INPUT` naming `where`, the index and the field.
 */
export function childRows<Row>(
  table: KeyedChildTable<Row>,
  items: readonly object[] | null | undefined,
  where: string,
): Map<string, Row> | null {
  if (items === undefined || items === null) return null;
  if (!Array.isArray(items)) throw new MirrorInputError(where, 'expected an array');
  const rows = new Map<string, Row>();
  // A loop, not forEach: a callback made anew per call was compiled anew between batches (see
  // KeyedChildDiff).
  for (let i = 0; i < items.length; i++) {
    const at = `${where}[${i}]`;
    const values = objectOrEmpty(items[i], at);
    const row: ChildColumns = {};
    for (const c of table.keyColumns) row[c] = keyColumn(values[c], `${at}.${c}`);
    for (const c of table.comparedColumns) {
      row[c] = table.timestampColumns.includes(c)
        ? timestampColumn(values[c], `${at}.${c}`)
        : textColumn(values[c], `${at}.${c}`);
    }
    rows.set(childKey(table, row as Row), row as Row);
  }
  return rows;
}

/** Whether `a` and `b` hold the same values in `columns`. */
function sameColumns<Row>(columns: readonly (keyof Row & string)[], a: Row, b: Row): boolean {
  for (const c of columns) if (a[c] !== b[c]) return false;
  return true;
}

const INSERT_CHANGE = `
  INSERT INTO change_log (at, table_name, domain_normalized, item_key, change, old_value, new_value, change_seq)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?)`;

/** The SQL of one child table, made from its columns (every table has the same bookkeeping columns). */
function childSql(table: KeyedChildTable<unknown>): { select: string; upsert: string; remove: string } {
  const { keyColumns: keys, comparedColumns: compared } = table;
  const columns = [...keys, ...compared];
  return {
    select: `
  SELECT domain_normalized, ${columns.join(', ')}, removed_at
  FROM ${table.table} WHERE domain_normalized IN (SELECT value FROM json_each(?))`,
    upsert: `
  INSERT INTO ${table.table} (domain_normalized, ${columns.join(', ')}, removed_at, mirror_first_seen_at, mirror_updated_at, change_seq)
  VALUES (?, ${columns.map(() => '?').join(', ')}, NULL, ?, ?, ?)
  ON CONFLICT (domain_normalized, ${keys.join(', ')}) DO UPDATE SET
    ${compared.map((c) => `${c} = excluded.${c},`).join('\n    ')}
    removed_at = NULL,
    mirror_updated_at = excluded.mirror_updated_at,
    change_seq = excluded.change_seq
  WHERE ${compared.map((c) => `${c} IS NOT excluded.${c}`).join('\n     OR ')}
     OR removed_at IS NOT NULL`,
    remove: `
  UPDATE ${table.table} SET removed_at = ?, mirror_updated_at = ?, change_seq = ?
  WHERE domain_normalized = ? AND ${keys.map((c) => `${c} = ?`).join(' AND ')} AND removed_at IS NULL`,
  };
}

const sqlByTable = new WeakMap<KeyedChildTable<unknown>, ReturnType<typeof childSql>>();

/**
 * The diff of `table` on `mirror`, writing at `at` (our bookkeeping time) and stamping every row
 * it writes, `change_log` rows included, with `changeSeq` (`nextChangeSeq` of the transaction).
 * Statements are prepared once per mirror; call this once per transaction and
 * {@link KeyedChildWriter.apply} once per profile that has the section.
 */
export function keyedChildWriter<Row>(
  mirror: Mirror,
  table: KeyedChildTable<Row>,
  at: string,
  changeSeq: number,
): KeyedChildWriter<Row> {
  return new KeyedChildDiff(mirror, table, at, changeSeq);
}

/**
 * {@link KeyedChildWriter} as a class, not an object of closures: a writer is made for every
 * transaction (every 64 profiles on the sync's writer thread), and V8 may drop a function's
 * optimised code once no function object of it is alive: closures made anew each time were
 * compiled again and again (under --trace-opt a full sync of 50,000 domains compiled `apply` 7
 * times and the callback of childRows 11 times). Methods on the prototype live as long as the
 * module, and are compiled once.
 */
class KeyedChildDiff<Row> implements KeyedChildWriter<Row> {
  readonly counts: ChildHistoryCounts = { added: 0, changed: 0, removed: 0, restored: 0 };
  private readonly select: Database.Statement;
  private readonly upsert: Database.Statement;
  private readonly remove: Database.Statement;
  private readonly logChange: Database.Statement;
  private readonly columns: readonly string[];
  private readonly table: KeyedChildTable<Row>;
  private readonly at: string;
  private readonly changeSeq: number;

  constructor(mirror: Mirror, table: KeyedChildTable<Row>, at: string, changeSeq: number) {
    this.table = table;
    this.at = at;
    this.changeSeq = changeSeq;
    const generic = table as KeyedChildTable<unknown>;
    let sql = sqlByTable.get(generic);
    if (sql === undefined) sqlByTable.set(generic, (sql = childSql(generic)));
    this.select = cachedStatement(mirror, sql.select);
    this.upsert = cachedStatement(mirror, sql.upsert);
    this.remove = cachedStatement(mirror, sql.remove);
    this.logChange = cachedStatement(mirror, INSERT_CHANGE);
    this.columns = [...table.keyColumns, ...table.comparedColumns];
  }

  readStored(domains: readonly string[]): Map<string, Map<string, StoredChild<Row>>> {
    const out = new Map<string, Map<string, StoredChild<Row>>>();
    if (domains.length === 0) return out;
    for (const row of this.select.all(JSON.stringify(domains)) as StoredChild<Row>[]) {
      let inner = out.get(row.domain_normalized);
      if (inner === undefined) out.set(row.domain_normalized, (inner = new Map()));
      inner.set(childKey(this.table, row), row);
    }
    return out;
  }

  apply(
    domain: string,
    rows: ReadonlyMap<string, Row>,
    stored: ReadonlyMap<string, StoredChild<Row>> | undefined,
    logAdditions = true,
  ): number {
    const { table, counts, at, changeSeq } = this;
    let written = 0;
    for (const [key, row] of rows) {
      const old = stored?.get(key);
      if (old === undefined) {
        counts.added++;
        if (logAdditions) this.log(domain, row, 'added', null, table.loggedValue(row));
      } else if (old.removed_at !== null) {
        counts.restored++;
        this.log(domain, row, 'restored', table.loggedValue(old), table.loggedValue(row));
      } else if (sameColumns(table.comparedColumns, old, row)) {
        continue;
      } else {
        counts.changed++;
        // Logged when the kept value changed, not for a date or a URL alone.
        const before = table.loggedValue(old);
        const after = table.loggedValue(row);
        if (before !== after) this.log(domain, row, 'changed', before, after);
      }
      const params: unknown[] = [domain];
      for (const c of this.columns) params.push((row as ChildColumns)[c]);
      params.push(at, at, changeSeq);
      this.upsert.run(params);
      written++;
    }
    if (stored === undefined) return written;
    for (const [key, old] of stored) {
      if (old.removed_at === null && !rows.has(key)) {
        counts.removed++;
        const params: unknown[] = [at, at, changeSeq, domain];
        for (const c of table.keyColumns) params.push((old as ChildColumns)[c]);
        this.remove.run(params);
        written++;
        const value = table.loggedValue(old);
        this.log(domain, old, 'removed', value, value);
      }
    }
    return written;
  }

  private log(domain: string, row: Row, change: string, before: string | null, after: string | null): void {
    this.logChange.run(
      this.at,
      this.table.table,
      domain,
      this.table.itemKey(row),
      change,
      before,
      after,
      this.changeSeq,
    );
  }
}
