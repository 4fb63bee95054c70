/**
 * What the sync benchmark (bench/sync.ts) reports: its figures for docs/benchmarks.md, and the
 * notes beside them, written from a run's result. Most of the notes are measurements made by hand
 * (dated in the text) that explain a figure: what was tried, and what it did.
 */
import type { BenchFigure } from './run.js';
import { fmt, markdownTable } from './stats.js';
// One round of a sync target point (loopback since 2026-11-27T04, the 10 ms points since 07:00).
import type { LatencyRound, SyncBenchResult } from './sync.js';
import { WRITER_COMMIT_AFTER_MS, WRITER_COMMIT_EVERY_PROFILES } from '../src/mirror/profile-writer.js';

type Rate = { profilesPerSecond: number; cpuUsPerProfile: number };
type Point = {
  latencyMs: number;
  domains: number;
  ratio: number;
  clientRatio: number;
  full: Rate;
  bareUndici: Rate;
  bareLoop: Rate;
  bareFetch?: Rate;
  fetchRatio?: number;
};
const pointName = (r: { concurrency: number }, p: Point): string =>
  `full sync of ${p.domains} domains, profiles/s, ` +
  (p.latencyMs > 0 ? `service ${p.latencyMs} ms away` : 'simulator on loopback, no latency') +
  ` (concurrency ${r.concurrency})`;
// The targets' baseline is the bare undici loop (bench/bare-undici-loop.ts); the bare client
// loop and the bare fetch loop (bench/bare-fetch-loop.ts) are reported beside it, untargeted,
// under the same name plus this suffix.
type Loop = 'undici' | 'client' | 'fetch';
const suffix = (loop: Loop): string => (loop === 'undici' ? '' : `, against the bare ${loop} loop`);
const baselineOf = (p: Point, loop: Loop): Rate | undefined =>
  loop === 'undici' ? p.bareUndici : loop === 'client' ? p.bareLoop : p.bareFetch;
const ratioOf = (p: Point, loop: Loop): number | undefined =>
  loop === 'undici' ? p.ratio : loop === 'client' ? p.clientRatio : p.fetchRatio;
// (f) of bench/sync.ts: the same loopback point on a smaller catalogue, served two ways.
const spellingFigure = (p: Point, served: string): BenchFigure => ({
  bench: 'sync',
  figure: `CPU per profile of a full sync of ${p.domains} domains, no latency, ${served}`,
  value: `${p.full.cpuUsPerProfile} µs`,
  baseline: `bare undici loop on the same service ${p.bareUndici.cpuUsPerProfile} µs`,
  ratio: fmt(p.full.cpuUsPerProfile / p.bareUndici.cpuUsPerProfile),
  target: '-',
  met: null,
});
const rateFigure = (
  r: { concurrency: number },
  p: Point,
  loop: Loop,
  target = '-',
  met: boolean | null = null,
): BenchFigure => ({
  bench: 'sync',
  figure: pointName(r, p) + suffix(loop),
  value: `${p.full.profilesPerSecond}/s`,
  baseline: `bare ${loop} loop ${baselineOf(p, loop)?.profilesPerSecond ?? '–'}/s`,
  // Three digits: 0.895 is not 0.9.
  ratio: fmt(ratioOf(p, loop) ?? Number.NaN, 3),
  target,
  met,
});
type RssRate = Rate & { peakRssMb: number; seconds: number };
// (g) of bench/sync.ts: the loopback point once on a large catalogue, untargeted.
const largeFigures = (
  r: { concurrency: number },
  p: Point & { full: RssRate; bareUndici: RssRate },
): BenchFigure[] => [
  {
    ...rateFigure(r, p, 'undici'),
    value: `${p.full.profilesPerSecond}/s (${p.full.seconds} s)`,
    baseline: `bare undici loop ${p.bareUndici.profilesPerSecond}/s (${p.bareUndici.seconds} s)`,
  },
  // measureAtLatency runs the bare client loop at every point; report it here too.
  rateFigure(r, p, 'client'),
  {
    bench: 'sync',
    figure: `CPU per profile of a full sync of ${p.domains} domains, no latency`,
    value: `${p.full.cpuUsPerProfile} µs`,
    baseline: `bare undici loop ${p.bareUndici.cpuUsPerProfile} µs`,
    ratio: fmt(p.full.cpuUsPerProfile / p.bareUndici.cpuUsPerProfile),
    target: '-',
    met: null,
  },
  {
    bench: 'sync',
    figure: `peak RSS of a full sync of ${p.domains} domains, no latency`,
    value: `${p.full.peakRssMb} MB`,
    baseline: `bare undici loop ${p.bareUndici.peakRssMb} MB`,
    ratio: fmt(p.full.peakRssMb / p.bareUndici.peakRssMb),
    target: '-',
    met: null,
  },
];

/** Figures of a sync bench run for docs/benchmarks.md: each target beside its same-run baseline. */
export function syncFigures(r: SyncBenchResult): BenchFigure[] {
  const loopbackPoint: Point = {
    latencyMs: 0,
    domains: r.domains,
    ratio: r.loopbackRatio,
    clientRatio: r.loopbackClientRatio,
    full: r.full,
    bareUndici: r.bareUndici,
    bareLoop: r.bareLoop,
    ...(r.bareFetch === undefined ? {} : { bareFetch: r.bareFetch, fetchRatio: r.loopbackFetchRatio! }),
  };
  const cpuRatios = { undici: r.cpuRatio, client: r.cpuClientRatio, fetch: r.cpuFetchRatio };
  const cpuFigure = (loop: Loop, target = '-', met: boolean | null = null): BenchFigure => ({
    bench: 'sync',
    figure: `CPU per profile of the sync process, no latency${suffix(loop)}`,
    value: `${r.full.cpuUsPerProfile} µs`,
    baseline: `bare ${loop} loop ${baselineOf(loopbackPoint, loop)?.cpuUsPerProfile ?? '–'} µs`,
    ratio: fmt(cpuRatios[loop] ?? Number.NaN),
    target,
    met,
  });
  // The bare fetch loop's figures, at the points that ran it (results before 2026-11-30 have none).
  const fetchFigures: BenchFigure[] = [
    ...(r.remoteHigh.bareFetch ? [rateFigure(r.remoteHigh, r.remoteHigh, 'fetch')] : []),
    ...(r.bareFetch ? [rateFigure(r, loopbackPoint, 'fetch'), cpuFigure('fetch')] : []),
  ];
  /** The bare undici loop plus `insertsUs` of plain INSERTs: a floor under the CPU figure. */
  const floorFigure = (figure: string, insertsUs: number, ratio: number): BenchFigure => ({
    bench: 'sync',
    figure,
    value: `${r.bareUndici.cpuUsPerProfile + insertsUs} µs`,
    baseline: `bare undici loop ${r.bareUndici.cpuUsPerProfile} µs`,
    ratio: fmt(ratio),
    target: '-',
    met: null,
  });
  return [
    rateFigure(r, r.remote, 'undici', '≥ 0.9', r.meetsTargets.ratio),
    rateFigure(r.remoteHigh, r.remoteHigh, 'undici', '≥ 0.9', r.meetsTargets.ratioHigh),
    ...(r.sweep as Point[]).map((p) => rateFigure(r, p, 'undici')),
    rateFigure(r, loopbackPoint, 'undici', '≥ 0.5', r.meetsTargets.loopbackRatio),
    rateFigure(r, r.remote, 'client'),
    rateFigure(r.remoteHigh, r.remoteHigh, 'client'),
    rateFigure(r, loopbackPoint, 'client'),
    {
      bench: 'sync',
      figure: `incremental run after ${r.incremental.changed} of ${r.domains} domains changed: profile requests`,
      value: String(r.incremental.profileRequests),
      baseline: `${r.incremental.changed} changed (+ ${r.incremental.listingPages} listing pages)`,
      ratio: fmt(r.incremental.requestRatio),
      target: '≤ 1.05',
      met: r.meetsTargets.requestRatio,
    },
    cpuFigure('undici', '≤ 2.5', r.meetsTargets.cpuRatio),
    cpuFigure('client'),
    ...fetchFigures,
    ...(r.spellings
      ? [
          spellingFigure(r.spellings.canonical, SERVED_CANONICAL),
          spellingFigure(r.spellings.quirks, SERVED_QUIRKS),
        ]
      : []),
    {
      bench: 'sync',
      figure:
        `full sync of ${r.domains} domains with its profile writes discarded, profiles/s, ` +
        `service ${r.remoteHigh.latencyMs} ms away (concurrency ${r.remoteHigh.concurrency})`,
      value: `${r.withoutProfileWrites.high.profilesPerSecond}/s`,
      baseline: `bare undici loop ${r.remoteHigh.bareUndici.profilesPerSecond}/s`,
      ratio: fmt(r.withoutProfileWrites.high.ratio, 3),
      target: '-',
      met: null,
    },
    {
      bench: 'sync',
      figure: 'CPU per profile of the sync process with its profile writes discarded, no latency',
      value: `${r.withoutProfileWrites.loopback.cpuUsPerProfile} µs`,
      baseline: `bare undici loop ${r.bareUndici.cpuUsPerProfile} µs`,
      ratio: fmt(r.withoutProfileWrites.loopback.cpuRatio),
      target: '-',
      met: null,
    },
    {
      bench: 'sync',
      figure: `the mirror writes alone (${r.writerFloor.rowsPerProfile} rows per profile), no HTTP, no threads, CPU per profile`,
      value: `${r.writerFloor.writerAloneUsPerProfile} µs (the sync's store functions, indexes built after)`,
      baseline: `plain prepared INSERTs of the same rows, indexes built after ${r.writerFloor.bareSqliteUsPerProfile} µs`,
      ratio: fmt(r.writerFloor.writerAloneUsPerProfile / r.writerFloor.bareSqliteUsPerProfile),
      target: '-',
      met: null,
    },
    {
      bench: 'sync',
      figure:
        "the sync's store functions alone (as above) into an empty mirror, its secondary indexes set aside and built after, as a first sync now does",
      value: `${r.writerFloor.writerAloneUsPerProfile} µs`,
      baseline: `the same with every index kept up to date row by row ${r.writerFloor.writerAloneIndexedUsPerProfile} µs`,
      ratio: fmt(r.writerFloor.writerAloneUsPerProfile / r.writerFloor.writerAloneIndexedUsPerProfile),
      target: '-',
      met: null,
    },
    {
      bench: 'sync',
      figure:
        "the sync's store functions alone (as above) into a mirror of 8 KiB pages, what openMirror now creates",
      value: `${r.writerFloor.writerAloneUsPerProfile} µs`,
      baseline: `the same into a mirror of 4 KiB pages ${r.writerFloor.writerAlone4KiBUsPerProfile} µs`,
      ratio: fmt(r.writerFloor.writerAloneUsPerProfile / r.writerFloor.writerAlone4KiBUsPerProfile),
      target: '-',
      met: null,
    },
    {
      bench: 'sync',
      figure: `the sync's store functions alone (as above), committed every ${WRITER_COMMIT_EVERY_PROFILES.toLocaleString('en-US')} profiles as the writer thread now commits`,
      value: `${r.writerFloor.writerAloneUsPerProfile} µs`,
      baseline: `the same committed after every listing page and 1,000 profiles ${r.writerFloor.writerAlonePerBatchUsPerProfile} µs`,
      ratio: fmt(r.writerFloor.writerAloneUsPerProfile / r.writerFloor.writerAlonePerBatchUsPerProfile),
      target: '-',
      met: null,
    },
    ...keyOrderFigures(r.writerFloor),
    floorFigure(
      'lowest CPU per profile a sync writing these rows can have: bare undici loop + plain INSERTs (indexes built after)',
      r.writerFloor.bareSqliteUsPerProfile,
      r.writerFloor.lowestCpuRatio,
    ),
    floorFigure(
      "lowest CPU per profile a sync keeping the contract's tables alone can have: bare undici loop + plain INSERTs of the contract's columns (no profile_extra, no bookkeeping columns, keys only)",
      r.writerFloor.bareSqliteContractUsPerProfile,
      r.writerFloor.lowestContractCpuRatio,
    ),
    {
      bench: 'sync',
      figure: 'CPU per profile, no latency: sync process + simulator',
      value: `${r.full.cpuUsPerProfile} + ${r.full.simulatorCpuUsPerProfile} µs`,
      baseline: `bare undici loop ${r.bareUndici.cpuUsPerProfile} + ${r.bareUndici.simulatorCpuUsPerProfile} µs`,
      ratio: fmt(
        (r.full.cpuUsPerProfile + r.full.simulatorCpuUsPerProfile) /
          (r.bareUndici.cpuUsPerProfile + r.bareUndici.simulatorCpuUsPerProfile),
      ),
      target: '-',
      met: null,
    },
    ...(r.full.threadsUsPerProfile && r.bareUndici.threadsUsPerProfile
      ? [
          {
            bench: 'sync',
            figure: 'CPU per profile by thread, no latency: main / mirror writer / others',
            value: `${r.full.threadsUsPerProfile.main} / ${r.full.threadsUsPerProfile.busiestOther} / ${r.full.threadsUsPerProfile.rest} µs`,
            baseline: `bare undici loop ${r.bareUndici.threadsUsPerProfile.main} / – / ${r.bareUndici.threadsUsPerProfile.busiestOther + r.bareUndici.threadsUsPerProfile.rest} µs`,
            ratio: fmt(r.full.threadsUsPerProfile.main / r.bareUndici.threadsUsPerProfile.main),
            target: '-',
            met: null,
          },
        ]
      : []),
    {
      bench: 'sync',
      figure: 'peak RSS of the full sync, no latency',
      value: `${r.full.peakRssMb} MB`,
      baseline: `bare undici loop ${r.bareUndici.peakRssMb} MB`,
      ratio: fmt(r.full.peakRssMb / r.bareUndici.peakRssMb),
      target: '< 300 MB',
      met: r.meetsTargets.peakRss,
    },
    ...(r.large === undefined ? [] : largeFigures(r, r.large)),
  ];
}

