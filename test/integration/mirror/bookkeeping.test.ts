import { describe, expect, it } from 'vitest';
import {
  creditsPerDay,
  creditsPerPipeline,
  creditsSpent,
  creditsSummary,
  latestAccountSnapshot,
  recordAccountSnapshot,
  recordCredits,
} from '../../../src/mirror/store/credits.js';
import { markUnlisted, upsertDomainSummaries } from '../../../src/mirror/store/domains.js';
import { upsertProfiles } from '../../../src/mirror/store/profiles.js';
import {
  getEnrichmentRun,
  listOpenEnrichmentIntents,
  listPendingEnrichmentRuns,
  recordEnrichmentIntent,
  resolveEnrichmentIntent,
  upsertEnrichmentRun,
} from '../../../src/mirror/store/enrichment.js';
import { selectStaleDomains } from '../../../src/mirror/store/enrich-plan.js';
import {
  findUnfinishedExport,
  getExport,
  markExportDownloaded,
  markExportLoaded,
  upsertExport,
} from '../../../src/mirror/store/exports.js';
import {
  finishPipelineRun,
  getPipelineRun,
  lastRuns,
  listRunningPipelineRuns,
  startPipelineRun,
} from '../../../src/mirror/store/runs.js';
import { freshness, mirrorCounts } from '../../../src/mirror/store/status.js';
import {
  clearSyncState,
  getSyncState,
  scopeKeyFor,
  setSyncState,
} from '../../../src/mirror/store/sync-state.js';
import { licence, paymentMethod, profile, summary } from './builders.js';
import { tempMirror } from './helpers.js';

describe('pipeline runs', () => {
  it('start → finish, last run per pipeline, running list', async () => {
    const mirror = await tempMirror();
    const a = startPipelineRun(mirror, { pipeline: 'sync', startedAt: '2025-04-01T00:00:00Z', pid: 42 });
    const b = startPipelineRun(mirror, { pipeline: 'sync', startedAt: '2025-04-02T00:00:00Z' });
    const c = startPipelineRun(mirror, { pipeline: 'enrich', startedAt: '2025-04-02T00:00:00Z' });
    finishPipelineRun(mirror, a, { status: 'done', finishedAt: '2025-04-01T00:10:00Z', stats: { pages: 3 } });
    finishPipelineRun(mirror, b, {
      status: 'failed',
      finishedAt: '2025-04-02T00:10:00+00:00',
      error: 'boom',
      creditsSpent: 0,
    });
    expect(getPipelineRun(mirror, a)).toMatchObject({
      status: 'done',
      pid: 42,
      stats: { pages: 3 },
      finished_at: '2025-04-01T00:10:00.000Z',
    });
    expect(lastRuns(mirror).map((r) => [r.pipeline, r.id])).toEqual([
      ['enrich', c],
      ['sync', b],
    ]);
    expect(listRunningPipelineRuns(mirror).map((r) => r.id)).toEqual([c]);
    expect(() =>
      finishPipelineRun(mirror, 999, { status: 'done', finishedAt: '2025-04-01T00:00:00Z' }),
    ).toThrow(expect.objectContaining({ code: 'ERR_MIRROR_NOT_FOUND' }));
  });
});

