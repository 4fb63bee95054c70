/**
 * `npm run bench -- sync`: against one 100,000-domain simulator catalogue,
 * (a) profiles/s of a full `sync` vs a bare undici loop listing and fetching the same profiles at
 *     the same concurrency (bench/bare-undici-loop.ts: `undici.request` and a JSON parse per
 *     profile, fetching while it lists, timed from its first request to its last as the sync is, on
 *     plain `node`, what a user would write by hand; target ≥ 0.9: the mirror must not be the
 *     bottleneck), judged with the service {@link SERVICE_LATENCY_MS} ms away at concurrency 8
 *     and at {@link HIGH_CONCURRENCY}, and also reported with no latency at all (target ≥ 0.5)
 *     and at 2 and 5 ms (on a smaller catalogue). Each point also runs a bare client loop (our
 *     own client, responses validated, nothing written), reported beside it: what the client
 *     alone costs. The loopback point and the one at concurrency {@link HIGH_CONCURRENCY} also run a
 *     bare fetch loop once (bench/bare-fetch-loop.ts: Node's built-in `fetch`), reported beside
 *     them: what a script written without a library costs. Before 2026-11-26 the client loop was
 *     the baseline of the targets; it costs
 *     more CPU per profile than the undici loop, which flattered the CPU ratio and the CPU-bound
 *     loopback one (at concurrency 32 with latency it was the faster of the two). The undici loop
 *     runs right before and right after the sync at each point (the client loop after both), and
 *     the ratios are against the mean of its two runs (since 2026-11-27); each target point is
 *     measured in {@link TARGET_ROUNDS} such rounds and reports the median one;
 * (a') CPU per profile of the sync process against the bare undici loop's, no latency (target ≤ 2.5×);
 * (b) an incremental run after 1% of domains changed: profile requests ≤ 1.05 × changed;
 * (c) peak RSS of the full sync < 300 MB (the no-latency run, the most memory-hungry);
 * (d) the floor under (a'): the same profiles written again with no HTTP and no threads, by the
 *     sync's store functions, by plain prepared INSERTs of the same rows, and by plain INSERTs of
 *     the contract's columns alone (sync-writer-floor.ts);
 * (e) the ceiling above (a) and (a'): a full sync whose profiles are acknowledged without being
 *     written (sync-child.ts, `sync-discard-profiles`), at concurrency {@link HIGH_CONCURRENCY}
 *     with the service {@link SERVICE_LATENCY_MS} ms away and with no latency: what the fetching
 *     side alone allows, measured beside the same run's bare loops;
 * (f) what a service using the spec's freedoms costs: the loopback point on a smaller catalogue,
 *     served with canonical timestamps and in the simulator's quirks mode (`+00:00`, timestamps
 *     without milliseconds, unknown fields), each against the bare undici loop on that service;
 * (g) a catalogue of {@link LARGE_DOMAINS} domains, last: the loopback point once (no target), its
 *     rate, CPU per profile and peak RSS beside the same run's bare undici loop, because the
 *     writer's B-trees, the listing's sets and the index builds at the end grow with the catalogue.
 * The simulator runs in this process; each measured job runs in its own child process.
 *
 * Why the target is judged with latency: the service is remote (it cannot even be reached from
 * the machines this runs on), so each profile request waits for a network round trip and the service's
 * own work, which do not use this machine's CPU. With the simulator on loopback and no latency,
 * the simulator and the bare loop alone keep both cores of a 2-core machine busy, so the figure
 * measures total CPU per profile, not whether the mirror holds the sync back: any work at all per
 * profile (parsing it into rows, any SQLite write) lowers it. That figure is still measured and
 * reported, with its CPU split by thread. The latency is a simulator fault rule (a timer, no CPU)
 * on every request, the same for the bare loop and the sync.
 */
import { spawn, spawnSync } from 'node:child_process';
import { CLI_NODE_OPTIONS } from '../src/util/heap-growth.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimulator } from '../src/simulator/index.js';
import type { RunningSimulator } from '../src/simulator/index.js';
import { round } from './stats.js';
import type { WriterFloorMode } from './sync-writer-floor.js';