/**
 * The floor's writes in domain order against listing order (bench/sync-writer-floor.ts, the
 * key-order modes; results before 2026-11-29 have none): what the order of the writes is worth.
 */
function keyOrderFigures(floor: SyncBenchResult['writerFloor']): BenchFigure[] {
  const pairs: Array<[string, number, number | undefined]> = [
    [
      "the sync's store functions alone (as above)",
      floor.writerAloneUsPerProfile,
      floor.writerAloneKeyOrderUsPerProfile,
    ],
    [
      'plain prepared INSERTs of the same rows (as above)',
      floor.bareSqliteUsPerProfile,
      floor.bareSqliteKeyOrderUsPerProfile,
    ],
  ];
  return pairs.flatMap(([what, listingOrder, keyOrder]) =>
    keyOrder === undefined
      ? []
      : [
          {
            bench: 'sync',
            figure: `${what}, the profiles written in domain order, as if the service listed them sorted`,
            value: `${keyOrder} µs`,
            baseline: `the same in listing order ${listingOrder} µs`,
            ratio: fmt(keyOrder / listingOrder),
            target: '-',
            met: null,
          },
        ],
  );
}

/** The notes under the sync figures: how each is measured, and what was tried on the missed ones. */
export function syncNotes(r: SyncBenchResult): string[] {
  const notes = [
    ...inShortNote(r),
    'The baseline of every sync target is a bare undici loop (bench/bare-undici-loop.ts): it pages through ' +
      'the listing and, while it does, fetches the profiles listed so far with `undici.request` and parses ' +
      "each as JSON, on the same number of lanes, on plain `node` with Node's own heap settings, as a user " +
      'would write it by hand; nothing is validated or kept. Its clock runs from the first listing request ' +
      "to the last profile, as the sync's does (before 2026-11-27 the baselines listed first and timed only " +
      "the profile fetches, while the sync's clock ran through its listing: the baselines' rates left out " +
      'work the sync was timed doing). The bare client loop (our own client: responses validated, nothing ' +
      'written), the baseline here until 2026-11-26, is reported beside it: in this run it cost ' +
      `${r.bareLoop.cpuUsPerProfile} µs of CPU per profile with no latency, the undici loop ` +
      `${r.bareUndici.cpuUsPerProfile} µs. Against the client loop the sync's ratios were ` +
      [
        {
          where: `with the service ${r.remote.latencyMs} ms away at concurrency ${r.concurrency}`,
          kinder: r.remote.clientRatio > r.remote.ratio,
        },
        {
          where: `at concurrency ${r.remoteHigh.concurrency}`,
          kinder: r.remoteHigh.clientRatio > r.remoteHigh.ratio,
        },
        { where: 'on loopback', kinder: r.loopbackClientRatio > r.loopbackRatio },
        // Lower is better for CPU.
        { where: 'for CPU per profile', kinder: r.cpuClientRatio < r.cpuRatio },
      ]
        .map(({ where, kinder }) => `${kinder ? 'kinder' : 'harsher'} ${where}`)
        .join(', ') +
      '. ' +
      'In the before/after table at the end of this page, the older sync ratios were against the client loop. ' +
      fetchLoopNote(r) +
      baselineRunsNote(r) +
      roundsNote(r) +
      simulatorSpeedNote(r),
    `Target (a) is judged with the service ${r.remote.latencyMs} ms away: the simulator delays every ` +
      'request by a timer, for the bare undici loop and the sync alike. The service is remote, so each ' +
      "request waits for a round trip and the service's own work, which do not use this machine's CPU; " +
      `${r.remote.latencyMs} ms is a fast same-region API, chosen before measuring. There the full sync keeps ` +
      `${fmt(r.remote.ratio)} of the bare undici loop's rate (${r.remote.full.profilesPerSecond} against ` +
      `${r.remote.bareUndici.profilesPerSecond} profiles/s)` +
      (r.meetsTargets.ratio
        ? ': the mirror is not the bottleneck.'
        : `, under the ${r.targets.ratioMin} target; against the bare client loop ` +
          `${fmt(r.remote.clientRatio, 3)} (0.93 on 2026-11-25 on an AMD EPYC machine, when that loop took 82 µs of CPU per ` +
          `profile with no latency; ${r.bareLoop.cpuUsPerProfile} µs in this run). The run is not short of ` +
          `CPU there: the sync and the simulator used ${fmt(((r.remote.full.cpuUsPerProfile + r.remote.full.simulatorCpuUsPerProfile) * r.remote.full.profilesPerSecond) / 1e4 / r.cores, 0)} % ` +
          `of the ${r.cores} cores. What each request waits for is the sync's main thread: its work per ` +
          `profile (${r.remote.full.threadsUsPerProfile?.main ?? '–'} µs of CPU on the main thread, the undici ` +
          `loop's ${r.remote.bareUndici.threadsUsPerProfile?.main ?? '–'} µs) and its garbage-collection pauses ` +
          '(below), during which every response in flight waits. With eight lanes and 10 ms per round ' +
          "trip, each millisecond a response waits costs about a tenth of a lane's rate. The CLI's " +
          '`--v8-pool-size=0` (operations.md) is not the cause: in alternating runs on 2026-11-26 (40,000 ' +
          'domains, 10 ms, concurrency 8) the sync made 606, 609 and 592 profiles/s with it and 604, 605 ' +
          'and 597 without it.'),
  ];
  // Both processes share the machine's cores, so CPU per profile bounds the rate.
  const perProfile = r.full.cpuUsPerProfile + r.full.simulatorCpuUsPerProfile;
  const ceiling = (r.cores * 1e6) / perProfile;
  notes.push(
    `With no latency the figure measures CPU, not the mirror: this machine has ${r.cores} cores, shared by ` +
      `the simulator and the measured process, and the bare undici loop alone keeps them ` +
      `${fmt(((r.bareUndici.cpuUsPerProfile + r.bareUndici.simulatorCpuUsPerProfile) * r.bareUndici.profilesPerSecond) / 1e4 / r.cores, 0)} % busy. ` +
      `A profile costs the full sync ${r.full.cpuUsPerProfile} µs of CPU in its own process (the bare undici ` +
      `loop ${r.bareUndici.cpuUsPerProfile} µs) plus ${r.full.simulatorCpuUsPerProfile} µs in the simulator, so ` +
      `even with every core busy the sync cannot exceed ${Math.round(ceiling)} profiles/s there, ` +
      `${fmt(ceiling / r.bareUndici.profilesPerSecond)} of the bare undici loop. The 0.5 target on loopback needs the ` +
      `sync process under about ${Math.round((r.cores * 1e6) / (0.5 * r.bareUndici.profilesPerSecond)) - r.full.simulatorCpuUsPerProfile} µs ` +
      `per profile, its SQLite writes included (beside the simulator's ${r.full.simulatorCpuUsPerProfile} µs).`,
  );
  const t = r.full.threadsUsPerProfile;
  const bare = r.bareUndici.threadsUsPerProfile;
  if (t && bare) {
    const ownCeiling = 1e6 / Math.max(t.main, t.busiestOther);
    notes.push(
      `Where the CPU goes: the sync fetches on its main thread (${t.main} µs per profile; the bare undici loop's main ` +
        `thread ${bare.main} µs) and writes the mirror on a writer thread (${t.busiestOther} µs per profile: the ` +
        'domain row, on average 1.6 licences, 4.5 payment methods and 4 sections, with no change_log rows since ' +
        "a first sync is the mirror's baseline (src/mirror/store/baseline.ts); into " +
        'an empty mirror without the indexes of the licence, payment-method and change_log tables and five ' +
        'of the domain indexes, which the ' +
        `main thread builds once the rows are in, in the main thread's figure); ${t.rest} µs go to other threads (V8's and libuv's helper threads; garbage ` +
        'collection runs more often there because the CLI keeps each heap within 1.6× its live size and ' +
        `its young generation small to hold peak RSS down: src/util/heap-growth.ts). The writer thread ` +
        `caps a sync at about ${Math.round(ownCeiling)} profiles/s whatever the service; the sweep above shows ` +
        'the ratio as the service gets closer.',
    );
  }
  const floor = r.writerFloor;
  const floorUs = r.bareUndici.cpuUsPerProfile + floor.bareSqliteUsPerProfile;
  const loopbackBudgetUs =
    Math.round((r.cores * 1e6) / (0.5 * r.bareUndici.profilesPerSecond)) - r.full.simulatorCpuUsPerProfile;
  notes.push(
    `The floor under the CPU target: written again into an empty mirror with no HTTP and no threads, the same ` +
      `profiles cost the sync's store functions ${floor.writerAloneUsPerProfile} µs each, and plain prepared ` +
      `INSERTs of the same ${floor.rowsPerProfile} rows per profile into the same schema (the same indexes set ` +
      `aside and built after, every value computed beforehand) ${floor.bareSqliteUsPerProfile} µs. The bare undici loop plus those ` +
      `INSERTs alone is ${floorUs} µs per profile, ` +
      `${fmt(floor.lowestCpuRatio)}× the bare undici loop: ` +
      (floor.lowestCpuRatio > r.targets.cpuRatioMax
        ? `the ≤ ${r.targets.cpuRatioMax}× target is below what SQLite needs to write these rows, whatever the code around it` +
          (floorUs > loopbackBudgetUs
            ? `, and so is the 0.5 loopback target (${loopbackBudgetUs} µs, above). `
            : '. ') +
          'Meeting it needs fewer rows, columns or indexes per profile, which changes what the mirror keeps. '
        : `the ≤ ${r.targets.cpuRatioMax}× target is above it. `) +
      contractFloorSentence(r) +
      `The store functions cost ${fmt(floor.writerAloneUsPerProfile / floor.bareSqliteUsPerProfile)}× the plain ` +
      "INSERTs: upserts with their conflict checks, the stored-state reads, the listing pages' checks and " +
      'reads (their rows held until their profile writes each, as the writer thread does), the JSON and hash of each profile. All of these write into a mirror of 8 KiB pages, ' +
      'which openMirror gives every new mirror file (NEW_MIRROR_PAGE_SIZE in src/mirror/database.ts): a ' +
      "domain's row with the whole profile, as rows were kept before migration 0010, was about 2.6 KB, so a 4 KiB page held one. Into a mirror of 4 KiB " +
      `pages, as made before, the store functions cost ${floor.writerAlone4KiBUsPerProfile} µs per profile in ` +
      `this run (${fmt(floor.writerAloneUsPerProfile / floor.writerAlone4KiBUsPerProfile)}× of that with 8 KiB). ` +
      'An existing mirror keeps its page size. ' +
      'Into an empty mirror, a first sync drops the secondary indexes of the licence, payment-method and ' +
      'change_log tables (not their keys) and the five domain indexes whose keys it writes in no order ' +
      "(company and operator names, the service's and the listing's dates of enrichment, the name search), " +
      'writes the rows, and ' +
      'builds each of those indexes at the end from one sorted pass over its table ' +
      '(src/mirror/store/deferred-indexes.ts): each row inserted with its ' +
      'indexes in place is a B-tree insert into every index, mostly on pages not in the cache once the mirror ' +
      'is large. Each domain index is built from a scan of the widest table, which the run ends waiting for; ' +
      'until 2026-11-28 they all stayed (at 1,000,000 domains on loopback, one pair of runs that day, setting ' +
      'four of them aside took the writer thread from 182 to 146 µs per profile and the sync from 3,904 to 4,647 ' +
      'profiles/s; at 100,000 domains, concurrency 32 and 10 ms, it cost about 1 % of the rate; the fifth, the ' +
      "service's date of enrichment, joined them later that day: at 1,000,000 domains, three alternating pairs, " +
      'the writer thread used 141–148 against 155–175 µs per profile, the sync made 4,615–4,707 against ' +
      '3,768–4,318 profiles/s and wrote 27.4–27.7 against 34.9 GB to disk, two pairs). The other ' +
      'domain indexes stay: the sync reads one of them while it loads, and the rest take their keys in order ' +
      'or hold none of a first load. With every index kept up ' +
      `to date row by row, as before, the store functions cost ${floor.writerAloneIndexedUsPerProfile} µs per ` +
      'profile in this run. A sync into a mirror that has domains keeps its indexes: its writes are the few ' +
      'domains that changed. The writer thread keeps one transaction open across ' +
      `batches and commits it every ${WRITER_COMMIT_EVERY_PROFILES.toLocaleString('en-US')} profiles or ` +
      `${WRITER_COMMIT_AFTER_MS / 1000} s (src/mirror/profile-writer-worker.ts): each commit writes every page ` +
      'its transaction touched to the WAL, and on a large mirror each batch touches most pages of the ' +
      'indexes not keyed by domain (company, operator, timestamps; in a sync into a mirror that has domains, ' +
      'also jurisdictions and categories). Committed ' +
      'after every listing page and every 1,000 profiles, as before, the same store functions cost ' +
      `${floor.writerAlonePerBatchUsPerProfile} µs per profile in this run.` +
      ((): string => {
        const slower = [
          ...(floor.writerAloneUsPerProfile > floor.writerAlone4KiBUsPerProfile ? ['8 KiB pages'] : []),
          ...(floor.writerAloneUsPerProfile > floor.writerAlonePerBatchUsPerProfile
            ? [`the commit every ${WRITER_COMMIT_EVERY_PROFILES.toLocaleString('en-US')} profiles`]
            : []),
        ];
        return slower.length === 0
          ? ''
          : ` In this run ${slower.join(' and ')} measured slower in this single-threaded job than what ` +
              `${slower.length > 1 ? 'they' : 'it'} replaced. ${slower.length > 1 ? 'Both were' : 'It was'} ` +
              'chosen from measurements on 2026-11-25 (the list of what helped, below). Measured again in the ' +
              'threaded sync on 2026-11-27 (alternating ad hoc runs of 40,000 domains on loopback, three each), ' +
              '4 KiB pages and a commit every 1,000 profiles made no difference beyond the run-to-run spread ' +
              '(2,520–2,919 and 2,915–3,675 profiles/s against 2,684–3,644 with 8 KiB pages and a commit every ' +
              '4,000), so both stay as they are.';
      })(),
  );
  notes.push(CONTRACT_FLOOR_PARTS, FLOOR_EXPERIMENTS, QUIET_MACHINE_CHECK, CATALOGUE_SIZE_CHECK);
  if (r.large !== undefined) {
    const l = r.large;
    notes.push(
      `The ${l.domains.toLocaleString('en-US')}-domain point (bench/sync.ts (g)) is measured once, last, ` +
        'on a simulator of its own, as the loopback point is (the undici loop right before and right after ' +
        `the sync): the sync took ${l.full.seconds} s and made ${l.full.profilesPerSecond} profiles/s, ` +
        `${l.ratio} of the bare undici loop's ${l.bareUndici.profilesPerSecond}/s (its runs ` +
        `${l.bareUndiciRuns[0]} and ${l.bareUndiciRuns[1]}/s), at ${l.full.cpuUsPerProfile} µs of CPU per ` +
        `profile against ${l.bareUndici.cpuUsPerProfile} µs (${fmt(l.full.cpuUsPerProfile / l.bareUndici.cpuUsPerProfile)}×, ` +
        `${r.cpuRatio}× at ${r.domains.toLocaleString('en-US')} domains)` +
        (l.full.threadsUsPerProfile
          ? `; by thread, main ${l.full.threadsUsPerProfile.main}, writer ${l.full.threadsUsPerProfile.busiestOther}, ` +
            `others ${l.full.threadsUsPerProfile.rest} µs`
          : '') +
        `. Its peak RSS was ${l.full.peakRssMb} MB, the bare undici loop's ${l.bareUndici.peakRssMb} MB. ` +
        "The sync's time includes building the indexes set aside during the load, at its end.",
    );
  }
  const without = r.withoutProfileWrites;
  const withoutThreads = without.loopback.threadsUsPerProfile;
  const leftUs = Math.round(
    r.targets.cpuRatioMax * r.bareUndici.cpuUsPerProfile - without.loopback.cpuUsPerProfile,
  );
  notes.push(
    'The ceiling above the sync targets: the same full sync with its profiles acknowledged as ' +
      'written but neither handed to the writer thread nor written (listing pages and run stats still ' +
      `are; bench/sync-child.ts \`sync-discard-profiles\`). Since 2026-11-27 (evening) the profiles are parsed ` +
      `and validated on the writer thread, so this leaves that out too. At concurrency ${r.remoteHigh.concurrency} with the ` +
      `service ${r.remoteHigh.latencyMs} ms away it keeps ${fmt(without.high.ratio, 3)} of the bare undici loop's rate ` +
      `(${without.high.profilesPerSecond} against ${r.remoteHigh.bareUndici.profilesPerSecond} profiles/s; ` +
      `the full sync ${fmt(r.remoteHigh.ratio, 3)})` +
      (without.high.ratio < r.remoteHigh.ratio
        ? `: less than the full sync in the same run. This point is one run, and single runs at ${r.remoteHigh.latencyMs} ms ` +
          'move by up to 0.08 of the ratio on this shared machine (the rounds above). ' +
          DISCARDED_RECHECK
        : without.high.ratio < r.targets.ratioMin
          ? `, under the ${r.targets.ratioMin} target with no profile written at all. `
          : `: the profile writes cost the rest. `) +
      `With no latency it costs ${without.loopback.cpuUsPerProfile} µs of CPU per profile, ` +
      `${fmt(without.loopback.cpuRatio)}× the bare undici loop's (main thread ${withoutThreads?.main ?? '–'} µs; ` +
      "the other threads, the writer with the listing pages and V8's and libuv's helpers, " +
      `${withoutThreads ? withoutThreads.busiestOther + withoutThreads.rest : '–'} µs). ` +
      (leftUs > 0
        ? `The ≤ ${r.targets.cpuRatioMax}× target leaves ${leftUs} µs per profile for writing it to the ` +
          `mirror, against the ${floor.bareSqliteUsPerProfile} µs that plain INSERTs of its rows take` +
          (leftUs < floor.bareSqliteUsPerProfile
            ? ': the fetching side, with its HTTP, queueing and garbage collection, uses most ' +
              'of the budget before any profile is parsed or any row is written.'
            : '.')
        : `The fetching side alone is already above the ≤ ${r.targets.cpuRatioMax}× target, before any row ` +
          'is written.'),
  );
  notes.push(
    (r.meetsTargets.ratioHigh
      ? `Why concurrency ${r.remoteHigh.concurrency} at ${r.remoteHigh.latencyMs} ms is the hardest of the points with latency (it missed until a first sync stopped logging its licences and payment methods as added, below), though the writer thread is far from its cap: `
      : `Why concurrency ${r.remoteHigh.concurrency} at ${r.remoteHigh.latencyMs} ms misses while the writer thread is far from its cap: `) +
      `this machine has ${r.cores} cores, and the simulator (the service) runs on them too. While the writer thread ` +
      'works through a batch it holds one core, and the main thread, the simulator and the garbage ' +
      "collector's helpers share the other, so every request's round trip grows. Measured ad hoc on " +
      '2026-11-25 (40,000 domains, concurrency 32, 10 ms): the sync with its profile writes discarded ' +
      'made 2,407 profiles/s; with a thread added to it that does nothing but burn CPU half of each 100 ms ' +
      '(no SQLite, no memory traffic), 2,177/s; burning 90 % of the time, 1,991/s. The full sync with the ' +
      "same settings made 1,991–2,218/s in that day's runs, its writer thread using 220–269 µs of CPU per " +
      'profile: the writer costs what a thread burning that much CPU costs. Lowering its scheduling priority ' +
      '(nice 10 and 19) and other V8 garbage-collector settings changed nothing beyond run-to-run noise. ' +
      'Against a remote service the simulator would not share the cores. Setting the licence, ' +
      'payment-method and change_log indexes aside in a first sync (above) took the writer thread from ' +
      '234–239 to 174–177 µs of CPU per profile in alternating runs the same day (100,000 domains, ' +
      'concurrency 32, 10 ms), but the run then ends with about 1.6 s of index building, and the rate ' +
      'stayed where it was: 2,155–2,156 profiles/s against 2,169–2,190 with every index kept up to date. ' +
      'Setting every index aside took the writer to 164–174 µs, with 2.7 s of building at the end: ' +
      '1,984–1,985 profiles/s. Having the writer thread build them while the last 15 % of the profiles ' +
      'were fetched, instead of after the last one, ended the run sooner (0.9 s after its last fetch ' +
      'instead of about 3 s, 100,000 domains) but slowed the fetching of those profiles about as much: ' +
      'in alternating runs on 2026-11-25 it made 1,837, 1,893, 1,750, 1,699 and 1,625 profiles/s against ' +
      '1,727, 1,739, 1,784, 1,896 and 1,650 with the build at the end, so it was not kept. Where the ' +
      'rest of the gap was, from one CLI sync timed by its own log lines on 2026-11-27 before the change below (100,000 domains, ' +
      "concurrency 32, 10 ms): it fetched at about 2,140 profiles/s, 0.90 of the undici loop's 2,366/s " +
      "in that day's bench run, and after its last profile it took another 3.0 s, 6 % of its 50.7 s: " +
      'about 0.5 s for the writer thread to write its last batches (estimated from the rate in its ' +
      'progress log) and 2.3 s to build the 8 indexes set aside; a second run, timed at those points, ' +
      'took 0.34 s and 2.2 s. Setting aside only ' +
      'the 3 keyed by domain (whose entries a load scatters over the index) and keeping the 5 keyed by ' +
      'time, removal, jurisdiction or category up to date during the load (a first sync writes those ' +
      'in order) moved the build cost to the writer thread during the fetching: in alternating runs ' +
      'the same day (100,000 domains, three each) the writer took 256–274 against 220–256 µs per ' +
      'profile and the rate was 2,025–2,139 against 1,978–2,098 profiles/s, inside the spread, so it ' +
      "was not kept either. What moved it: a first sync became the mirror's baseline " +
      '(src/mirror/store/baseline.ts), writing its licences and payment methods without an `added` ' +
      'change_log row each, about 6 per domain. The writer thread has that many rows fewer to write, ' +
      'and the change_log indexes nothing to build at the end: of the build time of the 8 indexes ' +
      'set aside, the 4 of change_log took 64–70 % (two timed builds on a 40,000-domain mirror, ' +
      '2026-11-27). In alternating ad hoc runs the same day (100,000 domains, three each) the rate went ' +
      'from 1,923–2,064 to 2,057–2,164 profiles/s. How busy the ' +
      "machine's cores are moves this figure most: against the bare client loop it measured 0.863 on " +
      '2026-11-25 at 15:58 on an AMD EPYC machine, when that loop took 82 µs of CPU per profile; in this run it took ' +
      `${r.bareLoop.cpuUsPerProfile} µs and the ratio to it was ${fmt(r.remoteHigh.clientRatio, 3)}.`,
  );
  if (r.spellings) notes.push(spellingsNote(r.spellings));
  notes.push(
    `Where the sync's CPU goes (CPU profile of a full sync of ${SYNC_PROFILE.domains.toLocaleString('en-US')} domains, ` +
      `simulator on loopback, concurrency 8, ${SYNC_PROFILE.measured}; self time by what the code does, per profile, grouped by bench/sync-profile.ts):`,
    markdownTable(['thread', 'part', 'µs per profile'], SYNC_PROFILE.table),
    SYNC_PROFILE.reading,
    SYNC_GC_NOTE,
    SYNC_CPU_NOTE_LATE,
    SYNC_KEY_ORDER_NOTE,
    SYNC_START_UP_NOTE,
    SYNC_JIT_NOTE,
    SYNC_YOUNG_GENERATION_NOTE,
  );
  return notes;
}