describe('sync_state', () => {
  it('round-trips a watermark and cursor per pipeline and filter set, merging partial updates', async () => {
    const mirror = await tempMirror();
    const scope = scopeKeyFor({ payment_category: 'crypto', jurisdiction: 'mga' });
    expect(scope).toBe(scopeKeyFor({ jurisdiction: 'mga', payment_category: 'crypto' }));
    expect(scopeKeyFor(undefined)).toBe(scopeKeyFor({}));
    expect(getSyncState(mirror, 'sync', scope)).toBeUndefined();

    setSyncState(mirror, {
      pipeline: 'sync',
      scopeKey: scope,
      filters: { jurisdiction: 'mga' },
      watermark: '2025-03-01T00:00:00.000Z',
      cursor: { page: 4, seen: ['a'] },
      updatedAt: '2025-04-01T00:00:00Z',
    });
    setSyncState(mirror, {
      pipeline: 'sync',
      scopeKey: scope,
      cursor: null,
      updatedAt: '2025-04-01T01:00:00Z',
    });
    expect(getSyncState(mirror, 'sync', scope)).toEqual({
      pipeline: 'sync',
      scopeKey: scope,
      filters: { jurisdiction: 'mga' },
      watermark: '2025-03-01T00:00:00.000Z',
      cursor: null,
      pipelineRunId: null,
      updatedAt: '2025-04-01T01:00:00.000Z',
    });
    expect(getSyncState(mirror, 'sync', scopeKeyFor({}))).toBeUndefined();
    expect(clearSyncState(mirror, 'sync', scope)).toBe(true);
    expect(getSyncState(mirror, 'sync', scope)).toBeUndefined();
  });
});

describe('credit ledger and account snapshots', () => {
  it('sums credits by time, pipeline and day; entry keys dedupe; run totals follow the ledger', async () => {
    const mirror = await tempMirror();
    const run = startPipelineRun(mirror, { pipeline: 'enrich', startedAt: '2025-04-01T00:00:00Z' });
    recordCredits(mirror, {
      at: '2025-04-01T10:00:00Z',
      operation: 'enrichment',
      credits: 10,
      estimatedCredits: 10,
      pipelineRunId: run,
      domain: 'a.example',
      runId: 1,
      entryKey: 'enrichment_run:1',
    });
    expect(
      recordCredits(mirror, {
        at: '2025-04-01T10:00:05Z',
        operation: 'enrichment',
        credits: 10,
        pipelineRunId: run,
        entryKey: 'enrichment_run:1',
      }),
    ).toEqual({ recorded: false, id: null });
    recordCredits(mirror, {
      at: '2025-04-01T11:00:00Z',
      operation: 'enrichment_cached',
      credits: 0,
      pipelineRunId: run,
      domain: 'b.example',
    });
    recordCredits(mirror, { at: '2025-04-02T09:00:00Z', operation: 'export', credits: 25, exportId: 7 });
    recordCredits(mirror, { at: '2025-03-31T23:59:59Z', operation: 'export', credits: 5 });

    expect(creditsSpent(mirror)).toBe(40);
    expect(creditsSpent(mirror, { since: '2025-04-01T00:00:00Z' })).toBe(35);
    expect(creditsSpent(mirror, { pipeline: 'enrich' })).toBe(10);
    expect(creditsSpent(mirror, { operation: 'export', until: '2025-04-01T00:00:00Z' })).toBe(5);
    expect(getPipelineRun(mirror, run)?.credits_spent).toBe(10);
    expect(creditsPerDay(mirror, { sinceDay: '2025-04-01' })).toEqual([
      {
        day: '2025-04-01',
        pipeline: 'enrich',
        operation: 'enrichment',
        credits: 10,
        estimatedCredits: 10,
        entries: 1,
      },
      {
        day: '2025-04-01',
        pipeline: 'enrich',
        operation: 'enrichment_cached',
        credits: 0,
        estimatedCredits: 0,
        entries: 1,
      },
      {
        day: '2025-04-02',
        pipeline: '(none)',
        operation: 'export',
        credits: 25,
        estimatedCredits: 0,
        entries: 1,
      },
    ]);
    expect(creditsPerPipeline(mirror)).toEqual([
      { pipeline: '(none)', credits: 30, entries: 2 },
      { pipeline: 'enrich', credits: 10, entries: 2 },
    ]);
    expect(creditsSummary(mirror, { now: '2025-04-02T12:00:00Z' })).toEqual({
      today: 25,
      thisMonth: 35,
      total: 40,
    });
  });

  it('keeps the latest account snapshot, with null credits_granted', async () => {
    const mirror = await tempMirror();
    recordAccountSnapshot(
      mirror,
      { plan: 'pro', credits_granted: 1000, credits_used: 10, credits_reserved: 0, available_credits: 990 },
      { at: '2025-04-01T00:00:00Z' },
    );
    recordAccountSnapshot(
      mirror,
      {
        plan: 'internal',
        credits_granted: null,
        credits_used: 20,
        credits_reserved: 10,
        available_credits: 0,
      },
      { at: '2025-04-02T00:00:00Z' },
    );
    expect(latestAccountSnapshot(mirror)).toMatchObject({
      plan: 'internal',
      credits_granted: null,
      credits_used: 20,
      at: '2025-04-02T00:00:00.000Z',
    });
  });
});