/**
 * Service latency at which target (a) is judged: a fast same-region API (network round trip plus
 * the service's own work); most remote APIs take longer. Chosen before measuring, not tuned.
 */
export const SERVICE_LATENCY_MS = 10;
/** The second concurrency measured with the service {@link SERVICE_LATENCY_MS} ms away. */
export const HIGH_CONCURRENCY = 32;
/** Further latencies measured on a smaller catalogue, to show where the mirror starts to matter. */
const SWEEP_LATENCIES_MS = [2, 5] as const;
/** Catalogue size of the sweep points. @default 20000 */
const SWEEP_DOMAINS = 20_000;
/**
 * Rounds of each target point (loopback, and the service {@link SERVICE_LATENCY_MS} ms away at
 * both concurrencies): undici loop, sync, undici loop each. The sync and the simulator share this
 * machine's two cores, so a run's rate follows whatever else the shared machine does: one
 * loopback round's baseline runs have been 56 % apart, and single runs of the 10 ms points moved
 * by 0.08 of the ratio from one bench run to the next (docs/benchmarks.md). Each point reports the
 * round with the median ratio, and every round's ratios beside it. The sweep points, which have
 * no target, run once.
 */
export const TARGET_ROUNDS = 3;

/**
 * Catalogue size of point (g), the size of a large real catalogue. One round (its sync took 197.5 s
 * on 2 cores in the run of 2026-11-28T13:11Z), and its mirror (about 7.6 GB) is deleted at once.
 */
export const LARGE_DOMAINS = 1_000_000;

export interface SyncBenchOptions {
  /** @default 100000 */
  domains?: number;
  /** @default 8 */
  concurrency?: number;
  /** Catalogue size of point (g); 0 leaves it out. @default LARGE_DOMAINS */
  largeDomains?: number;
}

/**
 * A full sync and the two bare loops, each from an empty start, with the service at one latency.
 * The targets are judged against the bare undici loop (bench/bare-undici-loop.ts: what a user
 * would write by hand, on plain `node`); the bare client loop (our own client, responses
 * validated, nothing written) shows what the client alone costs.
 */
export interface LatencyPoint {
  latencyMs: number;
  domains: number;
  full: RateFigures;
  /**
   * The bare undici loop, the baseline of the targets: the mean of a run right before the sync
   * and one right after it, so that the machine's speed drifting during the point
   * (these machines are shared) weighs on both sides alike.
   */
  bareUndici: RateFigures;
  /** Profiles per second of the bare undici loop's two runs, before and after. */
  bareUndiciRuns: [number, number];
  /** The bare client loop. */
  bareLoop: RateFigures;
  /** full / bare undici loop profiles per second: the target figure. */
  ratio: number;
  /** full / bare client loop profiles per second. */
  clientRatio: number;
  /**
   * The bare fetch loop (bench/bare-fetch-loop.ts: Node's built-in `fetch`), run once after the
   * others at the points that ask for it (loopback and concurrency {@link HIGH_CONCURRENCY} at
   * {@link SERVICE_LATENCY_MS} ms, since 2026-11-30); reported beside the targets, not judged.
   */
  bareFetch?: RateFigures;
  /** full (the median round's sync) / bare fetch loop profiles per second. */
  fetchRatio?: number;
  /** The same sync's CPU per profile / the bare fetch loop's. */
  fetchCpuRatio?: number;
  /**
   * When the point was measured in more than one round (the target points, {@link TARGET_ROUNDS}):
   * each round, in the order run. The figures above are those of the round with the median ratio.
   */
  rounds?: LatencyRound[];
}

/** One round of a point measured several times: the sync between two runs of the undici loop. */
export interface LatencyRound {
  /** Sync profiles/s over the mean of the round's two undici loop runs. */
  ratio: number;
  /** Sync CPU per profile over the mean of the round's two undici loop runs' CPU per profile. */
  cpuRatio: number;
  syncProfilesPerSecond: number;
  syncCpuUsPerProfile: number;
  bareUndiciRuns: [number, number];
  bareUndiciCpuUsPerProfile: number;
}