/** The two target points with the service some ms away, as a sync result holds them. */
interface LatencyTargets<P> {
  concurrency: number;
  remote: P & { latencyMs: number };
  remoteHigh: P & { latencyMs: number; concurrency: number };
}

/** {@link LatencyTargets}' points with the name the notes give them ("at 10 ms and concurrency 8"). */
/**
 * The first note when a loopback target is missed: why, in a few sentences, from this run's
 * figures; the notes after it hold the measurements behind each sentence.
 */
function inShortNote(r: SyncBenchResult): string[] {
  if (r.meetsTargets.loopbackRatio && r.meetsTargets.cpuRatio) return [];
  const { writerFloor: floor, bareUndici: bare } = r;
  const allowed = r.targets.cpuRatioMax * bare.cpuUsPerProfile;
  // The floor rows of the table: the bare loop plus plain INSERTs alone.
  const rowsFloor = bare.cpuUsPerProfile + floor.bareSqliteUsPerProfile;
  const contractFloor = bare.cpuUsPerProfile + floor.bareSqliteContractUsPerProfile;
  return [
    '**In short.** ' +
      `The CPU target allows the sync ${fmt(allowed, 0)} µs per profile (${r.targets.cpuRatioMax} × the bare ` +
      `undici loop's ${bare.cpuUsPerProfile}); it uses ${r.full.cpuUsPerProfile}. The bare undici loop ` +
      'with nothing added but plain prepared INSERTs of the rows the mirror keeps per profile costs ' +
      `${rowsFloor} µs (${fmt(floor.lowestCpuRatio)}×), and with the contract's tables and columns alone ` +
      `${contractFloor} µs (${fmt(floor.lowestContractCpuRatio)}×). ` +
      (allowed > rowsFloor
        ? `That leaves ${fmt(allowed - rowsFloor, 0)} µs per profile`
        : 'That leaves nothing') +
      ' for what the sync does beyond fetching and inserting ' +
      `(${fmt(Math.max(0, allowed - contractFloor), 0)} µs with the contract's tables alone): reading, ` +
      'checking and converting each profile, deciding what changed, the bookkeeping a resumable, ' +
      `history-keeping mirror needs. That work costs the sync about ${fmt(r.full.cpuUsPerProfile - rowsFloor, 0)} µs. ` +
      `The loopback rate target is the same limit seen as a rate: on ${r.cores} cores shared with the ` +
      'simulator, the rate is set by the CPU per profile. Where the service is not on this machine, the ' +
      `sync keeps ${fmt(r.remote.ratio, 3)} and ${fmt(r.remoteHigh.ratio, 3)} of the bare loop's rate ` +
      `(service ${r.remote.latencyMs} ms away, concurrency ${r.concurrency} and ${r.remoteHigh.concurrency}), ` +
      'both targets met. ' +
      fetchLoopSentence(r) +
      'The notes below give the measurements: the floor rows of the table, where the ' +
      "sync's CPU goes, and each change tried, kept or not.",
  ];
}

