import { describe, expect, it } from 'vitest';
import { markUnlisted, upsertDomainSummaries } from '../../../src/mirror/store/domains.js';
import { listProfilesDue } from '../../../src/mirror/store/profiles-due.js';
import { upsertProfiles } from '../../../src/mirror/store/profiles.js';
import { profile, summary } from './builders.js';
import { tempMirror } from './helpers.js';

const T1 = '2025-04-01T00:00:00.000Z';
const T2 = '2025-04-02T00:00:00.000Z';

describe('listProfilesDue', () => {
  it('lists the listed domains whose profile is missing or older than the listing, in key order, a page at a time', async () => {
    const mirror = await tempMirror();
    const names = ['e.example', 'a.example', 'd.example', 'c.example', 'b.example', 'f.example'];
    upsertDomainSummaries(
      mirror,
      names.map((n) => summary(n)),
      { listedAt: T1 },
    );
    // c: profile as listed (not due); d: listed again with a later enrichment than its profile
    // (due); f: not listed again, so unlisted (not due).
    upsertProfiles(mirror, [profile('c.example'), profile('d.example')], { syncedAt: T1 });
    upsertDomainSummaries(
      mirror,
      names
        .filter((n) => n !== 'f.example')
        .map((n) =>
          n === 'd.example' ? summary(n, { last_enriched_at: '2025-03-02T10:00:00Z' }) : summary(n),
        ),
      { listedAt: T2 },
    );
    expect(markUnlisted(mirror, {}, { listedAt: T2, runStartedAt: T2 }).marked).toBe(1);

    expect(listProfilesDue(mirror)).toEqual(['a.example', 'b.example', 'd.example', 'e.example']);
    expect(listProfilesDue(mirror, { limit: 2 })).toEqual(['a.example', 'b.example']);
    expect(listProfilesDue(mirror, { limit: 2, after: 'b.example' })).toEqual(['d.example', 'e.example']);
    expect(listProfilesDue(mirror, { limit: 2, after: 'e.example' })).toEqual([]);
    // `after` need not be a due domain itself.
    expect(listProfilesDue(mirror, { after: 'c.example' })).toEqual(['d.example', 'e.example']);
  });
});