/** One measured job of the sync benchmark. */
export interface RateFigures {
  profiles: number;
  seconds: number;
  profilesPerSecond: number;
  peakRssMb: number;
  /** CPU µs per profile in the measured process (all threads). */
  cpuUsPerProfile: number;
  /** CPU µs per profile in the simulator (the parent process) during the job. */
  simulatorCpuUsPerProfile: number;
  /**
   * CPU µs per profile by thread of the measured process (Linux only, else null): the main
   * thread, the busiest other thread (in the sync, the mirror writer) and all the rest.
   */
  threadsUsPerProfile: { main: number; busiestOther: number; rest: number } | null;
}

export interface SyncBenchResult {
  name: 'sync';
  domains: number;
  concurrency: number;
  /** With no latency (simulator on loopback): CPU-bound on this machine. */
  full: RateFigures;
  /** The bare undici loop with no latency: the baseline of the loopback and CPU targets. */
  bareUndici: RateFigures;
  /** Profiles per second of its two runs, before and after (see {@link LatencyPoint.bareUndici}). */
  bareUndiciRuns: [number, number];
  /** The bare client loop with no latency. */
  bareLoop: RateFigures;
  /** The bare fetch loop with no latency (see {@link LatencyPoint.bareFetch}); absent before 2026-11-30. */
  bareFetch?: RateFigures;
  /** full / bare fetch loop with no latency. */
  loopbackFetchRatio?: number;
  /** CPU per profile of the sync process / the bare fetch loop's, no latency. */
  cpuFetchRatio?: number;
  /** Cores of this machine: the simulator and the measured process share them. */
  cores: number;
  /** full / bare undici loop with no latency. */
  loopbackRatio: number;
  /** full / bare client loop with no latency. */
  loopbackClientRatio: number;
  /** The loopback point's rounds (see {@link TARGET_ROUNDS}); the figures above are the median one's. */
  loopbackRounds: LatencyRound[];
  /** Target (a): the run with the service {@link SERVICE_LATENCY_MS} ms away, on the full catalogue. */
  remote: LatencyPoint;
  /** The same at concurrency {@link HIGH_CONCURRENCY}. */
  remoteHigh: LatencyPoint & { concurrency: number };
  /** More latencies on a {@link SWEEP_DOMAINS}-domain catalogue. */
  sweep: LatencyPoint[];
  /**
   * (f): what a service that uses the spec's freedoms costs. The loopback point on a
   * {@link SWEEP_DOMAINS}-domain catalogue in {@link TARGET_ROUNDS} rounds, served as the
   * simulator serves by default (`canonical`: every timestamp `YYYY-MM-DDTHH:MM:SS.sssZ`) and in
   * its quirks mode (`quirks`: two timestamps in three spelled `+00:00` or without milliseconds,
   * unknown fields, nulls, non-ASCII names), each against the bare undici loop on the same service.
   * Absent from results before 2026-11-27T15:00Z.
   */
  spellings?: { canonical: LatencyPoint; quirks: LatencyPoint };
  /**
   * (g): the loopback point once on a {@link LARGE_DOMAINS}-domain catalogue. Absent from results
   * before 2026-11-28T13:52Z and when left out (`largeDomains: 0`).
   */
  large?: LatencyPoint;
  incremental: {
    changed: number;
    profileRequests: number;
    listingPages: number;
    requestRatio: number;
    seconds: number;
    peakRssMb: number;
  };
  /** CPU per profile of the sync process / the bare undici loop's, no latency. */
  cpuRatio: number;
  /** CPU per profile of the sync process / the bare client loop's, no latency. */
  cpuClientRatio: number;
  /**
   * (e): full syncs with the profile writes discarded. `high`: concurrency {@link HIGH_CONCURRENCY},
   * service {@link SERVICE_LATENCY_MS} ms away, ratio to that point's bare undici loop; `loopback`:
   * no latency, CPU per profile against the loopback bare undici loop's.
   */
  withoutProfileWrites: {
    high: RateFigures & { ratio: number };
    loopback: RateFigures & { cpuRatio: number };
  };
  /** (d): the mirror writes alone, CPU µs per profile, and the rows each profile makes. */
  writerFloor: {
    rowsPerProfile: number;
    /** The sync's store functions (upsertDomainSummaries, upsertProfiles) in one thread, indexes set aside and built after. */
    writerAloneUsPerProfile: number;
    /** The same with every index kept up to date row by row (before indexes were set aside). */
    writerAloneIndexedUsPerProfile: number;
    /** The same store functions into a mirror of 4 KiB pages (one made before 8 KiB pages). */
    writerAlone4KiBUsPerProfile: number;
    /** The store functions alone, committed per listing page and per 1,000 profiles (the writer before). */
    writerAlonePerBatchUsPerProfile: number;
    /** Plain prepared INSERTs of the same rows into the same schema, indexes set aside and built after. */
    bareSqliteUsPerProfile: number;
    /** (bare undici loop + bare INSERTs) / bare undici loop: the lowest CPU ratio a sync writing these rows can have. */
    lowestCpuRatio: number;
    /**
     * Plain prepared INSERTs of the contract's columns alone into a file of the contract's four
     * tables with their keys and no other index: the floor under any tool keeping those tables.
     */
    bareSqliteContractUsPerProfile: number;
    /** (bare undici loop + the contract's INSERTs) / bare undici loop. */
    lowestContractCpuRatio: number;
    /** writerAlone with the profiles in domain order instead of listing order (since 2026-11-29). */
    writerAloneKeyOrderUsPerProfile?: number;
    /** bareSqlite with the profiles in domain order instead of listing order (since 2026-11-29). */
    bareSqliteKeyOrderUsPerProfile?: number;
  };
  targets: {
    ratioMin: 0.9;
    loopbackRatioMin: 0.5;
    cpuRatioMax: 2.5;
    requestRatioMax: 1.05;
    peakRssMbMax: 300;
  };
  meetsTargets: {
    ratio: boolean;
    ratioHigh: boolean;
    loopbackRatio: boolean;
    cpuRatio: boolean;
    requestRatio: boolean;
    peakRss: boolean;
  };
}