describe('enrichment bookkeeping', () => {
  it('records intents and runs, lists pending, and never rewrites an unchanged poll', async () => {
    const mirror = await tempMirror();
    const intent = recordEnrichmentIntent(mirror, {
      domain: 'a.example',
      createdAt: '2025-04-01T00:00:00Z',
      estimatedCredits: 10,
    });
    const other = recordEnrichmentIntent(mirror, { domain: 'b.example', createdAt: '2025-04-01T00:00:00Z' });
    resolveEnrichmentIntent(mirror, other, {
      status: 'unknown',
      at: '2025-04-01T00:00:01Z',
      note: 'connection reset',
    });
    resolveEnrichmentIntent(mirror, intent, { status: 'started', at: '2025-04-01T00:00:01Z', runId: 77 });
    expect(listOpenEnrichmentIntents(mirror).map((i) => [i.domain, i.status])).toEqual([
      ['b.example', 'unknown'],
    ]);

    expect(
      upsertEnrichmentRun(
        mirror,
        { id: 77, status: 'pending', domain: 'a.example', strategy: 'full' },
        { at: '2025-04-01T00:00:01Z', credits: 10, intentId: intent, requestedAt: '2025-04-01T00:00:00Z' },
      ),
    ).toBe('inserted');
    const pendingPoll = {
      id: 77,
      status: 'pending',
      domain: 'a.example',
      strategy: 'full',
      started_at: '2025-04-01T00:00:01+00:00',
      completed_at: null,
    };
    expect(upsertEnrichmentRun(mirror, pendingPoll, { at: '2025-04-01T00:00:30Z' })).toBe('updated');
    expect(upsertEnrichmentRun(mirror, pendingPoll, { at: '2025-04-01T00:01:00Z' })).toBe('unchanged');
    expect(listPendingEnrichmentRuns(mirror).map((r) => r.id)).toEqual([77]);

    upsertEnrichmentRun(
      mirror,
      {
        id: 77,
        status: 'failed',
        started_at: '2025-04-01T00:00:01Z',
        completed_at: '2025-04-01T00:01:30Z',
        error_details: { error: 'took too long', error_type: 'timeout' },
      },
      { at: '2025-04-01T00:02:00Z' },
    );
    expect(getEnrichmentRun(mirror, 77)).toMatchObject({
      status: 'failed',
      domain: 'a.example',
      strategy: 'full',
      credits: 10,
      error_type: 'timeout',
      intent_id: intent,
      requested_at: '2025-04-01T00:00:00.000Z',
    });
    expect(listPendingEnrichmentRuns(mirror)).toEqual([]);
    expect(() =>
      upsertEnrichmentRun(
        mirror,
        { id: 78, status: 'pending', started_at: 'soon' },
        { at: '2025-04-01T00:00:00Z' },
      ),
    ).toThrow(/run 78\.started_at/);
  });

  it('selects stale domains oldest first with filters, skipping in-flight and unlisted ones', async () => {
    const mirror = await tempMirror();
    upsertProfiles(
      mirror,
      [
        profile('old.example', { last_enriched_at: '2024-01-01T00:00:00Z' }),
        profile('older-ukgc.example', {
          last_enriched_at: '2023-01-01T00:00:00Z',
          licenses: [licence({ jurisdiction: 'ukgc', license_number: '1' })],
        }),
        profile('fresh.example', { last_enriched_at: '2025-04-01T00:00:00Z' }),
        profile('busy.example', {
          last_enriched_at: '2023-06-01T00:00:00Z',
          payment_methods: [paymentMethod({ normalized_name: 'sofort', category: 'bank_transfer' })],
        }),
      ],
      { syncedAt: '2025-04-02T00:00:00Z' },
    );
    upsertDomainSummaries(
      mirror,
      [summary('listed-only.example', { last_enriched_at: '2022-01-01T00:00:00Z' })],
      { listedAt: '2025-04-02T00:00:00Z' },
    );
    upsertEnrichmentRun(
      mirror,
      { id: 5, status: 'pending', domain: 'busy.example' },
      { at: '2025-04-02T00:00:00Z' },
    );

    const stale = selectStaleDomains(mirror, { staleBeforeIso: '2025-01-01T00:00:00Z', limit: 10 });
    expect(stale.map((s) => s.domain_normalized)).toEqual([
      'listed-only.example',
      'older-ukgc.example',
      'old.example',
    ]);
    expect(
      selectStaleDomains(mirror, { staleBeforeIso: '2025-01-01T00:00:00Z', limit: 1 }).map(
        (s) => s.domain_normalized,
      ),
    ).toEqual(['listed-only.example']);
    expect(
      selectStaleDomains(mirror, {
        staleBeforeIso: '2025-01-01T00:00:00Z',
        limit: 10,
        jurisdiction: 'ukgc',
      }).map((s) => s.domain_normalized),
    ).toEqual(['older-ukgc.example']);
    expect(
      selectStaleDomains(mirror, {
        staleBeforeIso: '2025-01-01T00:00:00Z',
        limit: 10,
        paymentCategory: 'bank_transfer',
        excludeInFlight: false,
      }).map((s) => s.domain_normalized),
    ).toEqual(['busy.example']);
    expect(
      selectStaleDomains(mirror, { limit: 10, domains: ['fresh.example'] }).map((s) => s.domain_normalized),
    ).toEqual(['fresh.example']);
  });
});

