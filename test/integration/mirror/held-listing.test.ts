import { describe, expect, it } from 'vitest';
import { inTransaction, mirrorInternals } from '../../../src/mirror/database.js';
import type { Mirror } from '../../../src/mirror/database.js';
import type { DomainProfileInput, DomainSummaryInput } from '../../../src/mirror/inputs.js';
import { openBaselineIfFirstLoad } from '../../../src/mirror/store/baseline.js';
import { upsertDomainSummaries } from '../../../src/mirror/store/domains.js';
import { HeldListing } from '../../../src/mirror/store/held-listing.js';
import { upsertProfiles } from '../../../src/mirror/store/profiles.js';
import { licence, profile, summary } from './builders.js';
import { tempMirror } from './helpers.js';

const T0 = '2025-03-31T00:00:00.000Z';
const T1 = '2025-04-01T00:00:00.000Z';
const T2 = '2025-04-01T00:00:05.000Z';
const T3 = '2025-04-01T00:00:09.000Z';

/** Every row of the tables the writes touch, every column (change_seq included), and the counter. */
async function contents(mirror: Mirror): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of ['domains', 'licenses', 'payment_methods', 'domain_sections', 'change_log'] as const) {
    const rows = await mirror.db.selectFrom(table).selectAll().execute();
    out[table] = rows
      .map((r) => {
        const { id: _id, ...rest } = r as Record<string, unknown>;
        return rest;
      })
      .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  }
  out.counter = [mirrorInternals(mirror).sqlite.prepare('SELECT value FROM mirror_change_seq').get()];
  return out;
}

type Step =
  | { listing: DomainSummaryInput[]; at: string }
  | { profiles: DomainProfileInput[]; at: string; refused?: boolean };

/**
 * The same writes two ways, each in one transaction as the writer thread keeps one open: listing
 * rows written as they come (upsertDomainSummaries), or held (HeldListing) and flushed before the
 * commit. Returns both mirrors' contents and how many rows the held path still had to flush.
 */
async function bothWays(
  steps: readonly Step[],
  setUp?: (mirror: Mirror) => void,
): Promise<{ written: Record<string, unknown[]>; held: Record<string, unknown[]>; flushed: number }> {
  const plain = await tempMirror();
  const holding = await tempMirror();
  const held = new HeldListing();
  let flushed = -1;
  for (const [mirror, hold] of [
    [plain, false],
    [holding, true],
  ] as const) {
    setUp?.(mirror);
    inTransaction(mirror, () => {
      for (const step of steps) {
        if ('listing' in step) {
          upsertDomainSummaries(mirror, step.listing, {
            listedAt: step.at,
            ...(hold ? { heldListing: held } : {}),
          });
          continue;
        }
        const write = (): unknown =>
          upsertProfiles(mirror, step.profiles, {
            syncedAt: step.at,
            ...(hold ? { heldListing: held } : {}),
          });
        if (step.refused) expect(write).toThrow(/last_enriched_at/);
        else write();
      }
      if (hold) flushed = held.flush(mirror);
    });
  }
  expect(held.size).toBe(0);
  return { written: await contents(plain), held: await contents(holding), flushed };
}