/** How the bare fetch loop is run, and what it cost by hand, for the note on the baselines. */
function fetchLoopNote(r: SyncBenchResult): string {
  return (
    'The bare fetch loop (bench/bare-fetch-loop.ts) is the same loop sending each request with ' +
    "Node's built-in `fetch` and parsing it with `response.json()`, on plain `node`; it runs once, after " +
    `the client loop, on loopback and at ${r.remoteHigh.latencyMs} ms and concurrency ${r.remoteHigh.concurrency} ` +
    '(since 2026-11-30), and no target is judged against it' +
    (r.bareFetch
      ? `; in this run it cost ${r.bareFetch.cpuUsPerProfile} µs of CPU per profile with no latency. `
      : '. ') +
    'Measured by hand on 2026-11-30 from 03:08Z (an ad hoc script doing what the two loops do, 100,000 ' +
    'domains on loopback, concurrency 8, two alternating rounds): on Node 24.21.0 the fetch loop made ' +
    '6,040 and 6,252 profiles/s at 182 and 177 µs of CPU per profile, the undici loop 17,118 and 15,597 ' +
    'profiles/s at 51 and 58 µs; on Node 20.20.2 with undici 6, 4,262 and 4,253 profiles/s at 259 and ' +
    '262 µs against 15,247 and 12,377 profiles/s at 62 and 76 µs. '
  );
}

/**
 * The sync against the bare fetch loop (bench/bare-fetch-loop.ts), for the note "In short": empty
 * for results before 2026-11-30, which have no such loop.
 */
function fetchLoopSentence(r: SyncBenchResult): string {
  const fetchLoop = r.bareFetch;
  if (fetchLoop === undefined || r.loopbackFetchRatio === undefined) return '';
  const high = r.remoteHigh;
  return (
    "Against the same loop written with Node's built-in `fetch` (bench/bare-fetch-loop.ts), the way " +
    'most scripts call an HTTP API with nothing installed, the sync keeps ' +
    `${fmt(r.loopbackFetchRatio, 3)} of its rate on loopback (${r.full.profilesPerSecond} against ` +
    `${fetchLoop.profilesPerSecond} profiles/s) at ${fmt(r.cpuFetchRatio)}× its CPU per profile ` +
    `(${r.full.cpuUsPerProfile} against ${fetchLoop.cpuUsPerProfile} µs)` +
    (high.bareFetch && high.fetchRatio !== undefined
      ? `, and ${fmt(high.fetchRatio, 3)} of its rate with the service ${high.latencyMs} ms away at ` +
        `concurrency ${high.concurrency}`
      : '') +
    ': a hand-written loop that keeps nothing, if it uses `fetch`, ' +
    (r.loopbackFetchRatio >= 1
      ? 'is no faster than the sync. '
      : r.loopbackFetchRatio >= 0.95
        ? "runs at about the sync's rate on loopback. "
        : `is ${fmt(1 / r.loopbackFetchRatio)}× as fast as the sync on loopback. `)
  );
}

function latencyTargets<P>(r: LatencyTargets<P>): Array<{ name: string; point: P }> {
  return [
    { name: `at ${r.remote.latencyMs} ms and concurrency ${r.concurrency}`, point: r.remote },
    {
      name: `at ${r.remoteHigh.latencyMs} ms and concurrency ${r.remoteHigh.concurrency}`,
      point: r.remoteHigh,
    },
  ];
}

/** What {@link simulatorSpeedNote} reads of one point: the simulator's CPU per profile on each side. */
interface SimulatorCpu {
  full: { simulatorCpuUsPerProfile: number };
  bareUndici: { simulatorCpuUsPerProfile: number };
}

/**
 * The sync note on the simulator's CPU per profile at each target point with latency, during the
 * sync against during its baseline runs. The simulator serves the same listing and the same
 * profiles to both, and with the service 10 ms away neither side keeps the cores busy, so its CPU
 * per profile should match (on loopback the sync's own load competes with it, so that point is
 * left out); more than 15 % higher during the sync is a sign that the machine (shared, and its
 * speed swings) was slower while the sync ran. Empty when no point differs that much.
 */
function simulatorSpeedNote(r: LatencyTargets<SimulatorCpu>): string {
  const points = latencyTargets(r)
    .map(({ name, point: p }) => ({
      name,
      sync: p.full.simulatorCpuUsPerProfile,
      bare: p.bareUndici.simulatorCpuUsPerProfile,
    }))
    .filter(({ sync, bare }) => bare > 0 && sync > bare * 1.15);
  if (points.length === 0) return '';
  return (
    ' The simulator serves the same listing and profiles to the sync and to its baseline, so its CPU per ' +
    'profile should be the same on both sides; it was not ' +
    points
      .map(
        ({ name, sync, bare }) =>
          `${name} (${sync} µs per profile during the sync against ${bare} during the baseline runs, ` +
          `${Math.round((sync / bare - 1) * 100)} % more)`,
      )
      .join(', ') +
    ': a sign that the machine was slower while that sync ran, so its ratio says that much less about the code.'
  );
}

/** What {@link roundsNote} reads of a sync result: the rounds of each target point. */
interface TargetRounds extends LatencyTargets<{ rounds?: LatencyRound[] }> {
  loopbackRounds?: LatencyRound[];
}

/**
 * The sync note on the target points' rounds: each round's rate and CPU ratios, and which one the
 * figures are (empty for results without rounds: before 2026-11-27 every point ran once, and
 * before 2026-11-27T07:00Z the points with latency still did).
 */
function roundsNote(r: TargetRounds): string {
  const list = (rounds: LatencyRound[], pick: (x: LatencyRound) => number, digits: number): string =>
    rounds.map((x) => fmt(pick(x), digits)).join(', ');
  const loopback = r.loopbackRounds ?? [];
  const latencyPoints = latencyTargets(r)
    .map(({ name, point }) => ({ name, rounds: point.rounds ?? [] }))
    .filter((p) => p.rounds.length >= 2);
  let note = '';
  if (loopback.length >= 2)
    note +=
      ` On loopback the sync and its baseline's two undici loop runs are measured in ${loopback.length} rounds, one after ` +
      'another, because with no latency every run competes with whatever else this shared machine is doing; ' +
      `the loopback and CPU figures are the round with the median rate ratio. The rounds' rate ratios were ` +
      `${list(loopback, (x) => x.ratio, 3)}, their CPU ratios ${list(loopback, (x) => x.cpuRatio, 2)} ` +
      `(sync ${loopback.map((x) => `${x.syncProfilesPerSecond}/s at ${x.syncCpuUsPerProfile} µs`).join(', ')}; ` +
      `undici loop ${loopback.map((x) => `${x.bareUndiciRuns[0]} and ${x.bareUndiciRuns[1]}/s at ${x.bareUndiciCpuUsPerProfile} µs`).join(', ')}).`;
  if (latencyPoints.length > 0)
    note +=
      ' The target points with latency are measured in rounds too (single runs of them moved by up to 0.08 of the ' +
      "ratio from one bench run to the next), each reporting its round with the median ratio; the rounds' " +
      'ratios were ' +
      latencyPoints
        .map(
          ({ name, rounds }) =>
            `${list(rounds, (x) => x.ratio, 3)} ${name} (sync ${rounds.map((x) => `${x.syncProfilesPerSecond}/s`).join(', ')}; ` +
            `undici loop ${rounds.map((x) => `${x.bareUndiciRuns[0]} and ${x.bareUndiciRuns[1]}/s`).join(', ')})`,
        )
        .join(', ') +
      '.';
  return note;
}

/** What {@link baselineRunsNote} reads of a sync result: the undici loop's two runs at each point. */
interface BaselineRuns extends LatencyTargets<{ bareUndiciRuns?: [number, number] }> {
  bareUndiciRuns?: [number, number];
  sweep: Array<{ latencyMs: number; bareUndiciRuns?: [number, number] }>;
}

/**
 * The sync note on the bare undici loop's two runs at each point (results since 2026-11-27; empty
 * for older ones): both rates, and how far apart they were at a target's point when more than 10 %.
 */
function baselineRunsNote(r: BaselineRuns): string {
  const points = [
    { name: 'on loopback', target: true, runs: r.bareUndiciRuns },
    ...latencyTargets(r).map(({ name, point }) => ({ name, target: true, runs: point.bareUndiciRuns })),
    ...r.sweep.map((p) => ({
      name: `at ${p.latencyMs} ms and concurrency ${r.concurrency}`,
      target: false,
      runs: p.bareUndiciRuns,
    })),
  ].filter((p): p is { name: string; target: boolean; runs: [number, number] } => p.runs !== undefined);
  if (points.length === 0) return '';
  const spreads = points
    .filter((p) => p.target)
    .map(({ name, runs }) => ({
      name,
      pct: Math.round((Math.abs(runs[0] - runs[1]) / Math.min(...runs)) * 100),
    }))
    .filter(({ pct }) => pct > 10);
  return (
    'At each point the undici loop runs twice, right before the sync and right after it (the client loop runs after both), ' +
    'and the ratios are against the mean of the two, so that the machine getting faster or slower during ' +
    'a point (it is shared) weighs on both sides alike; in this run they made ' +
    points.map(({ name, runs }) => `${runs[0]} and ${runs[1]} profiles/s ${name}`).join(', ') +
    ' (before, after).' +
    (spreads.length === 0
      ? ''
      : " The two runs of a target's baseline differed by " +
        spreads.map(({ name, pct }) => `${pct} % ${name}`).join(', ') +
        ": that target's ratio is no surer than that.")
  );
}

/** How the service of each (f) point of bench/sync.ts spells what it sends. */
const SERVED_CANONICAL = "the service's timestamps all canonical (the simulator's default)";
const SERVED_QUIRKS =
  "the service using the spec's freedoms (the simulator's quirks mode: two timestamps in three " +
  'spelled `+00:00` or without milliseconds, unknown fields, nulls)';

/** What {@link spellingsNote} reads of a sync result's (f) points. */
interface SpellingPoint {
  domains: number;
  full: { cpuUsPerProfile: number };
  bareUndici: { cpuUsPerProfile: number };
  rounds?: Array<{ cpuRatio: number }>;
}