interface ChildOutput {
  elapsedMs: number;
  /** CPU time of the child (all its threads) during the measured work. */
  cpuMs: number;
  /** CPU time of this process (the simulator) while the child ran; set by {@link runChild}. */
  simulatorCpuMs: number;
  profiles: number;
  pages?: number;
  /** Rows written per profile (the bare-sqlite job). */
  rowsPerProfile?: number | null;
  maxRssMb: number;
  threads: { mainMs: number; busiestOtherMs: number; restMs: number } | null;
}

/**
 * Writes the page cache's dirty pages to disk (`sync(1)`), so that a measured job does not wait
 * for the write-back of the job before it (a full sync leaves hundreds of MB behind, and its
 * checkpoints' fsyncs would queue behind them). Where there is no `sync` command, nothing.
 */
function flushDirtyPages(): void {
  // child-process-check: coreutils sync(1), not a Node program (Node has no call for sync(2)).
  spawnSync('sync', { stdio: 'ignore' });
}

/** A child program of this benchmark and the Node options it runs with. */
interface ChildProgram {
  script: string;
  nodeOptions: readonly string[];
}

/** bench/sync-child.ts, with the CLI's Node options, since it stands in for the CLI. */
const SYNC_CHILD: ChildProgram = { script: 'sync-child.js', nodeOptions: CLI_NODE_OPTIONS };

/** bench/bare-undici-loop.ts, on plain `node`, as a hand-written script would run. */
const BARE_UNDICI_CHILD: ChildProgram = { script: 'bare-undici-loop.js', nodeOptions: [] };

/** bench/bare-fetch-loop.ts (Node's built-in `fetch`), on plain `node` too. */
const BARE_FETCH_CHILD: ChildProgram = { script: 'bare-fetch-loop.js', nodeOptions: [] };

