import { inTransaction } from '../database.js';
import type { Mirror } from '../database.js';
import { readSummaryState, summaryChangeSeq, writeSummaryRows } from './domains.js';
import type { SummaryRow, UpsertSummariesResult } from './domains.js';
import { compareByDomain } from './values.js';

/*
 * Listing rows of new domains held back by a writer that keeps one transaction open across many
 * writes (the mirror writer thread, src/mirror/profile-writer-worker.ts), so that a domain's first
 * profile writes its row once, listing columns included.
 *
 * A sync lists a page of domains, then fetches their profiles. Written as they come, each new
 * domain's row is inserted by the listing (a small row) and rewritten by its profile (the row
 * grows to about 2.6 KB with the raw profile, and every domain index whose columns the profile
 * sets is updated). Held here instead (the sync's store functions alone: medians 175 against 189
 * µs per profile, docs/benchmarks.md "sync", what helped), the listing row
 * of a domain not in the mirror waits in memory; its profile, written in the same transaction,
 * inserts the row with the listing columns; what is still held when the transaction is about to
 * commit is written then, as upsertDomainSummaries would have written it.
 *
 * Nothing of this changes what a crash or a reader sees: the rows held and the rows written are in
 * the same uncommitted transaction, and after the commit the mirror holds the same rows, column for
 * column and change sequence value for value, as the two writes give
 * (test/integration/mirror/held-listing.test.ts compares them).
 */

/** A held listing row, as the domain's first profile write takes it. */
export interface HeldListingRow {
  companyName: string | null;
  listingLastEnrichedAt: string | null;
  /** When the listing was read: the row's `last_listed_at` and `first_synced_at`. */
  listedAt: string;
  /** The change sequence value the listing's write took, as upsertDomainSummaries would have. */
  changeSeq: number;
}

/** The listing rows held for one writer; see the file comment. */
export class HeldListing {
  readonly #rows = new Map<string, HeldListingRow>();

  /** Rows held. */
  get size(): number {
    return this.#rows.size;
  }

  /**
   * Writes checked listing rows (upsertDomainSummaries with this holder as its `heldListing`,
   * which holds the transaction), except that the rows of domains not in the mirror are
   * held instead (counted as inserted).
   */
  hold(mirror: Mirror, rows: readonly SummaryRow[], listedAt: string): UpsertSummariesResult {
    // A domain listed again while its first listing row is held (offset drift can list one
    // twice): that row is written first, so the new one updates it as it would have.
    const again = rows.filter((row) => this.#rows.has(row.domain_normalized));
    if (again.length > 0)
      this.#write(
        mirror,
        again.map((row) => row.domain_normalized),
      );
    const existing = readSummaryState(mirror, rows);
    // One change sequence value for the whole page, taken when upsertDomainSummaries would
    // take it: the counter, and every row's value once written, are the same as without holding.
    const changeSeq = summaryChangeSeq(mirror, rows, listedAt, existing);
    const stored = rows.filter((row) => existing.has(row.domain_normalized));
    const result = writeSummaryRows(mirror, stored, listedAt, existing, changeSeq);
    for (const row of rows) {
      if (existing.has(row.domain_normalized)) continue;
      this.#rows.set(row.domain_normalized, {
        companyName: row.company_name,
        listingLastEnrichedAt: row.listing_last_enriched_at,
        listedAt,
        changeSeq,
      });
      result.inserted++;
    }
    return result;
  }

  /** The held row of `key`, which is no longer held: its profile write writes it. */
  take(key: string): HeldListingRow | undefined {
    const row = this.#rows.get(key);
    if (row !== undefined) this.#rows.delete(key);
    return row;
  }

  /** Writes every held row, inside the caller's transaction, before it commits. Returns how many. */
  flush(mirror: Mirror): number {
    return this.#rows.size === 0 ? 0 : this.#write(mirror, [...this.#rows.keys()]);
  }

  /** Forgets every held row: the transaction they were applied in was rolled back. */
  clear(): void {
    this.#rows.clear();
  }

  /** Writes the held rows of `keys` (all held, none in the mirror) and stops holding them. */
  #write(mirror: Mirror, keys: readonly string[]): number {
    // Grouped by the listing they came in (its time and change sequence value).
    const groups = new Map<number, { listedAt: string; rows: SummaryRow[] }>();
    for (const key of keys) {
      const held = this.#rows.get(key)!;
      this.#rows.delete(key);
      let group = groups.get(held.changeSeq);
      if (group === undefined) groups.set(held.changeSeq, (group = { listedAt: held.listedAt, rows: [] }));
      group.rows.push({
        domain_normalized: key,
        company_name: held.companyName,
        listing_last_enriched_at: held.listingLastEnrichedAt,
      });
    }
    inTransaction(mirror, () => {
      // In the order the listings came; each group in key order, as the store writes.
      for (const changeSeq of [...groups.keys()].sort((a, b) => a - b)) {
        const { listedAt, rows } = groups.get(changeSeq)!;
        rows.sort(compareByDomain);
        writeSummaryRows(mirror, rows, listedAt, new Map(), changeSeq);
      }
    });
    return keys.length;
  }
}
