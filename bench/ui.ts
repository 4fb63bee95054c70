/**
 * Dashboard benchmark: how long each page of `domain-sync ui` takes to answer on a mirror of
 * 1,000,000 licence rows (bench/ui-mirror.ts), against the same pages on a mirror of 10,000
 * licences measured in the same run (the baseline: what a page costs when the mirror is small).
 *
 * For each mirror: the dashboard's migration is applied to the filled mirror (timed: what the
 * first `ui` on an existing mirror does), the server starts in this process on a read-only
 * connection (its change counting is timed), then every page is requested over loopback HTTP:
 * one request to warm the page cache, then `repeats` timed ones, one after the other. The
 * target is the slowest timed request of each page under 200 ms. `status`'s reads of the mirror
 * (its counts, the freshness of the listed domains, and the rows a destination published up to
 * the mirror's current change counter has not received) are timed the same way, called in this
 * process on the same connection: that command is what an operator runs on such a mirror.
 *
 * Run on its own after `npm run build`: `node dist/bench/ui.js [licences]`.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchFigure } from './run.js';
import { loadConfig } from '../src/config/load.js';
import { openMirror } from '../src/mirror/database.js';
import type { Mirror } from '../src/mirror/database.js';
import { changeState, PUBLISH_TABLES, rowsChangedSince } from '../src/mirror/store/publish.js';
import { freshness, mirrorCounts } from '../src/mirror/store/status.js';
import { startUiServer } from '../src/ui/index.js';
import { benchDomainName, buildBenchMirror } from './ui-mirror.js';

const TARGET_MS = 200;

/** One page's timings on one mirror. */
export interface UiPageTiming {
  page: string;
  path: string;
  status: number;
  bytes: number;
  firstMs: number;
  medianMs: number;
  maxMs: number;
}

/** One mirror's measurements. */
export interface UiMirrorResult {
  licences: number;
  domains: number;
  paymentMethods: number;
  changes: number;
  generateSeconds: number;
  fileMb: number;
  migrationSeconds: number;
  startupCountSeconds: number;
  pages: UiPageTiming[];
  /** `status`'s reads of the mirror, timed like a page. */
  statusReads: Omit<UiPageTiming, 'path' | 'status' | 'bytes'>;
}

/** What {@link runUiBench} returns; plain data. */
export interface UiBenchResult {
  name: 'ui';
  repeats: number;
  targetMs: number;
  big: UiMirrorResult;
  small: UiMirrorResult;
}

