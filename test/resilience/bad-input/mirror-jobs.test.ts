import { readdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { enrichPipeline } from '../../../pipelines/enrich/index.js';
import { exportPipeline } from '../../../pipelines/export/index.js';
import type { RunningSimulator } from '../../../src/simulator/index.js';
import { queryMirror } from '../../helpers/mirror.js';
import { openTestContext } from '../../helpers/test-context.js';
import { FULL } from '../mode.js';
import { startProxiedSimulator } from './fixtures.js';
import type { ProxiedSimulator } from './fixtures.js';
import { caseName, EXTRA_KEY, getAt, matrixCases, pipelineRows, SPEC_RESOURCES } from './spec-table.js';
import type { MatrixCase } from './spec-table.js';

/*
 * The bad-input matrix through `enrich` and `export` into a real SQLite mirror: the account, the
 * 202/200 answers of POST /enrichments, enrichment runs (completed and failed shapes), the 202 of
 * POST /exports and the export itself. Tolerated rows are stored as documented; an error names
 * the field, nothing is half-written, and a paid POST whose answer cannot be read is never paid
 * again (docs/contract.md "Promises").
 */

let ok: ProxiedSimulator;
let failing: ProxiedSimulator;
let cachedSim: ProxiedSimulator;

beforeAll(async () => {
  const fast = { domains: 5, timeScale: 0.0001, exportReadyMs: 1, cacheWindowMs: 0 };
  ok = await startProxiedSimulator({ ...fast, seed: 84, runFailureRate: 0 });
  failing = await startProxiedSimulator({ ...fast, seed: 85, runFailureRate: 1 });
  cachedSim = await startProxiedSimulator({ domains: 5, seed: 86, cacheWindowMs: 10 * 365 * 86_400_000 });
});

afterAll(async () => {
  await Promise.all([ok?.close(), failing?.close(), cachedSim?.close()]);
});

const CONFIG = {
  api: { maxRetries: 1, pollIntervalMs: 1 },
  enrich: { maxPollIntervalMs: 5, wait: '1s' },
  exports: { pollDeadline: '1s' },
};

const resource = (name: string) => SPEC_RESOURCES.find((r) => r.name === name)!;
const rowsOf = (name: string) => pipelineRows(matrixCases([resource(name)]), FULL);
const viaProxy = (p: ProxiedSimulator): RunningSimulator => ({ ...p.sim, baseUrl: p.proxy.baseUrl });
const q = (dbPath: string, sql: string, ...params: unknown[]) =>
  queryMirror<Record<string, unknown>>(dbPath, sql, ...params);

function asColumn(value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value;
}

function mutateWhen(c: MatrixCase, when: (body: unknown) => boolean, seen: { body?: unknown }) {
  return (body: unknown) => {
    if (!when(body)) return body;
    c.apply(body);
    seen.body = body;
    return body;
  };
}

describe('bad-input matrix: enrichment runs through enrich', () => {
  const RUN_COLUMNS: Record<string, string> = {
    started_at: 'started_at',
    completed_at: 'completed_at',
    'enrichment.domain_normalized': 'result_domain_normalized',
    'enrichment.status': 'result_status',
    'enrichment.last_enriched_at': 'result_last_enriched_at',
    'error_details.error': 'error',
    'error_details.error_type': 'error_type',
  };
  const cases = [
    ...rowsOf('enrichment run (completed)').map((c) => ({ c, sim: () => ok, settled: 'completed' })),
    ...rowsOf('enrichment run (failed)').map((c) => ({ c, sim: () => failing, settled: 'failed' })),
  ];

  test.each(cases.map((x) => [caseName(x.c), x] as const))('%s', async (_n, { c, sim, settled }) => {
    const p = sim();
    const ctx = await openTestContext(viaProxy(p), { config: CONFIG });
    const domain = p.sim.control.truth.listDomains()[0]!;
    const seen: { body?: unknown } = {};
    p.proxy.reset();
    p.sim.control.resetLogs();
    p.proxy.setRules([
      {
        method: 'GET',
        path: /^\/enrichment_runs\/\d+$/,
        json: mutateWhen(c, (b) => getAt(b, 'data.status') === settled, seen),
      },
    ]);
    const run = await enrichPipeline(ctx, { domains: [domain], budget: 10 });
    const posts = p.sim.control.usage().filter((u) => u.endpoint === 'POST /enrichments');
    expect(posts).toHaveLength(1);
    const runId = posts[0]!.runId!;
    expect(seen.body, 'a settled run answer was rewritten').toBeDefined();
    const [row] = q(ctx.mirror.path, 'SELECT * FROM enrichment_runs WHERE id = ?', runId);
    expect(row, 'the run recorded when it was started').toBeDefined();

    const stillPending =
      c.expect.outcome === 'error' || (c.path === 'data.status' && c.kind === 'unseen enum value');
    if (stillPending) {
      // Not readable (or not settled by any status we know): the run stays as recorded at its
      // start, pending, and the next enrich resumes it; nothing of the bad answer is stored.
      expect(row!.status).toBe('pending');
      for (const column of [
        'completed_at',
        'error',
        'error_type',
        'result_status',
        'result_last_enriched_at',
      ])
        expect(row![column]).toBeNull();
      expect(run.stats.leftPending).toBe(1);
      if (c.expect.outcome === 'error') {
        expect(run.failures).toContainEqual(
          expect.objectContaining({ item: `run ${runId}`, code: 'ERR_PROTOCOL' }),
        );
        const failure = run.failures.find((f) => f.item === `run ${runId}`)!;
        expect(failure.message).toContain(`: ${c.expect.fieldPath}: ${c.expect.expected}`);
      }
      return;
    }
    // Every error case is pending and returned above; this also narrows the type for the rest.
    if (c.expect.outcome !== 'tolerated')
      throw new Error(`${caseName(c)}: an error case got past the pending checks`);
    const data = getAt(seen.body, 'data') as Record<string, unknown>;
    expect(row!.status).toBe(data.status);
    expect(JSON.parse(String(row!.raw))).toEqual(data);
    const relative = c.path.slice('data.'.length);
    if (relative in RUN_COLUMNS) expect(row![RUN_COLUMNS[relative]!]).toBe(asColumn(c.expect.value));
    if (relative === 'domain' || relative === 'strategy') {
      // A thinner later shape never erases what the start recorded (store/enrichment.ts).
      expect(row![relative]).toBe(c.expect.value ?? (relative === 'domain' ? domain : 'full'));
    }
    if (relative === 'enrichment' || relative === 'error_details') {
      const columns = Object.entries(RUN_COLUMNS).filter(([k]) => k.startsWith(`${relative}.`));
      for (const [, column] of columns) expect(row![column]).toBeNull();
    }
    if (relative.endsWith(EXTRA_KEY))
      expect(getAt(JSON.parse(String(row!.raw)), relative)).toEqual(c.expect.value);
  });
});

describe('bad-input matrix: POST /enrichments answers through enrich', () => {
  const cases = [
    ...rowsOf('enrichment started (202)').map((c) => ({ c, sim: () => ok, status: 202 })),
    ...rowsOf('enrichment cached (200)').map((c) => ({ c, sim: () => cachedSim, status: 200 })),
  ];
  test.each(cases.map((x) => [caseName(x.c), x] as const))('%s', async (_n, { c, sim, status }) => {
    const p = sim();
    const ctx = await openTestContext(viaProxy(p), { config: CONFIG });
    const domain = p.sim.control.truth.listDomains()[1]!;
    p.proxy.reset();
    p.sim.control.resetLogs();
    const seen: { body?: unknown } = {};
    p.proxy.setRules([
      {
        method: 'POST',
        path: '/enrichments',
        json: (body, got) => {
          expect(got).toBe(status);
          return mutateWhen(c, () => true, seen)(body);
        },
      },
    ]);
    const run = await enrichPipeline(ctx, { domains: [domain], budget: 10 });
    // One POST whatever happened: a paid request is never sent twice.
    expect(p.sim.control.usage().filter((u) => u.endpoint === 'POST /enrichments')).toHaveLength(1);
    const intents = q(ctx.mirror.path, 'SELECT * FROM enrichment_intents');
    expect(intents).toHaveLength(1);
    const runs = q(ctx.mirror.path, 'SELECT * FROM enrichment_runs');
    if (c.expect.outcome === 'error') {
      // The answer was sent (and, for a 202, billed) but cannot be read: outcome unknown, never
      // sent again, no run row guessed; the end-of-run account check then settles the intent
      // (billed for the 202, not billed for the cached 200).
      expect(run.stats.unknown).toBe(1);
      expect(runs).toEqual([]);
      expect(intents[0]!.status).toBe(status === 202 ? 'reconciled_billed' : 'reconciled_not_billed');
      // Settled by the account, the intent's note tells the reconciliation; the refused answer
      // leaves only its code in the log (the field's name is not kept once settled).
      expect(String(intents[0]!.note)).toMatch(/^reconciled with the account/);
      expect(ctx.memoryLogger.text()).toContain('ERR_OUTCOME_UNKNOWN');
      expect(run.stats.creditsSpent).toBe(status === 202 ? 10 : 0);
      return;
    }
    expect(run.failures).toEqual([]);
    if (status === 202) {
      expect(intents[0]!.status).toBe('started');
      expect(runs).toHaveLength(1);
      expect(runs[0]!.status).toBe('completed');
      // `billable` absent or null is taken as the spec's `true`: 10 credits recorded.
      expect(runs[0]!.credits).toBe(getAt(seen.body, 'data.billable') === false ? 0 : 10);
    } else {
      expect(intents[0]!.status).toBe('cached');
      expect(runs).toEqual([]);
      expect(q(ctx.mirror.path, 'SELECT 1 FROM domains WHERE domain_normalized = ?', domain)).toHaveLength(1);
    }
  });
});

describe('bad-input matrix: the account through enrich', () => {
  test.each(rowsOf('account').map((c) => [caseName(c), c] as const))('%s', async (_n, c) => {
    const ctx = await openTestContext(viaProxy(ok), { config: CONFIG });
    const seen: { body?: unknown } = {};
    ok.proxy.reset();
    ok.sim.control.resetLogs();
    ok.proxy.setRules([{ method: 'GET', path: '/account', json: mutateWhen(c, () => true, seen) }]);
    const run = await enrichPipeline(ctx, { budget: 10 });
    const snapshots = q(ctx.mirror.path, 'SELECT * FROM account_snapshots ORDER BY id');
    if (c.expect.outcome === 'error') {
      // Nothing can be budgeted from an unreadable account: the run ends before any POST.
      expect(run.status).toBe('failed');
      expect(run.error?.message).toContain(`GET /account: ${c.expect.fieldPath}: ${c.expect.expected}`);
      expect(snapshots).toEqual([]);
      expect(ok.sim.control.usage().filter((u) => u.method === 'POST')).toEqual([]);
      return;
    }
    expect(run.status).toBe('done');
    expect(snapshots.length).toBeGreaterThan(0);
    const data = getAt(seen.body, 'data') as Record<string, unknown>;
    expect(JSON.parse(String(snapshots[0]!.raw))).toEqual(data);
    if (c.path === 'data.credits_granted') expect(snapshots[0]!.credits_granted).toBeNull();
  });
});

describe('bad-input matrix: exports through export', () => {
  const EXPORT_COLUMNS: Record<string, string> = {
    total_rows: 'total_rows',
    credits_used: 'credits_used',
    expires_at: 'expires_at',
    download_url: 'download_url',
  };
  const filters = { jurisdiction: 'mga' };

  test.each(rowsOf('export (completed)').map((c) => [caseName(c), c] as const))('%s', async (_n, c) => {
    const ctx = await openTestContext(viaProxy(ok), { config: CONFIG });
    const seen: { body?: unknown } = {};
    ok.proxy.reset();
    ok.proxy.setRules([
      {
        method: 'GET',
        path: /^\/exports\/\d+$/,
        json: mutateWhen(c, (b) => getAt(b, 'data.status') === 'completed', seen),
      },
    ]);
    const run = await exportPipeline(ctx, { filters, format: 'json' });
    expect(seen.body, 'a completed export answer was rewritten').toBeDefined();
    const exports = q(ctx.mirror.path, 'SELECT * FROM exports');
    expect(exports).toHaveLength(1);
    const loaded = q(ctx.mirror.path, 'SELECT domain_normalized FROM domains ORDER BY 1').map(
      (r) => r.domain_normalized,
    );
    const expected = [...ok.sim.control.truth.listDomains(filters)].sort();
    const stillPending =
      c.expect.outcome === 'error' || (c.path === 'data.status' && c.kind === 'unseen enum value');
    if (stillPending) {
      // Unreadable or never settled: the export stays recorded as created (its id kept, so the
      // next run resumes it without paying again); nothing is downloaded or loaded.
      expect(run.status).toBe('failed');
      // An unseen status is stored verbatim as it was polled; an unreadable answer stores nothing.
      expect(exports[0]!.status).toBe(c.expect.outcome === 'error' ? 'pending' : c.expect.value);
      expect(exports[0]!.loaded_at).toBeNull();
      expect(loaded).toEqual([]);
      expect(await readdir(ctx.config.exports.dir).catch(() => [])).toEqual([]);
      if (c.expect.outcome === 'error')
        expect(run.error?.message).toContain(`${c.expect.fieldPath}: ${c.expect.expected}`);
      else expect(run.error?.code).toBe('ERR_POLL_TIMEOUT');
      return;
    }
    // Every error case is pending and returned above; this also narrows the type for the rest.
    if (c.expect.outcome !== 'tolerated')
      throw new Error(`${caseName(c)}: an error case got past the pending checks`);
    expect(run.status).toBe('done');
    expect(loaded).toEqual(expected);
    expect(exports[0]!.status).toBe('completed');
    expect(exports[0]!.loaded_at).not.toBeNull();
    const relative = c.path.slice('data.'.length);
    if (relative in EXPORT_COLUMNS)
      expect(exports[0]![EXPORT_COLUMNS[relative]!]).toBe(asColumn(c.expect.value));
    // The format asked for is kept when the answer does not say it (or says something new).
    if (relative === 'format') expect(exports[0]!.format).toBe(c.expect.value ?? 'json');
  });

  test.each(rowsOf('export created (202)').map((c) => [caseName(c), c] as const))('%s', async (_n, c) => {
    const ctx = await openTestContext(viaProxy(ok), { config: CONFIG });
    ok.proxy.reset();
    ok.sim.control.resetLogs();
    ok.proxy.setRules([{ method: 'POST', path: '/exports', json: mutateWhen(c, () => true, {}) }]);
    const first = await exportPipeline(ctx, { filters, format: 'json' });
    if (c.expect.outcome === 'tolerated') {
      expect(first.status).toBe('done');
      expect(q(ctx.mirror.path, 'SELECT count(*) AS n FROM domains')[0]!.n).toBe(
        ok.sim.control.truth.listDomains(filters).length,
      );
      return;
    }
    expect(first.status).toBe('failed');
    expect(first.error?.message).toContain(`${c.expect.fieldPath}: ${c.expect.expected}`);
    expect(q(ctx.mirror.path, 'SELECT * FROM exports')).toEqual([]);
    expect(q(ctx.mirror.path, 'SELECT count(*) AS n FROM domains')[0]!.n).toBe(0);
    // The service answered 202: the export exists and was paid. The same export again must not
    // pay a second time without the user saying so (docs/contract.md "Promises": never pay twice).
    ok.proxy.reset();
    const second = await exportPipeline(ctx, { filters, format: 'json' });
    expect(second.error?.code).toBe('ERR_OUTCOME_UNKNOWN');
    expect(ok.sim.control.usage().filter((u) => u.endpoint === 'POST /exports')).toHaveLength(1);
  });
});