describe("upsertDomainSummaries with a HeldListing (new domains' listing rows held until their profile is written)", () => {
  it('leaves the same rows as writing each listing row and rewriting it with its profile', async () => {
    const { written, held, flushed } = await bothWays([
      {
        listing: [
          summary('a.example'),
          summary('b.example'),
          summary('c.example', { company_name: 'C Ltd' }),
        ],
        at: T1,
      },
      { profiles: [profile('b.example'), profile('a.example')], at: T2 },
      { listing: [summary('d.example'), summary('e.example', { last_enriched_at: null })], at: T2 },
      { profiles: [profile('e.example', { licenses: [licence({ license_number: 'L-e' })] })], at: T3 },
    ]);
    // c.example and d.example had no profile: their rows were written by the flush.
    expect(flushed).toBe(2);
    expect(held).toEqual(written);
    expect(held.domains).toHaveLength(5);
    const a = held.domains!.find(
      (d) => (d as { domain_normalized: string }).domain_normalized === 'a.example',
    );
    expect(a).toMatchObject({
      first_synced_at: T1,
      last_listed_at: T1,
      last_synced_at: T2,
      profile_synced_at: T2,
    });
  });

  it('as a first sync writes them: the baseline open, no change_log rows for the first profiles', async () => {
    const { written, held } = await bothWays(
      [
        { listing: [summary('a.example'), summary('b.example')], at: T1 },
        { profiles: [profile('a.example'), profile('b.example')], at: T2 },
      ],
      (mirror) => expect(openBaselineIfFirstLoad(mirror, T0, 0)).toBe(true),
    );
    expect(held).toEqual(written);
    expect(held.change_log).toEqual([]);
  });

  it('writes a domain already in the mirror at once, and holds only the new ones', async () => {
    const { written, held, flushed } = await bothWays(
      [
        {
          listing: [summary('old.example', { company_name: 'Renamed Ltd' }), summary('new.example')],
          at: T1,
        },
        { profiles: [profile('old.example', { status: 'reviewing' }), profile('new.example')], at: T2 },
      ],
      (mirror) => {
        upsertDomainSummaries(mirror, [summary('old.example')], { listedAt: T0 });
        upsertProfiles(mirror, [profile('old.example')], { syncedAt: T0 });
      },
    );
    expect(flushed).toBe(0);
    expect(held).toEqual(written);
  });

  it('a domain listed again while held (offset drift): the first listing row is written, the second updates it', async () => {
    for (const profileAfter of [false, true]) {
      const { written, held } = await bothWays([
        { listing: [summary('drift.example')], at: T1 },
        { listing: [summary('drift.example', { company_name: 'Moved Ltd' }), summary('x.example')], at: T2 },
        ...(profileAfter ? [{ profiles: [profile('drift.example')], at: T3 }] : []),
      ]);
      expect(held).toEqual(written);
      expect(
        held.domains!.find((d) => (d as { domain_normalized: string }).domain_normalized === 'drift.example'),
      ).toMatchObject({
        company_name: 'Moved Ltd',
        first_synced_at: T1,
        last_listed_at: T2,
      });
    }
  });

  it('a refused profile takes nothing: its listing row is still written by the flush', async () => {
    const { written, held, flushed } = await bothWays([
      { listing: [summary('bad.example'), summary('good.example')], at: T1 },
      {
        profiles: [profile('good.example'), profile('bad.example', { last_enriched_at: 'not a time' })],
        at: T2,
        refused: true,
      },
      { profiles: [profile('good.example')], at: T2 },
    ]);
    expect(flushed).toBe(1);
    expect(held).toEqual(written);
    expect(
      held.domains!.map((d) => (d as { profile_synced_at: string | null }).profile_synced_at).sort(),
    ).toEqual([T2, null]);
  });

  it('holds nothing of a listing with a bad value, as upsertDomainSummaries writes nothing of it', async () => {
    const mirror = await tempMirror();
    const held = new HeldListing();
    expect(() =>
      upsertDomainSummaries(
        mirror,
        [summary('fine.example'), summary('bad.example', { last_enriched_at: 'soon' })],
        { listedAt: T1, heldListing: held },
      ),
    ).toThrow(/bad\.example.*last_enriched_at/);
    expect(held.size).toBe(0);
    expect(
      upsertDomainSummaries(mirror, [summary('fine.example')], { listedAt: T1, heldListing: held }),
    ).toEqual({
      inserted: 1,
      updated: 0,
      unchanged: 0,
    });
    expect(held.size).toBe(1);
    held.clear();
    expect(held.flush(mirror)).toBe(0);
    expect(await mirror.db.selectFrom('domains').selectAll().execute()).toEqual([]);
  });
});