/** The sync note on what a service using the spec's freedoms costs (bench/sync.ts (f)). */
function spellingsNote(s: { canonical: SpellingPoint; quirks: SpellingPoint }): string {
  const cpu = (p: SpellingPoint): string =>
    `${p.full.cpuUsPerProfile} µs of CPU per profile against the bare undici loop's ` +
    `${p.bareUndici.cpuUsPerProfile} µs on the same service (${fmt(p.full.cpuUsPerProfile / p.bareUndici.cpuUsPerProfile)}×)`;
  const rounds = (p: SpellingPoint): string => (p.rounds ?? []).map((x) => fmt(x.cpuRatio)).join(', ');
  return (
    "What a service that uses the spec's freedoms costs: the spec says only that timestamps are ISO 8601 " +
    'UTC, which a service may spell `+00:00` or without milliseconds, and shows neither nulls nor fields ' +
    'we do not know, which a service may still send (docs/service-api.md "Timestamp spellings, nulls and ' +
    'unknown fields"). Served so by the ' +
    `simulator's quirks mode, a full sync of ${s.quirks.domains.toLocaleString('en-US')} domains on loopback ` +
    `cost ${cpu(s.quirks)}; served canonical timestamps, ${cpu(s.canonical)}. The rounds' CPU ratios were ` +
    `${rounds(s.quirks)} in quirks mode and ${rounds(s.canonical)} canonical (each round's sync between two ` +
    'runs of the undici loop, as at the target points). A profile carries about 14 timestamps, and the ' +
    'mirror stores each normalised to `YYYY-MM-DDTHH:MM:SS.sssZ` (src/util/time.ts). Until 2026-11-27 any ' +
    'other spelling, and a canonical one on the 29th to 31st of a month, went through `Date.parse` and ' +
    '`toISOString()` at 1.9–2.2 µs each; a UTC spelling is now checked by one pattern and rewritten from its ' +
    'own digits, 0.24–0.43 µs (alternating runs over 10,000 random instants spelled `+00:00`, Node 24, 2 ' +
    'Intel Xeon cores). In alternating CLI syncs of 20,000 domains in quirks mode that day (concurrency 8, ' +
    'seven each), the sync used 9.87–10.78 s of user CPU (median 10.32) against 9.69–11.97 s (median ' +
    "10.76) before: about 4 % less, within this shared machine's run-to-run spread. Since 2026-11-29 " +
    '(17:00Z) the mirror keeps in profile_extra, of a licence or payment-method item with fields its table ' +
    'has no column for, only its key and those fields, where it kept the whole list (docs/schema.md): in ' +
    'quirks mode every item has two, so every list was stored twice. In alternating CLI syncs of 20,000 ' +
    'domains in quirks mode that day (four pairs), the sync used 5.80–6.11 s of CPU (user and system) ' +
    'against 5.86–6.40 s and made a 91.9 MB mirror against 114.8 MB (a canonical catalogue, 71.7 MB); one ' +
    "CPU profile of each put the writer thread's commits and checkpoints at 19 µs per profile against 28 " +
    '(a canonical sync, 17). The target point a remote service stands for, measured by hand in quirks ' +
    'mode on 2026-11-29 at 22:30Z (100,000 domains, service 10 ms away, concurrency 32, each sync between ' +
    'two runs of the bare undici loop on the same service, two rounds alternating with a canonical ' +
    'catalogue): 0.964 and 0.951 of the bare undici loop in quirks mode, 0.981 and 0.978 canonical.'
  );
}

const SYNC_PROFILE = {
  domains: 20_000,
  measured:
    "measured 2026-11-28T11:34Z on 2 Intel Xeon cores, into an empty mirror: the mirror's baseline (no change_log rows), with the licence, payment-method and change_log indexes and five of the domain indexes set aside during the load, the profiles handed to the writer as their response texts unparsed, the writer thread parsing and validating each with the compiled response schemas (z.compile), new domains' listing rows held until their profile writes them, the request limiter and the task queue without p-queue and the writer thread at a lower priority",
  table: [
    ['main', 'HTTP (undici, sockets)', '43'],
    ['main', "SQLite: building the indexes set aside, at the end; the listing's mirror reads", '22'],
    ['main', 'garbage collection', '21'],
    ['main', 'other (program, V8, Node internals)', '15'],
    ['main', 'start-up (module loading)', '10'],
    ['main', 'promises, events, abort signals, timers', '7'],
    ['main', 'our client: reading and parsing response bodies, retries, the request limiter', '4'],
    ['main', 'response validation (zod, with its timestamp pattern)', '2'],
    ['main', 'handing batches to the writer thread', '2'],
    ['main', 'listing: classifying pages, run bookkeeping', '2'],
    ['main', 'task queue (src/runtime/queue.ts)', '1'],
    ['writer', 'SQLite: domain and section upserts', '47'],
    ['writer', 'SQLite: licence and payment-method upserts', '41'],
    ['writer', 'validation (zod, with its timestamp pattern), timestamps, JSON of the sections', '25'],
    ['writer', 'SQLite: BEGIN/COMMIT, checkpoints (includes waiting for fsync)', '25'],
    ['writer', 'parsing the profile texts', '15'],
    ['writer', 'garbage collection', '10'],
    ['writer', 'start-up (module loading)', '9'],
    ['writer', 'program, message passing, other', '7'],
    ['writer', 'SHA-1 of each profile', '6'],
    ['writer', 'SQLite: listing rows', '6'],
  ] as ReadonlyArray<readonly [string, string, string]>,
  reading:
    'The profile samples wall time, so its totals run above the CPU figures in the table at the top: a ' +
    'thread waiting for a core is sampled too, and "HTTP" includes the socket writes, whose system calls on ' +
    'loopback also deliver each request into the simulator (profiled the same way with the service 10 ms ' +
    'away on 2026-11-26, the socket writes took 166 µs of wall time per profile in the bare undici loop ' +
    'and 124 µs in the sync with its profile writes discarded: mostly waiting for a core). ' +
    'Statements of better-sqlite3 are native calls, so the SQLite rows are the self time of the store ' +
    'functions that run them. The writer thread was idle 36 µs per profile (the main thread 119 µs: on ' +
    'loopback it waits for the writer), and most of its busy time (119 of 191 µs) ' +
    'is SQLite itself: each row of a new domain (the domain, 1.6 licences, 4.5 payment methods, 4 sections; no ' +
    'change_log rows, since a first sync is the baseline) is a B-tree insert into its table, and the domain row one ' +
    "into each of the domain indexes it keeps (the other tables' indexes and five of the domain ones are " +
    'built at the end). A second profile a minute after this one agreed with it within 11 µs per row. The ' +
    'profile of 08:46Z the same day, before the fifth domain index was set aside (which at 20,000 domains ' +
    'makes no difference beyond the spread; at 1,000,000 it does, above), had the domain and section upserts ' +
    'at 50 µs per profile, the licence and payment-method upserts at 44, the commits at 20 and the validation ' +
    "at 19: the machine ran faster then (the floor's plain INSERTs took 80 µs per profile in the bench run " +
    'before that profile, 88 in the one before this). ' +
    'Against the profile of 01:24Z, before four of the domain indexes were set aside, that of 08:46Z had the ' +
    "writer's domain and section upserts down from 56 to 50 µs per profile and its commits and checkpoints " +
    "from 25 to 20, and the main thread's row for the build at the end up from 12 to 18. In the profile of " +
    '2026-11-27T03:00Z, before the baseline, the licence and payment-method upserts with their change_log rows ' +
    'took 83 µs per profile of 263 on the writer thread (32 %); in that of 17:31Z the same day, after it, 74 of ' +
    '309 (24 %); in that of 01:24Z on 2026-11-28, 38 of 186 (20 %); here 41 of 191. Between the profile of ' +
    '17:31Z (busy per profile: writer 309 µs, main 214) and that of 01:24Z every row fell, also rows of code ' +
    'that no change between them touched: the licence and ' +
    "payment-method upserts from 74 to 38, the main thread's HTTP (undici) from 76 to 39. The machine was " +
    'that much faster at 01:24Z, so the two profiles cannot tell what each change was worth (the ' +
    "alternating runs under 'What helped' below do). The rows those changes touched: the writer's listing " +
    "rows 25 → 6 and its domain and section upserts 82 → 56 (a new domain's row written once, with its " +
    'listing columns held until its profile), its validation 35 → 20 (the compiled response schemas), and ' +
    "the main thread's task queue 7 → 1 and garbage collection 40 → 18 (the task queue without p-queue). " +
    'Profiles a minute apart agree within 4–11 µs per row; runs hours apart differ more ' +
    '(below). In the profile of 11:38Z on 2026-11-27, before the writer thread parsed and validated the ' +
    'profiles, the main thread spent 27 µs per profile in its client row (reading and parsing bodies, retries, ' +
    'the limiter) and 10 validating, the writer 17 parsing the texts; here the main thread spends 4 and 2 (the ' +
    'listing pages are still parsed and validated there), and the writer 15 parsing. ' +
    "The profile covers the main and writer threads only. The sync's other threads (the table at the top) " +
    "are V8's: sampling /proc's per-thread CPU by thread name in one run of this sync (2026-11-28T01:14Z, 20,000 domains, " +
    "loopback), all of it, 1,240 ms (62 µs per profile), was V8's worker thread, against 530 ms in the bare " +
    'undici loop; with `--single-threaded-gc` 730 ms stayed there, and with `--no-concurrent-recompilation` ' +
    "580 ms: garbage-collection helpers and background compilation of both threads' code in about equal " +
    'parts (single runs each; a sync of 100,000 domains spreads the compilation over five times the profiles). ' +
    'Tried on the store functions alone and not kept (20,000 profiles, no HTTP, three alternating pairs ' +
    'each, 2026-11-28): foreign keys off on the writer connection, 107–116 against 109–112 µs per profile; ' +
    'the licence and payment-method tables WITHOUT ROWID, 126–129 against 112–122, and with domain_sections ' +
    'too, 134–143 against 116–123. Also not kept: the writer thread checkpointing every ~400 MB of WAL instead ' +
    'of ~40 MB (2026-11-28, alternating full syncs). At 1,000,000 domains on loopback (two pairs) it wrote ' +
    '22.0 and 22.0 GB to disk against 27.5 and 27.6, and made 5,181 and 5,219 against 5,011 and 4,629 ' +
    'profiles/s; at 100,000 domains on loopback (three pairs) 5,915–5,978 against 5,727–5,827 profiles/s. ' +
    'But at 100,000 domains, concurrency 32 and 10 ms it was slower in each of three pairs, 2,419–2,461 ' +
    'against 2,447–2,495 profiles/s: a longer checkpoint holds the writer longer, and the fetching lanes ' +
    'wait for it. Every ~120 MB, the middle, was kept (WRITER_AUTOCHECKPOINT_BYTES in ' +
    'src/mirror/checkpointer.ts; 2026-11-28, alternating full syncs against ~40 MB): at 100,000 domains on ' +
    'loopback (three pairs) it wrote 1.91–1.97 against 2.17–2.22 GB to disk and made 5,719–5,957 against ' +
    '5,698–5,788 profiles/s; at 1,000,000 domains on loopback (one pair) 23.6 against 27.7 GB, 5,030 against ' +
    '5,009 profiles/s; at 100,000 domains, concurrency 32 and 10 ms (three pairs) 2,395–2,449 against ' +
    '2,395–2,440 profiles/s. ' +
    'What helped, each measured when it was done: each batch written in domain order, 1,000 profiles ' +
    'per batch, and no redaction of per-request debug fields below debug (2026-11-24: 556 → 459 µs per ' +
    "profile); the task queue removing its own listeners instead of through addEventListener's `signal` " +
    'option, which Node loses in a garbage collection (nodejs/node#63954; 2026-11-25, profile writes ' +
    'discarded: 193 → 175 µs per profile); 8 KiB pages and the writer committing every 4,000 profiles (the ' +
    'rows above); the licence, payment-method and change_log indexes set aside in a first sync and built at ' +
    'its end (2026-11-25, this benchmark: CPU per profile 426 → 353 µs, writer thread 233 → 160 µs, loopback ' +
    '3,180 → 4,014 profiles/s); each profile kept on the main thread as the response text it arrived in and ' +
    'handed to the writer so, the writer parsing and writing 64 at a time (2026-11-26, alternating ad hoc ' +
    'runs of 40,000 domains against the code before: loopback 2,669–2,836 against 2,424–2,629 profiles/s, CPU ' +
    'per profile 502–539 against 563–600 µs, peak RSS 243–253 against 263–269 MB; concurrency 32 at 10 ms ' +
    '1,945–1,965 against 1,802–1,872 profiles/s; concurrency 8 at 10 ms, 30,000 domains, 594–634 against ' +
    "583–610); the client's request limiter keeping its own sliding window of start times instead of running " +
    'every request through p-queue, whose per-task promise race, abort listener, async-context binding and ' +
    'events ran for every request once a rate was set, as it always is (2026-11-27, alternating ad hoc runs ' +
    'of 40,000 domains on loopback: 495–544 against 543–582 µs per profile, 2,384–2,786 against 2,264–2,589 ' +
    'profiles/s); the writer thread running 10 nice values below the fetching thread (Linux; a writer that ' +
    'falls behind still holds fetching back through waitForRoom; 2026-11-27, alternating ad hoc runs of 40,000 ' +
    'domains, 10 ms, concurrency 32: faster in 5 of 6 pairs, 1,769–2,068 against 1,668–1,990 profiles/s; on ' +
    'loopback the same within the spread, 2,595–2,953 against 2,712–2,976); undici listening to one ' +
    "EventEmitter per caller signal instead of the run's AbortSignal, on which it registered an EventTarget " +
    'listener per request (2026-11-27: in the bare undici loop on loopback an AbortSignal cost 9–18 µs of CPU ' +
    'per request, most of it garbage collection; in the sync with its profile writes discarded, four ' +
    'alternating pairs on loopback, 177–209 against 176–253 µs per profile, inside the spread); a first ' +
    "sync made the mirror's baseline, its licences and payment methods written without an `added` " +
    'change_log row each (about 6 per domain), which also leaves the change_log indexes nothing to build ' +
    'at its end (2026-11-27, alternating ad hoc runs of 100,000 domains, 10 ms, concurrency 32, three each: ' +
    '2,057–2,164 against 1,923–2,064 profiles/s, CPU per profile 403–443 against 444–489 µs, writer thread ' +
    '204–216 against 225–253 µs); each profile parsed once, on the writer thread, through the API ' +
    "client's own check (src/api/profile-text-check.ts; a body that is not JSON fetched again, as the client " +
    'retries one), instead of parsed and validated on the main thread and parsed again on the writer ' +
    '(2026-11-27, alternating CLI syncs of 20,000 domains on loopback, concurrency 8: user+sys CPU ' +
    '8.08–9.95 s, median 8.91, against 8.25–10.02 s, median 9.54, six pairs; in quirks mode 8.80–10.96 s, ' +
    'median 9.39, against 8.11–11.36 s, median 10.08, five pairs; the profile above is after it); in a ' +
    "first sync, each new domain's listing row held on the writer thread until its profile, in the same " +
    'open transaction, writes the row once with the listing columns, instead of inserted by the listing ' +
    'and rewritten by the profile (src/mirror/store/held-listing.ts; the rows still held are written ' +
    "before each commit, and the mirror's rows come out the same, change_seq included) (2026-11-27; the profile " +
    'above and the table at the top are both from after it: alternating CLI syncs of 20,000 domains on loopback, ' +
    'concurrency 8, six pairs: user+sys CPU 8.17–9.91 s, median 9.03, against 8.90–10.60 s, median 9.29, ' +
    'and shorter in each pair, 6.44–8.04 against 7.03–9.42 s; the store functions alone 157–186 against ' +
    "153–194 µs per profile, medians 175 and 189, lower in 4 of 6 pairs); the pipelines' task queue a " +
    'counter and a FIFO of its own (src/runtime/queue.ts) instead of p-queue, whose options object, id, ' +
    'promise, async-context binding and events came with every task, one per profile (2026-11-28; the ' +
    'profile above and the table at the top are after it: alternating runs of a full sync of 20,000 ' +
    'domains on loopback, concurrency 8, six pairs: main thread CPU 1,550–1,700 ms against 1,660–1,790, ' +
    'lower in each pair, CPU per profile 244–273 against 261–289 µs, lower in 5 of 6; the main thread ' +
    'allocated 23.1 KB per profile against 25.8, sampled by the inspector with collected objects ' +
    'included); four of the domain indexes (company and operator names, the listing date of enrichment, ' +
    'the name search) set aside in a first sync as well, their keys written in no order (2026-11-28, ' +
    'alternating ad hoc runs: the store functions alone at 100,000 profiles 128 and 127 against 140 and 141 ' +
    'µs per profile; full syncs on loopback, 100,000 domains, three pairs, writer thread 147, 139 and 136 ' +
    'against 150, 151 and 146 µs per profile, 4,545–5,044 against 4,750–4,872 profiles/s; 1,000,000 domains, ' +
    'one pair, writer thread 146 against 182 µs, 4,647 against 3,904 profiles/s; the cost, the build at the ' +
    'end, at 100,000 domains, concurrency 32 and 10 ms, two pairs: 2,469 and 2,450 against 2,497 and 2,483 ' +
    "profiles/s); the fifth, the service's date of enrichment, later that day (at 1,000,000 domains on " +
    'loopback, three alternating pairs: writer thread 141–148 against 155–175 µs per profile, 4,615–4,707 ' +
    'against 3,768–4,318 profiles/s, and in two of them 27.4 and 27.7 GB written against 34.9 and 34.9; at ' +
    '100,000 domains, concurrency 32 and 10 ms, three pairs, no difference: 2,409–2,448 against 2,414–2,427 ' +
    'profiles/s). Runs of ' +
    'the same code on different ' +
    'days, or hours apart, measured 10–25 % apart in absolute terms and more at times (this machine is ' +
    "shared: the bare undici loop on loopback made 4,993 profiles/s in this page's run and 14,608–16,564 in " +
    'five runs of 50,000 domains half an hour later); the table at the top is the latest.',
};