describe('exports', () => {
  it('upserts, resumes an unfinished export by params hash, and records download and load', async () => {
    const mirror = await tempMirror();
    upsertExport(
      mirror,
      { id: 9, status: 'pending' },
      {
        at: '2025-04-01T00:00:00Z',
        requestedAt: '2025-04-01T00:00:00Z',
        paramsHash: 'h1',
        filters: { jurisdiction: 'mga' },
        fields: ['licenses'],
      },
    );
    expect(findUnfinishedExport(mirror, 'h1')?.id).toBe(9);
    upsertExport(
      mirror,
      {
        id: 9,
        status: 'completed',
        format: 'csv',
        download_url: '/api/v1/igaming/exports/9/download',
        total_rows: 120,
        credits_used: 12,
        expires_at: '2025-04-02T00:00:00+00:00',
      },
      { at: '2025-04-01T00:01:00Z' },
    );
    markExportDownloaded(mirror, 9, {
      filePath: 'data/exports/9.csv',
      downloadedAt: '2025-04-01T00:02:00Z',
      checksum: 'abc',
      byteCount: 2048,
    });
    expect(getExport(mirror, 9)).toMatchObject({
      status: 'completed',
      filters: '{"jurisdiction":"mga"}',
      fields: '["licenses"]',
      expires_at: '2025-04-02T00:00:00.000Z',
      params_hash: 'h1',
      download_status: 'downloaded',
      byte_count: 2048,
    });
    markExportLoaded(mirror, 9, { loadedAt: '2025-04-01T00:03:00Z', rowsLoaded: 120 });
    expect(findUnfinishedExport(mirror, 'h1')).toBeUndefined();
    expect(getExport(mirror, 9)?.loaded_at).toBe('2025-04-01T00:03:00.000Z');
  });
});