/** Runs one measured job in a child process of `program`. */
function runChild(job: Record<string, unknown>, program: ChildProgram = SYNC_CHILD): Promise<ChildOutput> {
  flushDirtyPages();
  const cpuStart = process.cpuUsage();
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        ...program.nodeOptions,
        ...(process.env.BENCH_CHILD_ARGS?.split(' ').filter(Boolean) ?? []),
        join(import.meta.dirname, program.script),
      ],
      {
        env: { ...process.env, BENCH_JOB: JSON.stringify(job) },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`bench child failed (${code}): ${err}`));
      else {
        const used = process.cpuUsage(cpuStart);
        const output = JSON.parse(out.trim().split('\n').pop()!) as Omit<ChildOutput, 'simulatorCpuMs'>;
        resolve({ ...output, simulatorCpuMs: (used.user + used.system) / 1000 });
      }
    });
  });
}

/** Runs `work` with the simulator delaying every request by `latencyMs`, then clears the delay. */
async function withLatency<T>(sim: RunningSimulator, latencyMs: number, work: () => Promise<T>): Promise<T> {
  if (latencyMs > 0) sim.control.setFaults([{ kind: 'latency', latencyMs }]);
  try {
    return await work();
  } finally {
    sim.control.clearFaults();
  }
}

/**
 * With the service `latencyMs` away: `rounds` times the bare undici loop, a full sync into an
 * empty mirror and the undici loop again, then the bare client loop once, and with `withFetchLoop`
 * the bare fetch loop once after it. The point's figures are
 * those of the round with the median ratio, whose mirror is left in `syncDir` for a later run;
 * `fullMaxRssMb` is the highest peak RSS of any round's sync.
 */
async function measureAtLatency(
  sim: RunningSimulator,
  latencyMs: number,
  domains: number,
  dir: string,
  concurrency: number,
  rounds = 1,
  withFetchLoop = false,
): Promise<{ point: LatencyPoint; syncDir: string; fullMaxRssMb: number }> {
  return withLatency(sim, latencyMs, async () => {
    const base = { baseUrl: sim.baseUrl, apiKey: sim.apiKey, concurrency };
    // The sync runs right between the undici loop's two runs, and the client loop (reported only)
    // after all of them, so that nothing else stands between the target's two sides.
    const measured: Array<{
      full: ChildOutput;
      sync: RateFigures;
      syncDir: string;
      bareUndici: RateFigures;
      round: LatencyRound;
    }> = [];
    for (let i = 0; i < rounds; i++) {
      const undiciBefore = rateFigures(await runChild(base, BARE_UNDICI_CHILD));
      const syncDir = await mkdtemp(join(dir, `sync-${latencyMs}ms-`));
      const full = await runChild({ ...base, mode: 'sync-full', dir: syncDir });
      const undiciAfter = rateFigures(await runChild(base, BARE_UNDICI_CHILD));
      const bareUndici = meanFigures(undiciBefore, undiciAfter);
      const sync = rateFigures(full);
      measured.push({
        full,
        sync,
        syncDir,
        bareUndici,
        round: {
          ratio: round(rateOf(full) / bareUndici.profilesPerSecond, 3),
          cpuRatio: round(sync.cpuUsPerProfile / bareUndici.cpuUsPerProfile, 2),
          syncProfilesPerSecond: sync.profilesPerSecond,
          syncCpuUsPerProfile: sync.cpuUsPerProfile,
          bareUndiciRuns: [undiciBefore.profilesPerSecond, undiciAfter.profilesPerSecond],
          bareUndiciCpuUsPerProfile: bareUndici.cpuUsPerProfile,
        },
      });
    }
    const bare = await runChild({
      ...base,
      mode: 'bare-loop',
      dir: await mkdtemp(join(dir, `bare-${latencyMs}ms-`)),
    });
    const bareFetch = withFetchLoop ? rateFigures(await runChild(base, BARE_FETCH_CHILD)) : undefined;
    const median = [...measured].sort((a, b) => a.round.ratio - b.round.ratio)[Math.floor(rounds / 2)]!;
    // Only the median round's mirror is kept (each is hundreds of MB).
    for (const m of measured) if (m !== median) await rm(m.syncDir, { recursive: true, force: true });
    return {
      point: {
        latencyMs,
        domains,
        full: median.sync,
        bareUndici: median.bareUndici,
        bareUndiciRuns: median.round.bareUndiciRuns,
        bareLoop: rateFigures(bare),
        ratio: median.round.ratio,
        clientRatio: round(rateOf(median.full) / rateOf(bare), 3),
        ...(bareFetch === undefined
          ? {}
          : {
              bareFetch,
              fetchRatio: round(rateOf(median.full) / bareFetch.profilesPerSecond, 3),
              fetchCpuRatio: round(median.sync.cpuUsPerProfile / bareFetch.cpuUsPerProfile, 2),
            }),
        ...(rounds > 1 ? { rounds: measured.map((m) => m.round) } : {}),
      },
      syncDir: median.syncDir,
      fullMaxRssMb: Math.max(...measured.map((m) => m.full.maxRssMb)),
    };
  });
}

