import type { Mirror } from '../mirror/database.js';
import { changeFacts } from '../mirror/store/ui-changes.js';

/*
 * Counts of `change_log` by UTC day, table, kind of change and facet (a licence's jurisdiction, a
 * payment method's category), kept in memory by the server for the charts. A first sync logs
 * every licence and payment method as `added`, so a mirror of a million licences starts with
 * millions of rows: counting them per request would take seconds. `change_log` is append-only
 * and its ids grow with each commit, so the counts are built once when the server starts and
 * then only the rows with a higher id are added, at most `maxRowsPerRefresh` per request.
 */

/** The kinds of `change_log.change`, in chart order. */
export const CHANGE_KINDS = ['added', 'changed', 'removed', 'restored'] as const;

/** What {@link ChangeCounts.perDay} counts. */
export interface ChangeCountFilter {
  table?: 'licenses' | 'payment_methods' | null;
  jurisdiction?: string | null;
  category?: string | null;
  /** First and last UTC day, inclusive. */
  fromDay: string;
  toDay: string;
}

const BATCH = 50_000;

/** See the file comment. Not thread-safe and not shared: one per server. */
export class ChangeCounts {
  /** Count by `day \t table \t change \t facet`. */
  private readonly counts = new Map<string, number>();
  private readonly facets = { licenses: new Set<string>(), payment_methods: new Set<string>() };
  private lastId = 0;
  private pending = false;

  /** The highest `change_log.id` counted so far. */
  get lastCountedId(): number {
    return this.lastId;
  }

  /** Whether the last refresh stopped at its row limit with newer changes left to count. */
  get behind(): boolean {
    return this.pending;
  }

  /** Counts changes newer than the last one counted, at most `maxRows` of them. */
  refresh(mirror: Mirror, maxRows: number = Number.POSITIVE_INFINITY): void {
    let budget = maxRows;
    for (;;) {
      const facts = changeFacts(mirror, this.lastId, Math.min(BATCH, budget));
      for (const f of facts) {
        const key = `${f.day}\t${f.table_name}\t${f.change}\t${f.facet}`;
        this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
        if (f.table_name === 'licenses' || f.table_name === 'payment_methods')
          this.facets[f.table_name].add(f.facet);
        this.lastId = f.id;
      }
      budget -= facts.length;
      if (facts.length < BATCH || budget <= 0) {
        this.pending = facts.length > 0 && budget <= 0;
        return;
      }
    }
  }

  /** Jurisdictions of every licence change counted, sorted (for the filters' choices). */
  jurisdictions(): string[] {
    return [...this.facets.licenses].filter((f) => f !== '').sort();
  }

  /** Payment categories of every payment-method change counted, sorted. */
  categories(): string[] {
    return [...this.facets.payment_methods].filter((f) => f !== '').sort();
  }

  /**
   * Changes per day in the window, one series per table and kind of change (only series with a
   * change in the window). A jurisdiction keeps licence changes of it and a category
   * payment-method changes of it; with both, both kinds are counted, each by its own facet.
   */
  perDay(filter: ChangeCountFilter): { days: string[]; series: Array<{ name: string; values: number[] }> } {
    const days = daysBetween(filter.fromDay, filter.toDay);
    const index = new Map(days.map((d, i) => [d, i]));
    const values = new Map<string, number[]>();
    for (const [key, n] of this.counts) {
      const [day, table, change, facet] = key.split('\t') as [string, string, string, string];
      const i = index.get(day);
      if (i === undefined || !this.keeps(filter, table, facet)) continue;
      const name = `${table === 'licenses' ? 'licence' : 'payment method'} ${change}`;
      let row = values.get(name);
      if (row === undefined) values.set(name, (row = new Array<number>(days.length).fill(0)));
      row[i] = (row[i] ?? 0) + n;
    }
    const order = (name: string): number => {
      const [kind, ...rest] = name.split(' ');
      const change = rest[rest.length - 1] as (typeof CHANGE_KINDS)[number];
      return (kind === 'licence' ? 0 : 10) + CHANGE_KINDS.indexOf(change);
    };
    const names = [...values.keys()].sort((a, b) => order(a) - order(b));
    return { days, series: names.map((name) => ({ name, values: values.get(name) as number[] })) };
  }

  /** Total changes counted with a day in [fromDay, toDay]. */
  total(fromDay: string, toDay: string): number {
    let sum = 0;
    for (const [key, n] of this.counts) {
      const day = key.slice(0, 10);
      if (day >= fromDay && day <= toDay) sum += n;
    }
    return sum;
  }

  private keeps(filter: ChangeCountFilter, table: string, facet: string): boolean {
    const jurisdiction = filter.jurisdiction ?? null;
    const category = filter.category ?? null;
    if (filter.table && table !== filter.table) return false;
    if (jurisdiction === null && category === null) return true;
    if (table === 'licenses') return jurisdiction !== null && facet === jurisdiction;
    return category !== null && facet === category;
  }
}

/** Every UTC day from `fromDay` to `toDay` inclusive (at most 3,660). */
export function daysBetween(fromDay: string, toDay: string): string[] {
  const days: string[] = [];
  const end = Date.parse(`${toDay}T00:00:00.000Z`);
  for (let t = Date.parse(`${fromDay}T00:00:00.000Z`); t <= end && days.length < 3660; t += 86_400_000) {
    days.push(new Date(t).toISOString().slice(0, 10));
  }
  return days;
}