describe('status reads', () => {
  it('counts rows and reports freshness', async () => {
    const mirror = await tempMirror();
    upsertProfiles(
      mirror,
      [
        profile('a.example', { last_enriched_at: '2025-01-01T00:00:00Z' }),
        profile('b.example', { last_enriched_at: '2025-02-01T00:00:00Z' }),
        profile('c.example', { last_enriched_at: '2025-03-01T00:00:00Z' }),
      ],
      { syncedAt: '2025-04-01T00:00:00Z' },
    );
    upsertProfiles(
      mirror,
      [profile('a.example', { last_enriched_at: '2025-01-01T00:00:00Z', payment_methods: [] })],
      { syncedAt: '2025-04-02T00:00:00Z' },
    );
    upsertDomainSummaries(mirror, [summary('d.example')], { listedAt: '2025-04-02T00:00:00Z' });
    const counts = mirrorCounts(mirror);
    expect(counts.domains).toEqual({ total: 4, listed: 4, unlisted: 0, withProfile: 3 });
    expect(counts.paymentMethods).toEqual({ active: 4, removed: 2 });
    expect(counts.licenses).toEqual({ active: 3, removed: 0 });
    expect(freshness(mirror)).toEqual({
      domains: 4,
      profilesNeverFetched: 1,
      oldestEnrichedAt: '2025-01-01T00:00:00.000Z',
      newestEnrichedAt: '2025-03-01T00:00:00.000Z',
      medianEnrichedAt: '2025-02-01T00:00:00.000Z',
    });
  });

  it('leaves the unlisted domains out of the freshness, their dates and their missing profiles alike', async () => {
    const mirror = await tempMirror();
    expect(freshness(mirror)).toEqual({
      domains: 0,
      profilesNeverFetched: 0,
      oldestEnrichedAt: null,
      newestEnrichedAt: null,
      medianEnrichedAt: null,
    });
    const T1 = '2025-04-01T00:00:00Z';
    const T2 = '2025-04-02T00:00:00Z';
    // Seven profiles, one a month; the oldest, the newest and one below the median stop being
    // listed, as does a domain never fetched, while another never-fetched one stays listed.
    const dates = [1, 2, 3, 4, 5, 6, 7].map((m) => `2025-0${m}-01T00:00:00Z`);
    const names = dates.map((_, i) => `d${i + 1}.example`);
    const catalogue = [...names, 'gone.example', 'new.example'];
    upsertDomainSummaries(
      mirror,
      catalogue.map((n) => summary(n)),
      { listedAt: T1 },
    );
    upsertProfiles(
      mirror,
      names.map((n, i) => profile(n, { last_enriched_at: dates[i] as string })),
      { syncedAt: T1 },
    );
    const unlisted = new Set(['d1.example', 'd3.example', 'd7.example', 'gone.example']);
    upsertDomainSummaries(
      mirror,
      catalogue
        .filter((n) => !unlisted.has(n))
        .map((n) => {
          const i = names.indexOf(n);
          return i < 0 ? summary(n) : summary(n, { last_enriched_at: dates[i] as string });
        }),
      { listedAt: T2 },
    );
    expect(markUnlisted(mirror, {}, { listedAt: T2, runStartedAt: T2 }).marked).toBe(4);

    expect(mirrorCounts(mirror).domains).toEqual({ total: 9, listed: 5, unlisted: 4, withProfile: 7 });
    // Listed with a profile: d2 (Feb), d4 (Apr), d5 (May), d6 (Jun); the lower median is April.
    expect(freshness(mirror)).toEqual({
      domains: 5,
      profilesNeverFetched: 1,
      oldestEnrichedAt: '2025-02-01T00:00:00.000Z',
      newestEnrichedAt: '2025-06-01T00:00:00.000Z',
      medianEnrichedAt: '2025-04-01T00:00:00.000Z',
    });
  });
});