/**
 * The loopback point on a fresh {@link SWEEP_DOMAINS}-domain simulator, canonical or in quirks
 * mode ({@link SyncBenchResult.spellings}); its mirror is removed.
 */
async function measureOnSmallCatalogue(
  quirks: boolean,
  dir: string,
  concurrency: number,
): Promise<LatencyPoint> {
  const sim = await startSimulator({ domains: SWEEP_DOMAINS, seed: 1, quirks });
  try {
    const { point, syncDir } = await measureAtLatency(sim, 0, SWEEP_DOMAINS, dir, concurrency, TARGET_ROUNDS);
    await rm(syncDir, { recursive: true, force: true });
    return point;
  } finally {
    await sim.close();
  }
}

/** Profiles per second of a measured job. */
function rateOf(job: ChildOutput): number {
  return job.profiles / (job.elapsedMs / 1000);
}

function rateFigures(job: ChildOutput): RateFigures {
  return {
    profiles: job.profiles,
    seconds: round(job.elapsedMs / 1000, 1),
    profilesPerSecond: Math.round(rateOf(job)),
    peakRssMb: Math.round(job.maxRssMb),
    cpuUsPerProfile: Math.round((job.cpuMs * 1000) / job.profiles),
    simulatorCpuUsPerProfile: Math.round((job.simulatorCpuMs * 1000) / job.profiles),
    threadsUsPerProfile: job.threads && {
      main: Math.round((job.threads.mainMs * 1000) / job.profiles),
      busiestOther: Math.round((job.threads.busiestOtherMs * 1000) / job.profiles),
      rest: Math.round((job.threads.restMs * 1000) / job.profiles),
    },
  };
}

/** Two runs of the same job as one: mean rate and CPU, the higher peak RSS. */
function meanFigures(a: RateFigures, b: RateFigures): RateFigures {
  const mean = (x: number, y: number): number => Math.round((x + y) / 2);
  return {
    profiles: a.profiles,
    seconds: round((a.seconds + b.seconds) / 2, 1),
    profilesPerSecond: mean(a.profilesPerSecond, b.profilesPerSecond),
    peakRssMb: Math.max(a.peakRssMb, b.peakRssMb),
    cpuUsPerProfile: mean(a.cpuUsPerProfile, b.cpuUsPerProfile),
    simulatorCpuUsPerProfile: mean(a.simulatorCpuUsPerProfile, b.simulatorCpuUsPerProfile),
    threadsUsPerProfile:
      a.threadsUsPerProfile && b.threadsUsPerProfile
        ? {
            main: mean(a.threadsUsPerProfile.main, b.threadsUsPerProfile.main),
            busiestOther: mean(a.threadsUsPerProfile.busiestOther, b.threadsUsPerProfile.busiestOther),
            rest: mean(a.threadsUsPerProfile.rest, b.threadsUsPerProfile.rest),
          }
        : null,
  };
}

