import { describe, expect, it } from 'vitest';
import { syncPipeline } from '../../../pipelines/sync.js';
import type { ProfileWriter } from '../../../src/mirror/profile-writer.js';
import type { RunningSimulator } from '../../../src/simulator/index.js';
import { diffMirrorWithTruth, profileRequests } from '../../helpers/mirror-truth.js';
import { queryMirror } from '../../helpers/mirror.js';
import { startTestSimulator, whileKeyRefusedFromListPage } from '../../helpers/start-simulator.js';
import { openTestContext } from '../../helpers/test-context.js';

/**
 * Where the sync's mirror writes run (RunContext.openProfileWriter): the main tests run with the
 * worker thread the product uses and with the calling thread, which must give the same mirror.
 * Of the fault tests, those about the client's retries run with the product's thread writer only
 * (the writer sees the same profiles either way); the ones where a run stops or re-lists midway,
 * which is where the two writers' flushing could differ, run with both.
 */
const WRITERS = ['thread', 'inline'] as const;

describe.each(WRITERS)('sync against the simulator (%s writer)', (profileWriter) => {
  it('mirrors a 5,000-domain catalogue row for row, then fetches nothing when nothing changed', async () => {
    const sim = await startTestSimulator({ domains: 5000, seed: 7 });
    const ctx = await openTestContext(sim, { profileWriter });
    const first = await syncPipeline(ctx);
    expect(first.status).toBe('done');
    expect(first.failures).toEqual([]);
    expect(first.stats.mode).toBe('full');
    expect(first.stats.listed).toBe(5000);
    expect(first.stats.profilesFetched).toBe(5000);
    expect(diffMirrorWithTruth(ctx.mirror.path, sim)).toEqual([]);
    const { n } = queryMirror<{ n: number }>(ctx.mirror.path, 'SELECT count(*) AS n FROM domains')[0]!;
    expect(n).toBe(5000);

    sim.control.resetLogs();
    const second = await syncPipeline(ctx);
    expect(second.status).toBe('done');
    expect(second.stats.mode).toBe('incremental');
    expect(second.stats.profilesFetched).toBe(0);
    expect(profileRequests(sim)).toEqual([]);
    // The watermark keeps the listing short: only the overlap window is listed again.
    expect(second.stats.listed).toBeLessThan(5000);
  });

  it('after mutations, an incremental run fetches only the changed profiles and equals the truth again', async () => {
    const sim = await startTestSimulator({ domains: 1200, seed: 3 });
    const ctx = await openTestContext(sim, { profileWriter });
    expect((await syncPipeline(ctx)).status).toBe('done');
    // Move the simulator clock past the watermark's overlap, as a day between nightly runs would.
    sim.control.advanceClock(24 * 3_600_000);

    const all = sim.control.truth.listDomains();
    const withLicence = all.find((d) => (sim.control.truth.profile(d)?.licenses.length ?? 0) > 0)!;
    const withPayment = all.find(
      (d) => d !== withLicence && (sim.control.truth.profile(d)?.payment_methods.length ?? 0) > 1,
    )!;
    const toReenrich = all.find((d) => d !== withLicence && d !== withPayment)!;
    const licence = sim.control.truth.profile(withLicence)!.licenses[0]!;
    const removedMethod = sim.control.truth.profile(withPayment)!.payment_methods[0]!.normalized_name;
    sim.control.mutate.setLicenceStatus(withLicence, licence.license_number, 'suspended');
    sim.control.mutate.removePaymentMethod(withPayment, removedMethod);
    const added = sim.control.mutate.addDomain();
    sim.control.mutate.reenrich(toReenrich);

    sim.control.resetLogs();
    const run = await syncPipeline(ctx);
    expect(run.status).toBe('done');
    expect(run.failures).toEqual([]);
    expect(new Set(profileRequests(sim))).toEqual(new Set([withLicence, withPayment, added, toReenrich]));
    expect(profileRequests(sim)).toHaveLength(4);
    expect(diffMirrorWithTruth(ctx.mirror.path, sim)).toEqual([]);
    const removed = queryMirror<{ removed_at: string | null }>(
      ctx.mirror.path,
      'SELECT removed_at FROM payment_methods WHERE domain_normalized = ? AND normalized_name = ?',
      withPayment,
      removedMethod,
    );
    expect(removed).toHaveLength(1);
    expect(removed[0]!.removed_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const [lic] = queryMirror<{ status: string }>(
      ctx.mirror.path,
      'SELECT status FROM licenses WHERE domain_normalized = ? AND license_number = ?',
      withLicence,
      licence.license_number,
    );
    expect(lic!.status).toBe('suspended');
  });

  it('notices a domain that disappeared and one added with an old timestamp through the count check', async () => {
    const sim = await startTestSimulator({ domains: 800, seed: 11 });
    const ctx = await openTestContext(sim, { profileWriter });
    await syncPipeline(ctx);
    sim.control.advanceClock(24 * 3_600_000);
    const gone = sim.control.truth.listDomains()[10]!;
    sim.control.mutate.removeDomain(gone);
    const run = await syncPipeline(ctx);
    expect(run.stats.fullListingReason).toBe('count_mismatch');
    expect(run.stats.unlisted).toBe(1);
    const [row] = queryMirror<{ unlisted_at: string | null }>(
      ctx.mirror.path,
      'SELECT unlisted_at FROM domains WHERE domain_normalized = ?',
      gone,
    );
    expect(row!.unlisted_at).not.toBeNull();
    expect(diffMirrorWithTruth(ctx.mirror.path, sim)).toEqual([]);
  });

  it('--no-profiles stores the listing only; the next run fetches the due profiles, each once', async () => {
    // 1,250 domains: the due profiles are read from the mirror 500 at a time (three pages).
    const sim = await startTestSimulator({ domains: 1250, seed: 5 });
    const ctx = await openTestContext(sim, { profileWriter });
    const listingOnly = await syncPipeline(ctx, { profiles: false });
    expect(listingOnly.stats.profilesFetched).toBe(0);
    expect(profileRequests(sim)).toEqual([]);
    const { n } = queryMirror<{ n: number }>(
      ctx.mirror.path,
      'SELECT count(company_name) AS n FROM domains',
    )[0]!;
    expect(n).toBe(1250);
    const next = await syncPipeline(ctx);
    expect(next.stats.due).toBe(1250);
    expect(next.stats.profilesFetched).toBe(1250);
    const requested = profileRequests(sim);
    expect(requested).toHaveLength(1250);
    expect(new Set(requested).size).toBe(1250);
    expect(diffMirrorWithTruth(ctx.mirror.path, sim)).toEqual([]);
  });

  it('keeps unicode domains as unicode and tolerates the quirks the spec allows', async () => {
    const sim = await startTestSimulator({ domains: 600, seed: 2, quirks: true });
    const ctx = await openTestContext(sim, { profileWriter });
    const run = await syncPipeline(ctx);
    expect(run.failures).toEqual([]);
    expect(run.status).toBe('done');
    expect(diffMirrorWithTruth(ctx.mirror.path, sim)).toEqual([]);
    const unicode = queryMirror<{ domain_normalized: string }>(
      ctx.mirror.path,
      "SELECT domain_normalized FROM domains WHERE domain_normalized GLOB '*[^ -~]*'",
    );
    expect(unicode.length).toBeGreaterThan(0);
    const stamps = queryMirror<{ last_enriched_at: string }>(
      ctx.mirror.path,
      'SELECT last_enriched_at FROM domains',
    );
    for (const { last_enriched_at } of stamps)
      expect(last_enriched_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });
});

describe('the writer of a sync', () => {
  it('is the one the run context opens', async () => {
    const sim = await startTestSimulator({ domains: 60, seed: 5 });
    const ctx = await openTestContext(sim, { profileWriter: 'inline' });
    const open = ctx.openProfileWriter!;
    const opened: ProfileWriter[] = [];
    ctx.openProfileWriter = async (mirror, options) => {
      const writer = await open(mirror, options);
      opened.push(writer);
      return writer;
    };
    expect((await syncPipeline(ctx)).status).toBe('done');
    expect(opened).toHaveLength(1);
    expect(diffMirrorWithTruth(ctx.mirror.path, sim)).toEqual([]);
  });
});

describe('sync filters', () => {
  it('sends every canonical filter under its configured wire name', async () => {
    const wire = {
      jurisdiction: 'licence_jurisdiction',
      payment_category: 'pay_cat',
      game_provider: 'provider',
      exclude_provider: 'not_provider',
      exclude_payment_category: 'not_pay_cat',
      has_affiliate_programs: 'affiliates',
      geo: 'geo_hint',
      enriched_after: 'fresh_after',
      per_page: 'limit',
      page: 'p',
    } as const;
    const sim = await startTestSimulator({ domains: 400, seed: 9, queryParamNames: wire });
    const ctx = await openTestContext(sim, { config: { api: { queryParams: wire } } });
    const filters = {
      jurisdiction: 'mga',
      payment_category: 'crypto',
      game_provider: 'NetEnt',
      exclude_provider: 'Playtech',
      exclude_payment_category: 'bank_transfer',
      has_affiliate_programs: true,
      geo: 'DE',
      enriched_after: '2020-01-01T00:00:00.000Z',
    };
    const run = await syncPipeline(ctx, { filters, profiles: false });
    expect(run.status).toBe('done');
    const listing = sim.control.requests().filter((r) => r.method === 'GET' && r.path.endsWith('/domains'));
    expect(listing.length).toBeGreaterThan(0);
    for (const request of listing) {
      for (const [canonical, name] of Object.entries(wire)) {
        expect(request.query, `${canonical} sent as ${name}`).toHaveProperty(name);
        if (canonical !== name) expect(request.query).not.toHaveProperty(canonical);
      }
    }
  });

  it('a filtered sync mirrors exactly the matching domains', async () => {
    const sim = await startTestSimulator({ domains: 1500, seed: 4 });
    const ctx = await openTestContext(sim);
    const filters = { jurisdiction: 'ukgc', payment_category: 'ewallet' };
    const expected = sim.control.truth.listDomains(filters);
    expect(expected.length).toBeGreaterThan(10);
    expect(expected.length).toBeLessThan(1500);
    const run = await syncPipeline(ctx, { filters });
    expect(run.status).toBe('done');
    const mirrored = queryMirror<{ d: string }>(
      ctx.mirror.path,
      'SELECT domain_normalized AS d FROM domains ORDER BY 1',
    ).map((r) => r.d);
    expect(mirrored).toEqual([...expected].sort());
    expect(diffMirrorWithTruth(ctx.mirror.path, sim, expected)).toEqual([]);
  });
});

describe('sync under faults (thread writer)', () => {
  const profileWriter = 'thread';
  it('with 15% 5xx and 3% resets on GETs still ends equal to the truth', async () => {
    const sim = await startTestSimulator({ domains: 1000, seed: 12 });
    const ctx = await openTestContext(sim, { profileWriter, config: { api: { maxRetries: 8 } } });
    sim.control.setFaults([
      { method: 'GET', kind: 'status', status: 503, probability: 0.15 },
      { method: 'GET', kind: 'reset', probability: 0.03 },
    ]);
    const run = await syncPipeline(ctx);
    const stats = sim.control.faultStats();
    sim.control.clearFaults();
    expect(stats.total).toBeGreaterThan(50);
    expect(run.failures).toEqual([]);
    expect(run.status).toBe('done');
    expect(diffMirrorWithTruth(ctx.mirror.path, sim)).toEqual([]);
  });

  it('reports a malformed profile by domain while every other profile is mirrored', async () => {
    const sim = await startTestSimulator({ domains: 200, seed: 13 });
    const ctx = await openTestContext(sim, { profileWriter, config: { api: { maxRetries: 1 } } });
    const bad = sim.control.truth.listDomains()[42]!;
    sim.control.setFaults([
      { method: 'GET', path: `/domains/${encodeURIComponent(bad)}`, kind: 'malformed' },
    ]);
    const run = await syncPipeline(ctx);
    expect(run.status).toBe('done');
    expect(run.failures).toHaveLength(1);
    expect(run.failures[0]).toMatchObject({ item: bad, code: 'ERR_PROTOCOL' });
    expect(run.failures[0]!.message).toMatch(/^GET \/domains\/[^:]+: response is not valid JSON/);
    // The writer found the body was not JSON, and the profile was fetched again as the client
    // retries such a body: api.maxRetries (1) times.
    expect(requestsOf(sim, bad)).toBe(2);
    expect(run.stats.profilesFetched).toBe(199);
    const others = sim.control.truth.listDomains().filter((d) => d !== bad);
    expect(diffMirrorWithTruth(ctx.mirror.path, sim, others)).toEqual([]);
    // The next run retries the failed profile and converges.
    sim.control.clearFaults();
    const next = await syncPipeline(ctx);
    expect(next.failures).toEqual([]);
    expect(next.stats.due).toBe(1);
    expect(diffMirrorWithTruth(ctx.mirror.path, sim)).toEqual([]);
  });
});

/** Requests for `domain`'s profile, answered or faulted (a faulted one is logged by its path only). */
function requestsOf(sim: RunningSimulator, domain: string): number {
  const path = `/domains/${encodeURIComponent(domain)}`;
  return sim.control.usage().filter((u) => u.method === 'GET' && u.path === path).length;
}

describe.each(WRITERS)('profile bodies read on the writer (%s writer)', (profileWriter) => {
  it('fetches a profile again whose body was not JSON, and mirrors it', async () => {
    const sim = await startTestSimulator({ domains: 300, seed: 16 });
    const ctx = await openTestContext(sim, { profileWriter });
    const bad = sim.control.truth.listDomains().slice(100, 103);
    sim.control.setFaults(
      bad.map((domain, i) => ({
        method: 'GET' as const,
        path: `/domains/${encodeURIComponent(domain)}`,
        kind: 'malformed' as const,
        times: i + 1,
      })),
    );
    const run = await syncPipeline(ctx);
    expect(run.status).toBe('done');
    expect(run.failures).toEqual([]);
    expect(run.stats.profilesFetched).toBe(300);
    // Each fetched once more than its body came malformed, the last time whole.
    expect(sim.control.faultStats().injected).toEqual({ malformed: 6 });
    expect(bad.map((domain) => requestsOf(sim, domain))).toEqual([2, 3, 4]);
    expect(profileRequests(sim)).toHaveLength(306);
    expect(diffMirrorWithTruth(ctx.mirror.path, sim)).toEqual([]);
  });
});

describe.each(WRITERS)('sync stopped or re-listing midway (%s writer)', (profileWriter) => {
  it('a 401 in the middle stops the run as stopped_by_service and keeps what was written', async () => {
    const sim = await startTestSimulator({ domains: 2500, seed: 14 });
    const ctx = await openTestContext(sim, { profileWriter, config: { api: { concurrency: 2 } } });
    const run = await whileKeyRefusedFromListPage(sim, 3, () => syncPipeline(ctx));
    expect(run.status).toBe('stopped_by_service');
    expect(run.error?.code).toBe('ERR_AUTH');
    const { n } = queryMirror<{ n: number }>(ctx.mirror.path, 'SELECT count(*) AS n FROM domains')[0]!;
    expect(n).toBeGreaterThanOrEqual(1000);
    expect(n).toBeLessThan(2500);
    // Whatever profile was fetched before the 401 is in the mirror; the rest converges next time.
    const fetched = queryMirror<{ d: string }>(
      ctx.mirror.path,
      'SELECT domain_normalized AS d FROM domains WHERE profile_synced_at IS NOT NULL',
    ).map((r) => r.d);
    expect(diffMirrorWithTruth(ctx.mirror.path, sim, fetched)).toEqual([]);
    const next = await syncPipeline(ctx);
    expect(next.status).toBe('done');
    expect(diffMirrorWithTruth(ctx.mirror.path, sim)).toEqual([]);
  });

  it('domains inserted before the cursor while paging are in the mirror at the end of the same run', async () => {
    const sim = await startTestSimulator({ domains: 2000, seed: 15 });
    const ctx = await openTestContext(sim, { profileWriter });
    const inserted: string[] = [];
    sim.control.onListPage((page) => {
      if (page === 2 && inserted.length === 0) {
        for (let i = 0; i < 3; i++) inserted.push(sim.control.mutate.addDomain({ position: 'start' }));
      }
    });
    const run = await syncPipeline(ctx);
    sim.control.onListPage(null);
    expect(run.status).toBe('done');
    expect(run.stats.driftDetected).toBe(true);
    expect(run.stats.passes).toBeGreaterThanOrEqual(2);
    expect(diffMirrorWithTruth(ctx.mirror.path, sim)).toEqual([]);
    for (const domain of inserted) {
      expect(
        queryMirror(ctx.mirror.path, 'SELECT 1 FROM domains WHERE domain_normalized = ?', domain),
      ).toHaveLength(1);
    }
    // Re-listing fetched no profile twice.
    const counts = new Map<string, number>();
    for (const d of profileRequests(sim)) counts.set(d, (counts.get(d) ?? 0) + 1);
    expect([...counts.values()].every((c) => c === 1)).toBe(true);
  });
});