/**
 * What the floor would be for a tool that kept the contract's tables and nothing of ours, from the
 * run's `bare-sqlite-contract` job (bench/sync-writer-floor.ts).
 */
function contractFloorSentence(r: SyncBenchResult): string {
  const contractUs = r.writerFloor.bareSqliteContractUsPerProfile;
  const ratio = r.writerFloor.lowestContractCpuRatio;
  const bare = r.bareUndici.cpuUsPerProfile;
  // CPU per profile the target leaves above a floor of `floorUs` (the bare loop's own aside).
  const roomAbove = (floorUs: number): number => Math.round(r.targets.cpuRatioMax * bare - bare - floorUs);
  return (
    "The contract's four tables alone (domains, licenses, payment_methods and domain_sections with the keys and " +
    'columns the product requires, nothing of ours: no profile_extra, no listing or bookkeeping columns, no other index), ' +
    `written by plain INSERTs of the same profiles into a file of their own, cost ${contractUs} µs per profile; ` +
    `with the bare undici loop that is ${bare + contractUs} µs, ${fmt(ratio)}× it` +
    (ratio <= r.targets.cpuRatioMax
      ? `, under the target: a tool that kept only those tables would have ${roomAbove(contractUs)} µs per profile left for ` +
        'everything else it does (reading, checking and converting each profile, deciding what changed). ' +
        (r.writerFloor.lowestCpuRatio > r.targets.cpuRatioMax
          ? 'What our mirror keeps beyond the contract is what lifts the floor above the target'
          : `What our mirror keeps beyond the contract leaves ${roomAbove(r.writerFloor.bareSqliteUsPerProfile)} µs of it in this run`) +
        ' (each part measured in the next paragraph). '
      : ', above the target too. ')
  );
}

/**
 * What each part of what the mirror keeps beyond the contract costs in plain INSERTs: measured by
 * hand, so quoted with its date rather than recomputed by each run.
 */
const CONTRACT_FLOOR_PARTS =
  "What each thing our mirror keeps beyond the contract adds to the contract's plain INSERTs (2026-11-28, " +
  'ad hoc, the `bare-sqlite-contract` job with one addition at a time, 50,000 profiles, four rounds, CPU per ' +
  'profile): the contract alone 48–52 µs; with the raw profile in each domain row 59–65; with our bookkeeping ' +
  "columns (the listing's date of enrichment, last_listed_at, profile_synced_at and change_seq on each domain; " +
  'mirror_first_seen_at, mirror_updated_at and change_seq on each licence, payment-method and section row) ' +
  "61–68; with seven secondary indexes like the mirror's, built after the rows, 51–58; with all three 81–88, " +
  "where the mirror's own plain INSERTs (the table's floor) took 82–85 in the same rounds. Most of the " +
  "bookkeeping columns' cost is binding the two timestamps of each child row, about 20 strings a profile: " +
  'written as literals in the statement instead of bound, the same rows cost 52–56 against 52–69 µs, lower or ' +
  'equal in each of six pairs; bound once as a named parameter used twice, 58–62 against 63–64 (four pairs); ' +
  'read from a one-row temporary table (`INSERT … SELECT … FROM temp.clock`), 68–76, worse. In the store ' +
  "functions themselves the literals made no difference beyond the spread (child and section rows' " +
  'timestamps as literals, five alternating pairs: 125–134 against 127–140 µs per profile, medians 128 and ' +
  '132), and each batch has a time of its own, so its statements would be prepared anew for every batch: ' +
  'not done. These rounds wrote the whole profile into each domain row (`raw_profile`, about 2.9 KB), as the ' +
  'mirror did until migration 0010 (2026-11-28 evening), which keeps only what has no column or row ' +
  "(`profile_extra`, `{}` for the simulator's profiles) and so drops most of that cost; the floors in the table " +
  'at the top are after it. The bookkeeping columns (which `publish` and the dashboard read) are what the mirror ' +
  'is for beyond the contract; dropping them to meet this target is a product decision, not an optimisation.';

/**
 * What was tried against the floor under the CPU target (the plain INSERTs) and not kept: measured
 * by hand, so quoted with its date rather than recomputed by each run.
 */
const FLOOR_EXPERIMENTS =
  "Where the plain INSERTs' own time goes, and what did not lower it (2026-11-27, ad hoc, " +
  '20,000 profiles written into an empty mirror on Node 24, 2 Intel Xeon cores). Under `perf` ' +
  '(the inserts only, their setup left out; two profiles, of the floor of this table and of the ' +
  "script below), SQLite's own code was 28–31 % of the CPU, the kernel 18–25 % (writing the WAL " +
  'and the database file, reading pages back, page faults), converting the JavaScript strings ' +
  "to UTF-8 for binding 9–11 %, and most of the rest Node's and better-sqlite3's binding layers " +
  'and the C library: a JavaScript writer of these rows pays for more than SQLite. The same ' +
  "plain INSERTs through Node's built-in `node:sqlite` (a script of its own, the rows sorted " +
  "once and the child tables' indexes dropped, so below the table's floor) cost 45.6–64.5 µs " +
  'per profile against 60.0–95.2 µs through better-sqlite3, lower in each of 8 alternating ' +
  "pairs (in its profile the strings' conversion took 4 %). The sync's own store functions run " +
  'on `node:sqlite` through a small adapter (the same rows written, checked by comparing the ' +
  'tables) cost 132–173 µs per profile against 144–188 µs, lower in 5 of 6 pairs (medians 161 ' +
  'and 168 µs): little, since most of their time is our JavaScript around the statements. Not ' +
  "adopted: every store, kysely's dialect and the snapshot and publish readers sit on " +
  'better-sqlite3, and so small a gain would leave both missed targets missed. Four statement, ' +
  'schema and pragma changes made no difference beyond the spread: the plain INSERTs 16 rows per ' +
  'statement (multi-row `VALUES`, the rows of 64 profiles grouped by table: 65–95 µs against ' +
  '62–112 µs one row per statement, four pairs); the licence, payment-method and section ' +
  'tables without a rowid (`WITHOUT ROWID`, one B-tree per table instead of two; plain INSERTs ' +
  '114–167 µs against 102–134 µs as they are, store functions 173–217 against 178–200 µs, five ' +
  'pairs), foreign-key checks off on the writing connection (149–164 against 148–170 µs, four ' +
  'rounds) and a 1 GiB `mmap_size` (151–170 µs, four rounds). Fewer calls through the binding ' +
  'made it worse (2026-11-28, 20,000 profiles, three alternating pairs): the same rows handed to ' +
  'SQLite as one JSON array per table and batch of 1,000 profiles, inserted by `INSERT … SELECT` ' +
  "from `json_each(?)` (the array's `JSON.stringify` counted), cost 101–108 µs per profile " +
  'against 70–73 µs row by row.';

/**
 * The loopback and CPU points measured by hand on a quiet machine, with the lanes' waits and the
 * writer thread's scheduling: what holds those two targets out of reach. Quoted with its date.
 */
