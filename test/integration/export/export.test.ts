import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exportPipeline } from '../../../pipelines/export/index.js';
import type { ExportOptions } from '../../../pipelines/export/index.js';
import { getExport as getStoredExport } from '../../../src/mirror/store/exports.js';
import type { OwnedRunContext } from '../../../src/runtime/run-context.js';
import type { RunningSimulator, SimulatorOptions } from '../../../src/simulator/index.js';
import { queryMirror } from '../../helpers/mirror.js';
import { diffMirrorWithTruth } from '../../helpers/mirror-truth.js';
import { startTestSimulator } from '../../helpers/start-simulator.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { exportPosts, openTestContext, replaceDownloadedFile, sha256File } from './helpers.js';

const SIM: SimulatorOptions = { domains: 300, timeScale: 0.01, seed: 7 };

async function setup(
  simOptions: SimulatorOptions = {},
  extra: Record<string, unknown> = {},
): Promise<{ sim: RunningSimulator; dir: string; ctx: () => Promise<OwnedRunContext> }> {
  const sim = await startTestSimulator({ ...SIM, ...simOptions });
  const dir = await tempDir('domain-sync-export-');
  return { sim, dir, ctx: () => openTestContext(sim, dir, { extra }) };
}

async function run(open: () => Promise<OwnedRunContext>, options: ExportOptions) {
  const ctx = await open();
  try {
    return await exportPipeline(ctx, options);
  } finally {
    await ctx.close();
  }
}