function get(origin: string, path: string): Promise<{ status: number; bytes: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(`${origin}${path}`, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, ms: performance.now() - started }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The pages timed: every page, plus the search's and the change filters' expensive cases. */
function pagesOf(domains: number, nowMs: number): Array<{ page: string; path: string }> {
  const day = (offset: number) => new Date(nowMs - offset * 86_400_000).toISOString().slice(0, 10);
  const middle = benchDomainName(Math.floor(domains / 2));
  return [
    { page: 'Overview', path: '/' },
    { page: 'Runs', path: '/runs' },
    { page: 'Runs, page 2', path: '/runs?before=200' },
    { page: 'One run', path: '/runs/150' },
    { page: 'Credits', path: '/credits' },
    { page: 'Credits, 366 days', path: '/credits?days=366' },
    { page: 'Changes', path: '/changes' },
    { page: 'Changes, licences of one week', path: `/changes?kind=licenses&from=${day(14)}&to=${day(8)}` },
    { page: 'Changes, jurisdiction', path: '/changes?jurisdiction=mga' },
    { page: 'Changes, rare jurisdiction', path: '/changes?jurisdiction=alderney' },
    { page: 'Changes, category', path: '/changes?category=crypto' },
    { page: 'Changes, jurisdiction and category', path: '/changes?jurisdiction=ukgc&category=prepaid' },
    { page: 'Domains', path: '/domains' },
    { page: 'Domains, page from the middle', path: `/domains?after=${encodeURIComponent(middle)}` },
    { page: 'Domains, common name', path: '/domains?q=casino' },
    {
      page: 'Domains, company name',
      path: `/domains?q=${encodeURIComponent(`Company ${Math.floor(domains / 40)} Ltd`)}`,
    },
    { page: 'Domains, name matching nothing', path: '/domains?q=no-such-name' },
    { page: 'Domains, jurisdiction', path: '/domains?jurisdiction=mga' },
    { page: 'Domains, rare jurisdiction', path: '/domains?jurisdiction=alderney' },
    { page: 'Domains, jurisdiction and category', path: '/domains?jurisdiction=ukgc&category=crypto' },
    { page: 'Domains, category and name', path: '/domains?category=prepaid&q=casino1' },
    { page: 'One domain', path: `/domains/${encodeURIComponent(middle)}` },
    { page: 'Snapshots', path: '/snapshots' },
  ];
}

async function measureMirror(
  dir: string,
  licences: number,
  repeats: number,
  nowMs: number,
): Promise<UiMirrorResult> {
  const domains = Math.round(licences / 1.6);
  const path = join(dir, `mirror-${licences}.sqlite`);
  const generated = await buildBenchMirror(path, domains, nowMs, '0003_change_log_by_store');
  const migrationStarted = performance.now();
  await (await openMirror(path)).close();
  const migrationSeconds = (performance.now() - migrationStarted) / 1000;
  const fileMb = (await stat(path)).size / 2 ** 20;
  const loaded = loadConfig({ env: {}, cwd: dir, dbPath: path });
  if (loaded.config === null) throw new Error(loaded.errors.join('; '));
  const mirror = await openMirror(path, { readonly: true });
  try {
    const ui = await startUiServer({ mirror, config: loaded.config, now: () => nowMs });
    try {
      const pages: UiPageTiming[] = [];
      for (const { page, path: pagePath } of pagesOf(domains, nowMs)) {
        const first = await get(ui.origin, pagePath);
        if (first.status !== 200) throw new Error(`${pagePath}: HTTP ${first.status}`);
        const times: number[] = [];
        for (let i = 0; i < repeats; i++) times.push((await get(ui.origin, pagePath)).ms);
        pages.push({
          page,
          path: pagePath,
          status: first.status,
          bytes: first.bytes,
          firstMs: round(first.ms),
          ...medianAndMax(times),
        });
      }
      const statusReads = timeStatusReads(mirror, repeats);
      return {
        licences: generated.licences,
        domains: generated.domains,
        paymentMethods: generated.paymentMethods,
        changes: generated.changes,
        generateSeconds: generated.seconds,
        fileMb: Math.round(fileMb),
        migrationSeconds: round(migrationSeconds),
        startupCountSeconds: round(ui.startupCountMs / 1000),
        pages,
        statusReads,
      };
    } finally {
      await ui.close();
    }
  } finally {
    await mirror.close();
  }
}

/**
 * What `status` reads of the mirror (src/cli/commands/status.ts): the counts, the freshness, and
 * one destination's rows behind, that destination having published every table up to the
 * mirror's change counter now (as after a nightly publish). Once to warm the cache, then
 * `repeats` times.
 */
function timeStatusReads(mirror: Mirror, repeats: number): UiMirrorResult['statusReads'] {
  const once = (): number => {
    const started = performance.now();
    mirrorCounts(mirror);
    freshness(mirror);
    const { changeSeq } = changeState(mirror);
    rowsChangedSince(mirror, Object.fromEntries(PUBLISH_TABLES.map((t) => [t, changeSeq])));
    return performance.now() - started;
  };
  const firstMs = once();
  const times: number[] = [];
  for (let i = 0; i < repeats; i++) times.push(once());
  return { page: 'status', firstMs: round(firstMs), ...medianAndMax(times) };
}

/** The median and the slowest of timed repeats, rounded as reported. */
function medianAndMax(times: number[]): Pick<UiPageTiming, 'medianMs' | 'maxMs'> {
  const sorted = [...times].sort((a, b) => a - b);
  return {
    medianMs: round(sorted[Math.floor(sorted.length / 2)] as number),
    maxMs: round(sorted[sorted.length - 1] as number),
  };
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}

/** Runs the benchmark on a mirror of `licences` licences and one of 10,000 (the baseline). */
export async function runUiBench(
  options: { licences?: number; repeats?: number } = {},
): Promise<UiBenchResult> {
  const repeats = options.repeats ?? 9;
  const dir = await mkdtemp(join(tmpdir(), 'ui-bench-'));
  // A fixed "now" on a whole second, so both mirrors and every page see the same dates.
  const nowMs = Math.floor(Date.now() / 1000) * 1000;
  try {
    const small = await measureMirror(dir, 10_000, repeats, nowMs);
    const big = await measureMirror(dir, options.licences ?? 1_000_000, repeats, nowMs);
    return { name: 'ui', repeats, targetMs: TARGET_MS, big, small };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The report's lines: one per page, then the start-up costs. */
export function benchFigures(r: UiBenchResult): Array<Omit<BenchFigure, 'bench'>> {
  const size = `${r.big.licences.toLocaleString('en')} licences`;
  const figures: Array<Omit<BenchFigure, 'bench'>> = r.big.pages.map((p) => {
    const base = r.small.pages.find((s) => s.path === p.path || s.page === p.page);
    return {
      figure: `${p.page} (\`${p.path.length > 60 ? `${p.path.slice(0, 57)}…` : p.path}\`), ${size}: median (slowest of ${r.repeats})`,
      value: `${p.medianMs} ms (${p.maxMs} ms)`,
      baseline: base ? `${base.medianMs} ms on ${r.small.licences.toLocaleString('en')} licences` : '–',
      ratio: base ? String(Math.round((p.medianMs / Math.max(0.1, base.medianMs)) * 100) / 100) : '–',
      target: `slowest < ${r.targetMs} ms`,
      met: p.maxMs < r.targetMs,
    };
  });
  figures.push(
    {
      figure: `\`status\`'s reads of the mirror (counts, freshness, rows behind a destination), ${size}: median (slowest of ${r.repeats})`,
      value: `${r.big.statusReads.medianMs} ms (${r.big.statusReads.maxMs} ms)`,
      baseline: `${r.small.statusReads.medianMs} ms on ${r.small.licences.toLocaleString('en')} licences`,
      ratio: String(
        Math.round((r.big.statusReads.medianMs / Math.max(0.1, r.small.statusReads.medianMs)) * 100) / 100,
      ),
      target: `slowest < ${r.targetMs} ms`,
      met: r.big.statusReads.maxMs < r.targetMs,
    },
    {
      figure: `start-up: counting the change log for the charts (${r.big.changes.toLocaleString('en')} rows)`,
      value: `${r.big.startupCountSeconds} s`,
      baseline: `${r.small.startupCountSeconds} s for ${r.small.changes.toLocaleString('en')} rows`,
      ratio: String(
        Math.round((r.big.startupCountSeconds / Math.max(0.01, r.small.startupCountSeconds)) * 10) / 10,
      ),
      target: '-',
      met: null,
    },
    {
      figure: `first \`ui\` on a mirror of ${size} (${r.big.fileMb} MB) made before the dashboard: every later migration runs, the dashboard's indexes among them`,
      value: `${r.big.migrationSeconds} s`,
      baseline: `${r.small.migrationSeconds} s on ${r.small.licences.toLocaleString('en')} licences`,
      ratio: String(
        Math.round((r.big.migrationSeconds / Math.max(0.01, r.small.migrationSeconds)) * 10) / 10,
      ),
      target: '-',
      met: null,
    },
  );
  return figures;
}

/** Sentences under the table, computed from the result. */
export function benchNotes(r: UiBenchResult): string[] {
  const big = r.big;
  const slowest = [...big.pages].sort((a, b) => b.medianMs - a.medianMs).slice(0, 3);
  const others = big.pages.filter((p) => !slowest.includes(p));
  const msRange = (values: number[]): string =>
    values.length === 0 ? '–' : `${Math.min(...values)}–${Math.max(...values)} ms`;
  return [
    `The mirror: ${big.domains.toLocaleString('en')} domains (a raw profile of about 2 KB each), ` +
      `${big.licences.toLocaleString('en')} licences, ${big.paymentMethods.toLocaleString('en')} payment methods, ` +
      `${big.changes.toLocaleString('en')} change_log rows (a first sync's "added" rows plus 90 days of changes), ` +
      `${big.fileMb} MB, generated in ${big.generateSeconds} s by bench/ui-mirror.ts. Each page is requested once to ` +
      `warm the page cache, then ${r.repeats} times one after the other, over loopback HTTP from the same process; ` +
      'the target is on the slowest of those.',
    `Slowest pages by median: ${slowest.map((p) => `${p.page} ${p.medianMs} ms`).join(', ')}. A name search that ` +
      'matches few domains walks the whole name index (domain and company name of every domain), so it grows with ' +
      'the number of domains; the Overview counts whole indexes (payment methods) and walks the last_enriched_at ' +
      'index once for the freshness histogram. Every other page reads a bounded number of index entries, ' +
      'so its time does not grow with the mirror: ' +
      `${msRange(others.map((p) => p.medianMs))} by median here, against ` +
      `${msRange(others.flatMap((p) => r.small.pages.find((s) => s.page === p.page)?.medianMs ?? []))} on the ` +
      `${r.small.licences.toLocaleString('en')}-licence mirror, which the bench measures first.`,
    `Before it listens, the server counts the change log for the charts (${big.startupCountSeconds} s here), and ` +
      `the first command on a mirror of this size made before the dashboard runs every later migration (${big.migrationSeconds} s), ` +
      'which builds the indexes of the dashboard (0004), of the sync and `status` (0008) and of `publish` (0009). ' +
      'Both happen once; later changes are counted incrementally.',
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  runUiBench({ licences: process.argv[2] ? Number(process.argv[2]) : undefined }).then(
    (result) => process.stdout.write(`${JSON.stringify(result, null, 2)}\n`),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