const QUIET_MACHINE_CHECK =
  'What holds the loopback and CPU targets out of reach, measured by hand on a quiet machine ' +
  '(2026-11-27, 21:14–21:16Z, minutes after it started, load average 0.9 before; bench/sync-child.ts ' +
  'and bench/bare-undici-loop.ts against one simulator, 100,000 domains, no latency, concurrency 8, ' +
  'three alternating rounds). The bare undici loop made 16,340–21,236 profiles/s at 45–53 µs of CPU ' +
  "per profile, less CPU than in most bench runs: its figure moves with the machine's load more " +
  "than the sync's. The full sync made 4,629–5,015 profiles/s at 246–264 µs (0.24–0.28 of the same " +
  "round's bare loop rate, 5.0–5.6× its CPU); with its profile writes discarded, 10,940–11,517 " +
  'profiles/s at 106–111 µs (0.52–0.67 of the rate, 2.1–2.5× the CPU). The writer thread is what ' +
  "holds the rate: the sync's 8 lanes spent 33–36 % of their time waiting for it to have room " +
  '(ProfileWriter.waitForRoom), and it was on a core for 13.8–14.6 s of the 19.9–21.6 s runs and ' +
  'waiting for one for another 3.2–4.0 s (/proc/thread-self/schedstat). On the same machine minutes ' +
  'before, the floor job of this table took 100–105 µs of CPU per profile for plain INSERTs of the ' +
  '11.1 rows and the store functions 146–169 µs (three rounds). So with the bare loop at 45–53 µs, ' +
  'the ≤ 2.5× target leaves 113–133 µs per profile for the whole sync: the fetching side uses ' +
  '106–111 µs of it before any row is written, and the plain INSERTs alone take about as much again. ' +
  'For 0.5 on loopback the writer thread would have to keep up with 8,200–10,600 profiles/s, ' +
  '94–122 µs per profile of its time, waits for a core included, on 2 cores that the ' +
  'simulator and the fetching thread also use; it took 138–146 µs of CPU per profile. Running the ' +
  'writer thread at nice 0 instead of 10 made no difference beyond the spread (two pairs the same ' +
  'evening: 3,997 and 4,912 against 4,758 and 4,478 profiles/s). At 1,000,000 domains (two runs that ' +
  'evening) the full sync made 3,591 and 3,684 profiles/s, its writer thread using 193 and ' +
  '189 µs of CPU per profile; its peak RSS in the second was 387 MB. Of that, the two sets of the ' +
  'domains a run has listed and queued held about 80 MB at that size with the names (measured alone ' +
  'on Node 24: 21 bytes a domain in each set and about 40 for each name), which grow with the catalogue. ' +
  'Since 2026-11-28 those two sets keep a 64-bit fingerprint of each domain instead of its name ' +
  '(src/util/fingerprint-set.ts: 16–32 bytes a domain, off the JavaScript heap; a false match, about ' +
  '3 in 100,000,000 at that size, leaves a profile for the next run or repeats a listing pass). In ' +
  'alternating runs of a full sync of 1,000,000 domains on loopback (bench/sync-child.ts by hand, ' +
  'two pairs) peak RSS was 295 and 298 MB against 373 and 374 MB with the sets of names, and the ' +
  "main thread's CPU moved within the spread (70.2–77.8 s against 69.2–72.7 s, the writer thread's, " +
  'whose code did not change, 186–195 s against 180–187 s); at 20,000 domains (three pairs) main ' +
  'thread CPU was 1,540–1,560 ms against 1,510–1,560 ms. A sync after `--no-profiles` fetches ' +
  'every profile that run left due: until 2026-11-28 it read them all from the mirror and queued ' +
  'them at once, and at 1,000,000 domains (listed by `sync --no-profiles`, then `sync` by the CLI ' +
  'against `domain-sync simulate` on loopback, one run each) that sync peaked at 520 MB RSS and ' +
  'took 11 min 6 s (its task queue then took each task off the front of an array with `shift()`, which ' +
  'V8 makes slow on an array that long; the queue keeps a head index again). It now reads them 500 at a time, in key order, and queues each page as the ' +
  'task queue has room (pipelines/sync.ts `enqueueDue`): 313 MB and 4 min 3 s. Every page now ' +
  'reads a partial index of exactly the due domains, in key order (`domains_profile_due`, ' +
  'migration 0008); before it, each page read every listed `domains` row to test the condition ' +
  '(a page after the first read through the `unlisted_at` index sorted every due domain again: ' +
  '0.4 s a page with 1,000,000 due), and so did every sync with none due: at 1,000,000 domains ' +
  'an incremental sync with nothing to fetch read 4.3 GB of the mirror, 2.6 s wall with the ' +
  'mirror in the page cache and 12.2 s without, now 1.2–3.3 s (four runs) and 2.0 s (CLI, ' +
  '2026-11-28).';

/** Measured by hand: how the CPU ratio depends on the catalogue's size (quoted in the notes). */
const CATALOGUE_SIZE_CHECK =
  "How the CPU ratio depends on the catalogue's size, measured by hand (2026-11-28, 11:36–11:39Z; " +
  'bench/bare-undici-loop.ts and bench/sync-child.ts each against a simulator of its own, no latency, ' +
  'concurrency 8, two rounds: the loop at 20,000, 100,000 and 1,000,000 domains, the sync at 20,000 and 100,000). The bare undici loop used 81–84 µs of ' +
  'CPU per profile at 20,000 domains, 44–50 at 100,000 and 37–39 at 1,000,000: about 1 s of start-up and ' +
  'warming up, then about 37 µs per profile. The full sync used ' +
  '255–277 µs at 20,000 domains and 231–235 at 100,000, its fixed part about as large, but its cost per ' +
  'profile six times as high, so the ratio grows with the catalogue: 3.0–3.3× at 20,000 domains, 4.7–5.3× ' +
  'at 100,000, and 6.5–7.0× at 1,000,000, where the writer thread works in larger B-trees (full syncs of ' +
  '1,000,000 domains earlier that day used 255–259 µs per profile in three runs). A bare loop at ' +
  '115–137 µs per profile, as in the independent measurement these targets came from, matches this loop on a ' +
  'small catalogue or a busy machine: the same loop measured 108–129 µs at 20,000 domains at 10:03Z that day. ' +
  'The targets here are judged at 100,000 domains.';

/**
 * An ad hoc check of the writes-discarded point at concurrency 32 and 10 ms, made after the sync
 * bench run of 2026-11-27 (17:30Z) measured it below the full sync: quoted when a run does so.
 */
const DISCARDED_RECHECK =
  'Right after the run of 2026-11-27 that measured it so (17:30Z; bench/sync-child.ts run by hand, ' +
  '30,000 domains, 10 ms, concurrency 32, two alternating pairs), the sync with its profile writes ' +
  'discarded made 2,014 and 1,961 profiles/s at 251 and 252 µs of CPU per profile, the full sync 1,598 ' +
  'and 1,843 profiles/s at 470 and 455 µs. ';

/**
 * Garbage collection in a sync, and the experiments on it (ad hoc, measured 2026-11-26 on this
 * benchmark's machine with bench/sync-child.ts and bench/bare-undici-loop.ts).
 */
const SYNC_GC_NOTE =
  'Garbage collection is a large cost that the bare loop barely has. Under `--trace-gc` (2026-11-26, ' +
  'full sync of 20,000 domains, loopback, concurrency 8), the main thread ran 146 scavenges (685 ms of ' +
  'pauses) and 15 mark-compacts (100 ms), the writer thread 64 scavenges (103 ms) and 6 mark-compacts ' +
  '(23 ms); the bare undici loop fetching the same profiles ran 20 scavenges (184 ms) and 4 mark-compacts ' +
  '(20 ms). Before the writer took the profiles as text (above), its thread ran 77 scavenges (581 ms) ' +
  "and 17 mark-compacts (64 ms): a batch's 1,000 profiles, structured-cloned as objects, stayed alive " +
  'until the batch was written, and each scavenge copied them. Under `--trace-gc-nvp` (2026-11-27, the same ' +
  'sync, the request limiter without p-queue) the main thread ran 122 scavenges (331 ms), allocating 33.7 KB ' +
  'per profile (38.8 KB with the limiter on p-queue, measured the same way that day), and each scavenge found ' +
  'on average 1.3 MB still alive in the young generation and promoted 1.1 MB; the writer thread ran 64 ' +
  '(109 ms). The bare undici loop, run with the same Node options (a young generation of 8 MB at most), allocated 18.6 KB per profile in 77 scavenges, and its scavenges found ' +
  "as much alive as the sync's (1.7 MB, and 1.6 MB promoted): so many survivors are what undici and a " +
  'loop of requests in flight leave, not something the sync keeps. The sync simply allocates twice as much ' +
  "per profile, so it collects twice as often. A sampling heap profile of the sync's main thread (the " +
  "inspector's, objects collected by scavenges left out) put the survivors at about 17 KB per profile: the " +
  "parsed response bodies (3.3 KB), undici's request, response and header objects, the body text, the tasks " +
  "of a listing page waiting in the task queue, and zod's output. Not the batch waiting for the writer: with " +
  "100 profiles per batch instead of 1,000, the main thread's scavenges found the same. Since the evening of " +
  "2026-11-27 neither the parsed bodies nor zod's output are on the main thread: profiles are parsed and " +
  'validated on the writer thread (below). Three experiments ' +
  'were not kept: a 16 MB young generation (`--max-semi-space-size=16`; 12 MB alike) cut the CPU per ' +
  'profile in some runs, but peak RSS went to 286–290 MB at 100,000 domains, against 254–258 MB, too near ' +
  'the 300 MB target for run-to-run spread; garbage collection on the collecting thread alone ' +
  '(`--single-threaded-gc`; 2026-11-28, full syncs of 100,000 domains on loopback, two alternating pairs) ' +
  'left the CPU per profile where it was (243 and 230 against 244 and 235 µs) but took peak RSS to 327–332 MB, ' +
  'against 251–264; a heap growing factor of 2 or 3 instead of 1.6 ' +
  '(2026-11-27, alternating runs of 40,000 domains on loopback) made no difference beyond the spread in ' +
  'CPU per profile or rate, and raised the mean peak RSS at 40,000 domains from 249 MB to 265 and 290 MB.';

/**
 * What was measured on 2026-11-28 late (from 22:50Z) against the CPU target, by hand with
 * bench/sync-child.ts and bench/bare-undici-loop.ts (100,000 domains on loopback, concurrency 8).
 */
const SYNC_CPU_NOTE_LATE =
  'Measured again late on 2026-11-28 (from 22:50Z; full syncs of 100,000 domains on loopback, ' +
  'concurrency 8, by hand, alternating runs). Under `--trace-gc-nvp` the main thread ran 354 scavenges ' +
  '(1,288 ms of pauses) that promoted 528 MB to the old generation, 5.3 KB per profile, and the writer ' +
  'thread 291 (443 ms) promoting 229 MB. Two changes to what lives on the main thread were tried: each ' +
  'profile read as bytes and handed to the writer as a transferred ArrayBuffer instead of a string, with ' +
  "the writer's call no longer keeping the batch alive until the writer answered: main thread 283 " +
  'scavenges (1,013 ms), 331 MB promoted; writer 43 MB. Batches of 50 profiles instead of 1,000: the ' +
  "writer's promotion fell to 17 MB, the main thread's stayed at 523 MB. Neither moved the CPU per profile " +
  'beyond the spread (bytes: 324 and 302 µs against 301 and 333; batches of 100: 330 and 322 against 323 ' +
  "and 331), so neither was kept. The bare undici loop promotes more still: run with the CLI's 8 MB young " +
  'generation it ran 350 scavenges that promoted 632 MB ' +
  '(830 ms), at 70 µs of CPU per profile. With the profile writes discarded (the writer thread still ' +
  'writing the listing) the sync took 105 µs per profile (main thread 69, writer 24, other threads 12). ' +
  "A heap growing factor of 2.5 instead of 1.6 took the other threads (V8's garbage-collection helpers) " +
  'from 40–42 to 27–32 µs per profile but peak RSS from 255–256 to 271–286 MB, and the CPU per profile ' +
  'stayed within the spread (275–306 µs in four runs against 282–299 in two); a 32 MB young generation, ' +
  '307 and 320 against 299 and 302 µs at 343–346 MB. By `/usr/bin/time` a full sync used 18.2 s of user ' +
  'and 4.4 s of system CPU, the bare undici loop 3.9 and 1.0 s: about 34 µs per profile of the difference ' +
  "is the kernel's. `strace -c` of a full sync of 20,000 domains counted 36,230 `pwrite64` and 20,257 " +
  "`pread64` calls, SQLite's reads and writes of the mirror and its WAL (the sockets use `write` and " +
  '`read`: 21,528 and 23,664 calls). A 64 MB page cache for the writer ' +
  'instead of 16 MB made no difference beyond the spread (296–308 against 280–301 µs per profile, three ' +
  'alternating pairs, 2026-11-29T01:18Z) and raised peak RSS from 252–259 to 313–315 MB. A CPU profile of that evening (100,000 ' +
  "domains, sampled wall time per profile): the writer's statements 94 µs (licences and payment methods " +
  '47, domain and sections 47), its commits and checkpoints 24, parsing 14, the JSON of the profile for its hash and of its sections ' +
  "11, its garbage collection 9; the main thread's garbage collection 24 µs (the bare loop's 3), " +
  "the index builds at the end 12, undici's socket writes 22 (the bare loop's 15). Building the hash's JSON " +
  "from the sections' own JSON, so that each section is stringified once, measured no gain (medians of " +
  '9.8 µs per profile as it is and 10.1 µs so, five rounds each on 20,000 profiles): not kept. In these ' +
  'runs the sync took 282–338 µs of CPU per profile and the bare undici loop 81–88: the 2.5× target ' +
  "needs about a third of the sync's CPU gone, and none of this finds it.";