describe('export pipeline against the simulator', () => {
  for (const format of ['csv', 'json'] as const) {
    it(`loads a ${format} export that matched no domain as 0 rows`, async () => {
      const { sim, ctx } = await setup();
      expect(sim.control.truth.listDomains({ geo: 'nowhere' })).toEqual([]);
      const result = await run(ctx, { filters: { geo: 'nowhere' }, format });
      expect(result.error).toBeUndefined();
      expect(result.status).toBe('done');
      expect(result.stats.totalRows).toBe(0);
      expect(result.stats.rowsLoaded).toBe(0);
      const c = await ctx();
      try {
        const [stored] = queryMirror<{ download_status: string; rows_loaded: number }>(
          c.mirror.path,
          `SELECT download_status, rows_loaded FROM exports WHERE id = ${result.stats.exportId!}`,
        );
        expect(stored).toEqual({ download_status: 'loaded', rows_loaded: 0 });
      } finally {
        await c.close();
      }
    });
  }

  for (const format of ['csv', 'json'] as const) {
    it(`creates, polls through pending, downloads and loads a filtered ${format} export so the mirror equals the truth`, async () => {
      const { sim, dir, ctx } = await setup();
      const result = await run(ctx, { filters: { jurisdiction: 'mga' }, format });
      expect(result.error).toBeUndefined();
      expect(result.status).toBe('done');
      const s = result.stats;
      // exportReadyMs × timeScale = 200 ms of pending, polled every 20 ms and more.
      expect(s.polls).toBeGreaterThan(1);
      const truthDomains = sim.control.truth.listDomains({ jurisdiction: 'mga' });
      expect(s.rowsLoaded).toBe(truthDomains.length);
      expect(s.filePath!.startsWith(join(dir, 'exports'))).toBe(true);
      expect(s.sha256).toBe(sha256File(s.filePath!));

      const c = await ctx();
      try {
        expect(diffMirrorWithTruth(c.mirror.path, sim, truthDomains)).toEqual([]);
        const [count] = queryMirror<{ n: number }>(c.mirror.path, 'SELECT count(*) AS n FROM domains');
        expect(count!.n).toBe(truthDomains.length);
        const stored = getStoredExport(c.mirror, s.exportId!)!;
        expect(stored.checksum).toBe(s.sha256);
        expect(stored.byte_count).toBe(readFileSync(s.filePath!).length);
        expect(stored.loaded_at).not.toBeNull();
        // Actual credits in the ledger, with the estimate next to them.
        const ledger = queryMirror<{ credits: number; estimated_credits: number; entry_key: string }>(
          c.mirror.path,
          "SELECT credits, estimated_credits, entry_key FROM credit_ledger WHERE operation = 'export'",
        );
        expect(ledger).toEqual([
          {
            credits: stored.credits_used,
            estimated_credits: s.estimatedCredits,
            entry_key: `export:${s.exportId}`,
          },
        ]);
      } finally {
        await c.close();
      }
      expect(exportPosts(sim)).toBe(1);
    });
  }

  it('learns the per-row price from the first export and estimates the second exactly', async () => {
    const { ctx } = await setup();
    const first = await run(ctx, { filters: { jurisdiction: 'ukgc' }, format: 'json', fields: [] });
    expect(first.stats.priceSource).toMatch(/guess/);
    const second = await run(ctx, { filters: { jurisdiction: 'ukgc' }, format: 'json', fields: [] });
    expect(second.stats.mode).toBe('created');
    expect(second.stats.priceSource).toMatch(/learned from 1/);
    expect(second.stats.estimateError).toBe(0);
  });

  it('--max-credits below the estimate refuses before any credit is spent', async () => {
    const { sim, ctx } = await setup();
    const result = await run(ctx, { filters: { jurisdiction: 'mga' }, maxCredits: 1 });
    expect(result.status).toBe('budget_reached');
    expect(result.error?.code).toBe('ERR_OVER_MAX_CREDITS');
    expect(result.error?.message).toMatch(/estimated cost \d+ credits .* exceeds --max-credits 1/);
    expect(exportPosts(sim)).toBe(0);
    expect(sim.control.account().credits_used + sim.control.account().credits_reserved).toBe(0);
  });

  it('refuses when the estimate exceeds the available credits, naming both (stopped by service)', async () => {
    const { sim, ctx } = await setup({ credits: 5 });
    const result = await run(ctx, { filters: { jurisdiction: 'mga' } });
    expect(result.status).toBe('stopped_by_service');
    expect(result.error?.code).toBe('ERR_INSUFFICIENT_CREDITS');
    expect(result.error?.message).toMatch(
      /estimated cost \d+ credits .* exceeds the account's 5 available credits/,
    );
    expect(exportPosts(sim)).toBe(0);
  });

  it('a download 404 while the export is not ready is polled again, then succeeds', async () => {
    const { sim, ctx } = await setup();
    sim.control.setFaults([
      { method: 'GET', path: '/exports/1/download', kind: 'status', status: 404, times: 2 },
    ]);
    const result = await run(ctx, { filters: { jurisdiction: 'curacao' } });
    expect(result.error).toBeUndefined();
    expect(result.status).toBe('done');
    expect(sim.control.faultStats().total).toBe(2);
    expect(result.stats.rowsLoaded).toBe(sim.control.truth.listDomains({ jurisdiction: 'curacao' }).length);
  });

  it('a truncated download is detected, retried, and the file checksummed once whole', async () => {
    const { sim, ctx } = await setup();
    sim.control.setFaults([{ method: 'GET', path: '/exports/1/download', kind: 'truncate', times: 2 }]);
    const result = await run(ctx, { filters: { jurisdiction: 'mga' }, format: 'csv' });
    expect(result.error).toBeUndefined();
    expect(result.stats.downloadAttempts).toBe(3);
    expect(result.stats.sha256).toBe(sha256File(result.stats.filePath!));
    const truth = sim.control.truth.listDomains({ jurisdiction: 'mga' });
    expect(result.stats.rowsLoaded).toBe(truth.length);
    // No temporary file is left behind.
    expect(readdirSync(join(result.stats.filePath!, '..')).filter((n) => n.endsWith('.part'))).toEqual([]);
    const c = await ctx();
    try {
      expect(diffMirrorWithTruth(c.mirror.path, sim, truth)).toEqual([]);
    } finally {
      await c.close();
    }
  });

  it('an expired file gets a clear message, is not re-bought silently, and --recreate-expired buys a new one', async () => {
    const { sim, ctx } = await setup();
    // The first run cannot download (every attempt reset), so the file expires before we get it.
    sim.control.setFaults([{ method: 'GET', path: '/exports/1/download', kind: 'reset' }]);
    const first = await run(ctx, { filters: { jurisdiction: 'mga' }, downloadAttempts: 2 });
    expect(first.status).toBe('failed');
    expect(first.error?.code).toBe('ERR_DOWNLOAD_FAILED');
    sim.control.clearFaults();
    sim.control.advanceClock(2 * 3600_000);

    const second = await run(ctx, { filters: { jurisdiction: 'mga' } });
    expect(second.status).toBe('failed');
    expect(second.error?.code).toBe('ERR_EXPORT_EXPIRED');
    expect(second.error?.message).toMatch(/export 1 has expired .*--recreate-expired/);
    const third = await run(ctx, { filters: { jurisdiction: 'mga' } });
    expect(third.error?.code).toBe('ERR_EXPORT_EXPIRED');
    expect(exportPosts(sim)).toBe(1);
    const c = await ctx();
    try {
      expect(queryMirror<{ n: number }>(c.mirror.path, 'SELECT count(*) AS n FROM domains')[0]!.n).toBe(0);
    } finally {
      await c.close();
    }

    const fourth = await run(ctx, { filters: { jurisdiction: 'mga' }, recreateExpired: true });
    expect(fourth.error).toBeUndefined();
    expect(fourth.stats.exportId).toBe(2);
    expect(fourth.stats.rowsLoaded).toBe(sim.control.truth.listDomains({ jurisdiction: 'mga' }).length);
    expect(exportPosts(sim)).toBe(2);
  });

  it('a POST /exports with an unknown outcome is not retried blindly: billed → refused, not billed → created', async () => {
    const { sim, ctx } = await setup();
    sim.control.setFaults([
      { method: 'POST', path: '/exports', kind: 'reset', afterProcessing: true, times: 1 },
    ]);
    const first = await run(ctx, { filters: { jurisdiction: 'mga' } });
    expect(first.error?.code).toBe('ERR_OUTCOME_UNKNOWN');
    const second = await run(ctx, { filters: { jurisdiction: 'mga' } });
    expect(second.error?.code).toBe('ERR_OUTCOME_UNKNOWN');
    expect(second.error?.message).toMatch(/may have been billed.*--forget-unknown/);
    expect(exportPosts(sim)).toBe(1);
    const third = await run(ctx, { filters: { jurisdiction: 'mga' }, forgetUnknown: true });
    expect(third.status).toBe('done');
    expect(exportPosts(sim)).toBe(2);

    // Refused before any effect: the account shows nothing spent, so the next run creates it.
    sim.control.setFaults([{ method: 'POST', path: '/exports', kind: 'reset', times: 1 }]);
    const fourth = await run(ctx, { filters: { jurisdiction: 'ukgc' } });
    expect(fourth.error?.code).toBe('ERR_OUTCOME_UNKNOWN');
    const fifth = await run(ctx, { filters: { jurisdiction: 'ukgc' } });
    expect(fifth.status).toBe('done');
    expect(fifth.stats.mode).toBe('created');
  });

  // An NDJSON file is loaded in key order (pipelines/export/ndjson-order.ts), not line by line.
  for (const into of ['an empty mirror', 'a mirror that has domains'] as const) {
    it(`an NDJSON file in any order that repeats a domain loads the later line's row, into ${into}`, async () => {
      const { sim, ctx } = await setup();
      if (into === 'a mirror that has domains') {
        const first = await run(ctx, { filters: { jurisdiction: 'ukgc' }, format: 'json' });
        expect(first.stats.rowsLoaded).toBeGreaterThan(0);
      }
      const downloaded = await run(ctx, { filters: { jurisdiction: 'mga' }, format: 'json', load: false });
      const path = downloaded.stats.filePath!;
      const lines = readFileSync(path, 'utf8').trimEnd().split('\n').reverse();
      expect(lines.length).toBeGreaterThan(20);
      const changed = (text: string, status: string): string =>
        JSON.stringify({ ...(JSON.parse(text) as Record<string, unknown>), status });
      // The first domain: a stale copy before its row; the second: a newer copy after its row.
      const [kept, replaced] = [lines[0]!, lines[1]!];
      const replacedKey = (JSON.parse(replaced) as { domain_normalized: string }).domain_normalized;
      const content = [changed(kept, 'stale'), ...lines, changed(replaced, 'newer')].join('\n');
      let c = await ctx();
      replaceDownloadedFile(c.mirror, downloaded.stats.exportId!, path, `${content}\n`);
      await c.close();

      const result = await run(ctx, { filters: { jurisdiction: 'mga' }, format: 'json', batchSize: 7 });
      expect(result.error).toBeUndefined();
      expect(result.stats.onePass).toBe(into === 'an empty mirror');
      expect(result.stats.rowsLoaded).toBe(lines.length + 2);
      c = await ctx();
      try {
        const truth = sim.control.truth.listDomains({ jurisdiction: 'mga' }).filter((d) => d !== replacedKey);
        expect(diffMirrorWithTruth(c.mirror.path, sim, truth)).toEqual([]);
        expect(
          queryMirror<{ status: string }>(
            c.mirror.path,
            'SELECT status FROM domains WHERE domain_normalized = ?',
            replacedKey,
          ),
        ).toEqual([{ status: 'newer' }]);
      } finally {
        await c.close();
      }
    });
  }

  it('an unknown extra column (quirks) is loaded and kept in profile_extra', async () => {
    const { sim, ctx } = await setup({ quirks: true });
    const result = await run(ctx, { filters: { jurisdiction: 'mga' }, format: 'csv' });
    expect(result.error).toBeUndefined();
    expect(result.stats.unknownColumns).toEqual(['x_sim_revision']);
    const truth = sim.control.truth.listDomains({ jurisdiction: 'mga' });
    expect(result.stats.rowsLoaded).toBe(truth.length);
    const c = await ctx();
    try {
      expect(diffMirrorWithTruth(c.mirror.path, sim, truth, { sections: false })).toEqual([]);
      const raw = queryMirror<{ profile_extra: string }>(
        c.mirror.path,
        'SELECT profile_extra FROM domains LIMIT 1',
      )[0]!;
      expect(JSON.parse(raw.profile_extra)).toHaveProperty('x_sim_revision');
    } finally {
      await c.close();
    }
  });

  it('a file missing the key column is refused naming the columns found; nothing is loaded; the load is resumable', async () => {
    const { sim, ctx } = await setup();
    const downloaded = await run(ctx, { filters: { jurisdiction: 'mga' }, format: 'csv', load: false });
    expect(downloaded.status).toBe('done');
    expect(downloaded.stats.rowsLoaded).toBe(0);
    const id = downloaded.stats.exportId!;
    const path = downloaded.stats.filePath!;
    const good = readFileSync(path, 'utf8');
    let c = await ctx();
    replaceDownloadedFile(c.mirror, id, path, 'domain,company_name\r\nexample.com,Example Ltd\r\n');
    await c.close();

    const bad = await run(ctx, { filters: { jurisdiction: 'mga' }, format: 'csv' });
    expect(bad.status).toBe('failed');
    expect(bad.error?.code).toBe('ERR_EXPORT_LAYOUT');
    expect(bad.error?.message).toMatch(/no domain_normalized column .*columns found: domain, company_name/);
    c = await ctx();
    try {
      expect(queryMirror<{ n: number }>(c.mirror.path, 'SELECT count(*) AS n FROM domains')[0]!.n).toBe(0);
      expect(getStoredExport(c.mirror, id)!.download_status).toBe('load_failed');
      // A good file again (e.g. a fixed layout): the same export resumes, nothing is bought.
      replaceDownloadedFile(c.mirror, id, path, good);
    } finally {
      await c.close();
    }
    const resumed = await run(ctx, { filters: { jurisdiction: 'mga' }, format: 'csv' });
    expect(resumed.status).toBe('done');
    expect(resumed.stats.mode).toBe('resumed');
    expect(resumed.stats.rowsLoaded).toBe(sim.control.truth.listDomains({ jurisdiction: 'mga' }).length);
    expect(exportPosts(sim)).toBe(1);
  });

  /** The catalogue tables' row counts, and whether an unchecked load is recorded. */
  const catalogue = (path: string) =>
    queryMirror(
      path,
      `SELECT (SELECT count(*) FROM domains) AS domains, (SELECT count(*) FROM licenses) AS licences,
              (SELECT count(*) FROM payment_methods) AS payments, (SELECT count(*) FROM domain_sections) AS sections,
              (SELECT count(*) FROM change_log) AS changes, (SELECT count(*) FROM mirror_unchecked_load) AS unchecked`,
    )[0];

  /**
   * Ways to break the middle row of a file: the row as changed, and the error naming it. Each
   * returns the lines of the file (a broken row may be followed by a copy of its good self).
   */
  const BREAKAGES: Record<string, { apply: (lines: string[], at: number) => string[]; error: string }> = {
    'a bad timestamp': {
      apply: (lines, at) =>
        lines.map((l, i) => (i === at ? withField(l, 'last_enriched_at', 'yesterday') : l)),
      error: '.last_enriched_at: invalid timestamp "yesterday"',
    },
    'licences that are no list': {
      apply: (lines, at) => lines.map((l, i) => (i === at ? withField(l, 'licenses', { mga: 'MGA/1' }) : l)),
      error: '.licenses: expected an array',
    },
    // The write keeps the last row of a domain in a batch; the earlier, bad one is checked all the same.
    'a bad row whose domain the next row repeats, good': {
      apply: (lines, at) => [...lines.slice(0, at), withBadLicence(lines[at]!), ...lines.slice(at)],
      error: '.licenses[0].first_seen_at: invalid timestamp "yesterday"',
    },
    // The write skips a domain whose content it already stored; its hash leaves `meta` out.
    'a row repeating an earlier domain, its meta bad': {
      apply: (lines, at) => [
        ...lines.slice(0, at),
        withField(lines[0]!, 'meta', { freshness_age_seconds: 'soon' }),
        ...lines.slice(at),
      ],
      error: '.meta.freshness_age_seconds: ',
    },
  };
  const withField = (line: string, field: string, value: unknown): string =>
    JSON.stringify({ ...(JSON.parse(line) as Record<string, unknown>), [field]: value });
  const withBadLicence = (line: string): string => {
    const row = JSON.parse(line) as { licenses: Array<Record<string, unknown>> };
    expect(row.licenses.length).toBeGreaterThan(0);
    row.licenses[0]!.first_seen_at = 'yesterday';
    return JSON.stringify(row);
  };

  for (const into of ['an empty mirror', 'a mirror that has domains'] as const) {
    for (const [breakage, { apply, error }] of Object.entries(BREAKAGES)) {
      it(`${breakage} in the middle of the file loads nothing, into ${into}`, async () => {
        const { ctx } = await setup();
        if (into === 'a mirror that has domains') {
          const first = await run(ctx, { filters: { jurisdiction: 'ukgc' }, format: 'json' });
          expect(first.stats.rowsLoaded).toBeGreaterThan(0);
        }
        const downloaded = await run(ctx, { filters: { jurisdiction: 'mga' }, format: 'json', load: false });
        const path = downloaded.stats.filePath!;
        const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
        // A row inside a batch of 10 (batch boundaries at multiples of 10), past the first batches.
        const middle = Math.floor(lines.length / 20) * 10 + 3;
        expect(middle).toBeGreaterThan(20);
        let c = await ctx();
        const before = catalogue(c.mirror.path);
        replaceDownloadedFile(
          c.mirror,
          downloaded.stats.exportId!,
          path,
          apply(lines, middle).join('\n') + '\n',
        );
        await c.close();

        const result = await run(ctx, { filters: { jurisdiction: 'mga' }, format: 'json', batchSize: 10 });
        expect(result.error?.code).toBe('ERR_EXPORT_FILE_INVALID');
        expect(result.error?.message).toContain(`line ${middle + 1}${error}`);
        expect(result.error?.message).toMatch(/nothing was loaded/);
        // Into an empty mirror the file is read once, rows written as they are checked (batches of
        // 10, so some were committed before the bad row), and removed again; otherwise it is
        // checked whole before the first row is written.
        expect(result.stats.onePass).toBe(into === 'an empty mirror');
        c = await ctx();
        try {
          expect(catalogue(c.mirror.path)).toEqual(before);
          expect(getStoredExport(c.mirror, downloaded.stats.exportId!)!.download_status).toBe('load_failed');
        } finally {
          await c.close();
        }
      });
    }
  }

  it('old export files past expires_at and loaded are removed by exports.retention', async () => {
    const sim = await startTestSimulator(SIM);
    const dir = await tempDir('domain-sync-export-');
    const first = await openTestContext(sim, dir, { extra: { exports: { retention: '1h' } } });
    const done = await exportPipeline(first, { filters: { jurisdiction: 'mga' }, format: 'json' });
    await first.close();
    expect(existsSync(done.stats.filePath!)).toBe(true);
    // Three hours later (our clock): the file expired 1 h after completion, plus 1 h retention.
    const later = await openTestContext(sim, dir, {
      extra: { exports: { retention: '1h' } },
      clock: () => Date.now() + 3 * 3600_000,
    });
    try {
      const refused = await exportPipeline(later, { filters: { jurisdiction: 'ukgc' }, maxCredits: 0 });
      expect(refused.stats.filesRemoved).toBe(1);
      expect(existsSync(done.stats.filePath!)).toBe(false);
      expect(getStoredExport(later.mirror, done.stats.exportId!)!.download_status).toBe('file_removed');
    } finally {
      await later.close();
    }
  });
});