/** Runs the sync benchmark; see the file comment for what is measured. */
export async function runSyncBench(options: SyncBenchOptions = {}): Promise<SyncBenchResult> {
  const domains = options.domains ?? 100_000;
  const concurrency = options.concurrency ?? 8;
  const sim = await startSimulator({ domains, seed: 1 });
  const dir = await mkdtemp(join(tmpdir(), 'domain-sync-bench-sync-'));
  try {
    const {
      point: loopback,
      syncDir,
      fullMaxRssMb,
    } = await measureAtLatency(sim, 0, domains, dir, concurrency, TARGET_ROUNDS, true);

    sim.control.advanceClock(86_400_000);
    const all = sim.control.truth.listDomains();
    const changed = Math.round(domains / 100);
    const step = Math.floor(all.length / changed);
    for (let i = 0; i < changed; i++) sim.control.mutate.reenrich(all[i * step]!);
    sim.control.resetLogs();
    const incremental = await runChild({
      baseUrl: sim.baseUrl,
      apiKey: sim.apiKey,
      concurrency,
      mode: 'sync-incremental',
      dir: syncDir,
    });
    const usage = sim.control.usage();
    const profileRequests = usage.filter((u) => u.endpoint === 'GET /domains/:domain').length;
    const listingPages = usage.filter((u) => u.endpoint === 'GET /domains').length;

    const remote = (await measureAtLatency(sim, SERVICE_LATENCY_MS, domains, dir, concurrency, TARGET_ROUNDS))
      .point;
    const high = await measureAtLatency(
      sim,
      SERVICE_LATENCY_MS,
      domains,
      dir,
      HIGH_CONCURRENCY,
      TARGET_ROUNDS,
      true,
    );
    const remoteHigh = { ...high.point, concurrency: HIGH_CONCURRENCY };
    const sweep: LatencyPoint[] = [];
    const small = await startSimulator({ domains: SWEEP_DOMAINS, seed: 1 });
    try {
      for (const latencyMs of SWEEP_LATENCIES_MS)
        sweep.push((await measureAtLatency(small, latencyMs, SWEEP_DOMAINS, dir, concurrency)).point);
    } finally {
      await small.close();
    }

    const spellings = {
      canonical: await measureOnSmallCatalogue(false, dir, concurrency),
      quirks: await measureOnSmallCatalogue(true, dir, concurrency),
    };

    // (e): the same full syncs with the profile writes discarded, each beside its bare loop above.
    const discarding = (latencyMs: number, jobConcurrency: number): Promise<RateFigures> =>
      withLatency(sim, latencyMs, async () => {
        const jobDir = await mkdtemp(join(dir, `discard-${latencyMs}ms-`));
        try {
          const job = await runChild({
            baseUrl: sim.baseUrl,
            apiKey: sim.apiKey,
            concurrency: jobConcurrency,
            mode: 'sync-discard-profiles',
            dir: jobDir,
          });
          return rateFigures(job);
        } finally {
          await rm(jobDir, { recursive: true, force: true });
        }
      });
    const discardHigh = await discarding(SERVICE_LATENCY_MS, HIGH_CONCURRENCY);
    const discardLoopback = await discarding(0, concurrency);

    // (d) last, after every timed sync, so that its writes cannot slow one of them down; the
    // profiles are those of the last full sync of the big catalogue.
    const source = join(high.syncDir, 'mirror.sqlite');
    const floorJob = async (mode: WriterFloorMode): Promise<ChildOutput> => {
      const jobDir = await mkdtemp(join(dir, `${mode}-`));
      try {
        return await runChild({ mode, source, dir: jobDir });
      } finally {
        await rm(jobDir, { recursive: true, force: true });
      }
    };
    const writerAlone = await floorJob('writer-alone');
    const writerAloneIndexed = await floorJob('writer-alone-indexed');
    const writerAlone4KiB = await floorJob('writer-alone-4k');
    const writerAlonePerBatch = await floorJob('writer-alone-per-batch');
    const bareSqlite = await floorJob('bare-sqlite');
    const bareSqliteContract = await floorJob('bare-sqlite-contract');
    const writerAloneKeyOrder = await floorJob('writer-alone-key-order');
    const bareSqliteKeyOrder = await floorJob('bare-sqlite-key-order');
    const usPerProfile = (job: ChildOutput): number => Math.round((job.cpuMs * 1000) / job.profiles);

    // (g) after everything else, on a simulator of its own.
    const largeDomains = options.largeDomains ?? LARGE_DOMAINS;
    let large: LatencyPoint | undefined;
    if (largeDomains > 0) {
      const big = await startSimulator({ domains: largeDomains, seed: 1 });
      try {
        const measured = await measureAtLatency(big, 0, largeDomains, dir, concurrency);
        await rm(measured.syncDir, { recursive: true, force: true });
        large = measured.point;
      } finally {
        await big.close();
      }
    }

    const requestRatio = round(profileRequests / changed, 3);
    const cpuRatio = round(loopback.full.cpuUsPerProfile / loopback.bareUndici.cpuUsPerProfile, 2);
    return {
      name: 'sync',
      domains,
      concurrency,
      full: loopback.full,
      bareUndici: loopback.bareUndici,
      bareUndiciRuns: loopback.bareUndiciRuns,
      bareLoop: loopback.bareLoop,
      ...(loopback.bareFetch === undefined
        ? {}
        : {
            bareFetch: loopback.bareFetch,
            loopbackFetchRatio: loopback.fetchRatio!,
            cpuFetchRatio: loopback.fetchCpuRatio!,
          }),
      cores: availableParallelism(),
      loopbackRatio: loopback.ratio,
      loopbackClientRatio: loopback.clientRatio,
      loopbackRounds: loopback.rounds ?? [],
      remote,
      remoteHigh,
      sweep,
      spellings,
      ...(large === undefined ? {} : { large }),
      incremental: {
        changed,
        profileRequests,
        listingPages,
        requestRatio,
        seconds: round(incremental.elapsedMs / 1000, 1),
        peakRssMb: Math.round(incremental.maxRssMb),
      },
      cpuRatio,
      cpuClientRatio: round(loopback.full.cpuUsPerProfile / loopback.bareLoop.cpuUsPerProfile, 2),
      withoutProfileWrites: {
        high: {
          ...discardHigh,
          ratio: round(discardHigh.profilesPerSecond / remoteHigh.bareUndici.profilesPerSecond, 3),
        },
        loopback: {
          ...discardLoopback,
          cpuRatio: round(discardLoopback.cpuUsPerProfile / loopback.bareUndici.cpuUsPerProfile, 2),
        },
      },
      writerFloor: {
        rowsPerProfile: bareSqlite.rowsPerProfile ?? 0,
        writerAloneUsPerProfile: usPerProfile(writerAlone),
        writerAloneIndexedUsPerProfile: usPerProfile(writerAloneIndexed),
        writerAlone4KiBUsPerProfile: usPerProfile(writerAlone4KiB),
        writerAlonePerBatchUsPerProfile: usPerProfile(writerAlonePerBatch),
        bareSqliteUsPerProfile: usPerProfile(bareSqlite),
        lowestCpuRatio: round(
          (loopback.bareUndici.cpuUsPerProfile + usPerProfile(bareSqlite)) /
            loopback.bareUndici.cpuUsPerProfile,
          2,
        ),
        bareSqliteContractUsPerProfile: usPerProfile(bareSqliteContract),
        lowestContractCpuRatio: round(
          (loopback.bareUndici.cpuUsPerProfile + usPerProfile(bareSqliteContract)) /
            loopback.bareUndici.cpuUsPerProfile,
          2,
        ),
        writerAloneKeyOrderUsPerProfile: usPerProfile(writerAloneKeyOrder),
        bareSqliteKeyOrderUsPerProfile: usPerProfile(bareSqliteKeyOrder),
      },
      targets: {
        ratioMin: 0.9,
        loopbackRatioMin: 0.5,
        cpuRatioMax: 2.5,
        requestRatioMax: 1.05,
        peakRssMbMax: 300,
      },
      meetsTargets: {
        ratio: remote.ratio >= 0.9,
        ratioHigh: remoteHigh.ratio >= 0.9,
        loopbackRatio: loopback.ratio >= 0.5,
        cpuRatio: cpuRatio <= 2.5,
        requestRatio: requestRatio <= 1.05,
        peakRss: fullMaxRssMb < 300,
      },
    };
  } finally {
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const domains = process.argv[2] ? Number(process.argv[2]) : undefined;
  const largeDomains = process.argv[3] ? Number(process.argv[3]) : undefined;
  runSyncBench({
    ...(domains ? { domains } : {}),
    ...(largeDomains !== undefined ? { largeDomains } : {}),
  }).then(
    (result) => console.log(JSON.stringify(result, null, 2)),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