/**
 * Measured by hand on 2026-11-29 (after SYNC_CPU_NOTE_LATE): the schema and write-order levers
 * on the writer's SQLite time, and two more on the threads' garbage collection.
 */
const SYNC_KEY_ORDER_NOTE =
  'Measured on 2026-11-29 from 01:50Z (AMD EPYC, 2 cores, by hand, alternating runs). The order of ' +
  "the writes is the one lever on the writer's SQLite time found so far. The same profiles written " +
  'by bench/sync-writer-floor.ts in domain order instead of listing order: at 50,000 profiles (three ' +
  "rounds) the sync's store functions took 100–123 against 122–144 µs per profile, plain INSERTs 54–72 " +
  'against 87–100; at 200,000 (two rounds) 109 and 125 against 147 and 174, plain INSERTs 69 and 76 ' +
  'against 97 and 103 (the table at the top has the same comparison at 100,000 profiles, from each ' +
  "bench run since: the floor's key-order modes). The gain grows with the mirror: the primary keys, which stay during a load, " +
  'take domains in listing order, so each insert lands on a page of its own. A sync cannot write in ' +
  'that order while it fetches as it lists. A prototype first sync that listed every page before ' +
  'fetching, then fetched every profile in key order through the due-profile path ' +
  '(src/mirror/store/profiles-due.ts), used 267 and 237 µs per profile against 295 and 266 at 50,000 ' +
  'domains on loopback (writer thread 122 and 107 against 138 and 123), and 282 and 313 against 300 ' +
  'and 313 at 200,000, where the listing rows themselves are still written in listing order. With ' +
  'the service 10 ms away at concurrency 32 (100,000 domains) it made 2,086 and 2,082 profiles/s ' +
  'against 2,248 and 2,211, the bare undici loop 2,281 and 2,305: about 0.91 against 0.97 of it, ' +
  'because nothing is fetched while it lists. It was not kept. To pay, it would need the ' +
  'listing pages fetched several at a time, and the listing rows written in key order as well. ' +
  'Tried the same day and not kept: the licence, payment-method and section tables WITHOUT ROWID ' +
  '(one B-tree per table instead of the table and its key index; store functions alone, 50,000 ' +
  'profiles, three rounds): 126–146 against 99–139 µs per profile, and with the section table left ' +
  'as it is, 126–136 against 112–137; batches of 4,000 profiles, each written in one sorted pass, ' +
  'instead of 1,000: 273–306 against 294–311 µs per profile (full syncs of 50,000 domains, three ' +
  'rounds), and of 8,000 with a commit every 8,000: 266–296; `--single-threaded-gc`: 255–302 against ' +
  "265–295, the V8 helper threads' 44–48 µs per profile moving to the main and writer threads. Under " +
  '`--trace-gc`, a full sync of 50,000 domains paused its main thread for 182 scavenges (671 ms), the ' +
  'bare undici loop with the same 8 MB young generation for 180 (604 ms): the main thread collects ' +
  'about as much as the bare loop does. The writer thread ran 153 (232 ms). In these runs the bare ' +
  'undici loop took 74–89 µs of CPU per profile, the sync 260–324, and the sync with its profile ' +
  'writes discarded 149–159. ' +
  'The upper bound of the key order, measured by hand on 2026-11-29 from 07:20Z (AMD EPYC, 2 cores): a ' +
  'simulator that listed its catalogue sorted by domain, so that the listing rows, the profiles and ' +
  'every batch reached the writer in key order, against the same simulator listing as it does, full ' +
  'syncs of 50,000 domains on loopback, three alternating rounds: the writer thread took 98–100 µs per ' +
  'profile against 101–138, but the whole process 230–241 against 218–295 (the bare undici loop 57–82): ' +
  'even in the order a prototype could at best reach, the writes save about a tenth of the writer and ' +
  'nothing measurable of the total. The sync targets need about 70 µs less per profile. Tried the same ' +
  'morning and not kept: write requests of 250 or 100 profiles instead of 1,000 (smaller batches of ' +
  'texts held on the main thread until they are sent; full syncs of 50,000 domains, six alternating ' +
  'rounds in two sets): the threads other than the main and writer threads (V8 helpers) took 33–49 µs ' +
  'per profile against 42–55, but the total 240–337 against 249–337, inside the spread. Nor is it the ' +
  'calls into SQLite: the licence, payment-method and section rows of each 1,000-profile batch written by one ' +
  '`INSERT … SELECT … FROM json_each(?)` per table, instead of a prepared INSERT per row, took 100 and 110 ' +
  'µs per profile against 83 and 85 (100,000 profiles, those three tables alone, a 32 MiB page cache, two ' +
  'alternating rounds); ' +
  "the same rows in global key order took 36–40. Nor is it the start-up: with V8's compile cache " +
  '(`NODE_COMPILE_CACHE`, which keeps the compiled modules on disk between runs), CLI syncs of 20,000 ' +
  'domains on loopback used 4.67–5.42 s of user CPU against 4.66–5.68 s without (2026-11-29, 10:10Z, ' +
  'four alternating pairs), so the CLI does not enable it. Nor the second isolate: the same full syncs with ' +
  "the writer on the fetching thread (the run context's `profileWriter: 'inline'`, the same store " +
  "functions, but the mirror's own connection with its 2 MiB page cache and default checkpoints, and no " +
  'writer-thread settings) used 287–334 µs of CPU per profile against 261–284 µs with the writer thread, ' +
  'at 2,976–3,436 against 4,433–5,025 profiles/s (100,000 domains on loopback, three alternating rounds, ' +
  '2026-11-29 10:48Z; the bare undici loop 70–81 µs). Nor the response check on the writer thread: ' +
  "the same syncs with the writer taking each body's `data` unchecked (no zod schema; the store's own " +
  'conversions still check every value) used 247–302 µs of CPU per profile against 246–296 µs with the ' +
  'check (three alternating rounds, 10:55Z; the bare undici loop 67–80 µs). ' +
  "Nor would setting the tables' keys aside reach it, measured by hand on 2026-11-30 from 05:25Z (AMD EPYC, 2 cores, alternating " +
  'rounds; plain prepared INSERTs of the rows a full sync of 100,000 domains left in the four profile ' +
  'tables, in listing order, committed every 4,000 profiles, the secondary indexes left out): with each ' +
  "table's primary key kept up to date row by row they took 63 and 66 µs per profile; into the same " +
  'tables with no key, and a unique index on the key built after the load, 43 and 43, the builds ' +
  "included. With the contract's columns alone, 54–57 against 33–35 (three rounds); on those, a 128 MiB page " +
  'cache instead of 16 MiB took the keyed load only to 50 and 51, and loading keyless tables then ' +
  'copying them in key order into keyed ones to 46 and 50. So building the keys after a first load, ' +
  "the last lever on the writer's SQLite time, is worth about 20 µs per profile, under a tenth of the " +
  "sync's CPU, and it would make each key a unique index instead of the table's primary key (which " +
  'anyone reading the schema sees, and which every existing mirror would be rebuilt for): not made.';

/** The modules a sync loads at start, changed on 2026-11-29 (measured by hand). */
const SYNC_START_UP_NOTE =
  'Start-up, since 2026-11-29 (14:00Z): the profile above counts 10 µs per profile of module loading on ' +
  'the main thread and 9 on the writer thread at 20,000 domains. Both threads opened the mirror ' +
  'through a module that imported kysely (about 250 modules, 106–151 ms to import on Node 24), used ' +
  'only by migrations, and the main thread also loaded the Parquet writer (hyparquet-writer and the ' +
  "hyparquet reader, 51 modules) to check a snapshot step's `--tables`. A mirror that is up to date now " +
  'opens without kysely (src/mirror/migrations/names.ts), and the check is in pipelines/tables.ts; ' +
  'test/integration/cli/lazy-imports.test.ts counts what each command loads. An incremental sync of a ' +
  '20,000-domain catalogue with nothing to fetch took 0.42–0.52 s against 0.61–0.70 s (CLI as installed, ' +
  "five alternating runs). At 100,000 domains that is about 2 µs per profile, below this machine's " +
  'run-to-run spread: the first bench run after the change (15:08Z) measured 214 µs of CPU per ' +
  'profile against 247 µs in the run before it, but its bare undici loop also ran faster (49 against ' +
  '61 µs), and the ratio moved the other way (4.37 against 4.05). The run of 17:45Z (after the ' +
  "change to profile_extra, which a canonical catalogue's profiles do not touch) measured 210 µs " +
  'against a bare undici loop of 45 µs: 4.67.';

/** Measured by hand on 2026-11-29 from 18:40Z (AMD EPYC, 2 cores); kept: a7deb9c. */
const SYNC_JIT_NOTE =
  "V8's compiler, measured on 2026-11-29 from 18:40Z (full syncs of 50,000 domains on loopback, " +
  "concurrency 8, the CLI as installed). `perf record` of one put 16.7 % of the process's samples on " +
  'V8\'s helper thread (with `--v8-pool-size=0` Node still starts one on 2 cores, the "others" of the ' +
  'thread row in the table): 5.6 % of the whole process optimising code, 4.1 % marking the heap ' +
  'concurrently, 2.4 % the kernel switching to it. Under `--trace-opt` the same sync made about 1,000 ' +
  "optimising compiles, 1.1–1.3 s of the compiler's time in two runs. Some were compiled again and again: " +
  "the writer thread's diff of the licence and payment-method rows (`apply`) 7 times by TurboFan and " +
  "the callback that converts each row 11 times, with the writer's other per-batch helpers. The " +
  'writer made them anew as closures for each batch of 64 profiles, and V8 may drop optimised code ' +
  'once no function object of it is alive, as it did here between batches. Since then the diff is a class ' +
  '(src/mirror/store/child-history.ts) and the other helpers are module functions and loops: the ' +
  'functions of ours compiled more than once by the same compiler took 33 ms of its time in all, ' +
  'against 246 ms before, and the whole sync 1.0 s for 915 compiles. ' +
  'Five alternating pairs of such syncs (CPU time of each thread read from /proc while it ran) used ' +
  '13.4 s of CPU against 13.6 s before (writer thread 5.84 against 5.87 s, the helper thread 2.11 ' +
  "against 2.18 s): inside this machine's spread, so it is less work for the compiler and no " +
  'measured gain. What the compiler still does is mostly once per process: of that 1.0 s, about 520 ms ' +
  "went to undici's and Node's own functions, which a bare loop compiles too, 280 ms to ours and " +
  "200 ms to functions with no file (code made at run time, zod's compiled validators among it). " +
  'The run of 19:48Z was the first after the change. This machine was slower in it than at ' +
  '17:45Z on both sides (the bare undici loop took 68 µs of CPU per profile against 45, the sync 268 ' +
  'against 210), so its ratios, 3.94 for CPU and 0.317 for the loopback rate against 4.67 and 0.285, ' +
  'say more about the machine than about the change.';

const SYNC_YOUNG_GENERATION_NOTE =
  "The young generation, since 2026-11-30 (00:45Z, by hand). The CLI's shebang capped V8's " +
  'semi-spaces at 8 MB for every command; it now gives V8 a cap of 32 MB, for `snapshot`, and holds ' +
  'every other command to 8 MB at run time (src/util/heap-growth.ts `capYoungGeneration`, which ' +
  'bench/sync-child.ts calls as the CLI does). Full syncs of 100,000 domains by the CLI against ' +
  '`domain-sync simulate` on loopback, concurrency 8, three alternating pairs, the new way against ' +
  'the old: 21.7–22.4 s of CPU (user and system) against 24.0–25.7 s, 18.5–18.9 s against 19.2–21.0 s ' +
  'from start to exit, peak RSS 245–250 MB against 243–254 MB. Why it costs less is not measured; ' +
  'the growth factor it sets is one flag for the whole process, so while the main thread is at its ' +
  "cap the writer thread's young generation does not grow either. The run in the table (2026-11-30, " +
  'from 01:38Z) is the first with it: 208 µs of CPU per profile against 268 in the run of 19:48Z the ' +
  'evening before, but its bare undici loop ran faster too (50 against 68 µs), so the CPU ratio went ' +
  'from 3.94 to 4.16 and the loopback rate ratio from 0.317 to 0.344; peak RSS 233 MB against 250.';
