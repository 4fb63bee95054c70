/**
 * `npm run bench -- sync` (issue 3): against one 100,000-domain simulator catalogue,
 * (a) profiles/s of a full `sync` vs a bare client loop fetching the same profiles at the same
 *     concurrency (target ≥ 0.8: the mirror must not be the bottleneck);
 * (b) an incremental run after 1% of domains changed: profile requests ≤ 1.05 × changed;
 * (c) peak RSS of the full sync < 300 MB.
 * The simulator runs in this process; each measured job runs in its own child process.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimulator } from '../src/simulator/index.js';

export interface SyncBenchOptions {
  /** @default 100000 */
  domains?: number;
  /** @default 8 */
  concurrency?: number;
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
  full: RateFigures;
  bareLoop: RateFigures;
  /** Cores of this machine: the simulator and the measured process share them. */
  cores: number;
  ratio: number;
  incremental: {
    changed: number;
    profileRequests: number;
    listingPages: number;
    requestRatio: number;
    seconds: number;
    peakRssMb: number;
  };
  targets: { ratioMin: 0.8; requestRatioMax: 1.05; peakRssMbMax: 300 };
  meetsTargets: { ratio: boolean; requestRatio: boolean; peakRss: boolean };
}

interface ChildOutput {
  elapsedMs: number;
  /** CPU time of the child (all its threads) during the measured work. */
  cpuMs: number;
  /** CPU time of this process (the simulator) while the child ran; set by {@link runChild}. */
  simulatorCpuMs: number;
  profiles: number;
  pages?: number;
  maxRssMb: number;
  threads: { mainMs: number; busiestOtherMs: number; restMs: number } | null;
}

function runChild(job: Record<string, unknown>): Promise<ChildOutput> {
  const cpuStart = process.cpuUsage();
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        ...(process.env.BENCH_CHILD_ARGS?.split(' ').filter(Boolean) ?? []),
        join(import.meta.dirname, 'sync-child.js'),
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

function rateFigures(job: ChildOutput, rate: number): RateFigures {
  return {
    profiles: job.profiles,
    seconds: round(job.elapsedMs / 1000, 1),
    profilesPerSecond: Math.round(rate),
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

const round = (n: number, digits = 3): number => Math.round(n * 10 ** digits) / 10 ** digits;

/** Runs the sync benchmark; see the file comment for what is measured. */
export async function runSyncBench(options: SyncBenchOptions = {}): Promise<SyncBenchResult> {
  const domains = options.domains ?? 100_000;
  const concurrency = options.concurrency ?? 8;
  const sim = await startSimulator({ domains, seed: 1 });
  const dir = await mkdtemp(join(tmpdir(), 'domain-sync-bench-sync-'));
  try {
    const base = { baseUrl: sim.baseUrl, apiKey: sim.apiKey, dir, concurrency };
    const bare = await runChild({ ...base, mode: 'bare-loop', dir: await mkdtemp(join(dir, 'bare-')) });
    const full = await runChild({ ...base, mode: 'sync-full' });

    sim.control.advanceClock(86_400_000);
    const all = sim.control.truth.listDomains();
    const changed = Math.round(domains / 100);
    const step = Math.floor(all.length / changed);
    for (let i = 0; i < changed; i++) sim.control.mutate.reenrich(all[i * step]!);
    sim.control.resetLogs();
    const incremental = await runChild({ ...base, mode: 'sync-incremental' });
    const usage = sim.control.usage();
    const profileRequests = usage.filter((u) => u.endpoint === 'GET /domains/:domain').length;
    const listingPages = usage.filter((u) => u.endpoint === 'GET /domains').length;

    const fullRate = full.profiles / (full.elapsedMs / 1000);
    const bareRate = bare.profiles / (bare.elapsedMs / 1000);
    const ratio = round(fullRate / bareRate);
    const requestRatio = round(profileRequests / changed);
    return {
      name: 'sync',
      domains,
      concurrency,
      full: rateFigures(full, fullRate),
      bareLoop: rateFigures(bare, bareRate),
      cores: availableParallelism(),
      ratio,
      incremental: {
        changed,
        profileRequests,
        listingPages,
        requestRatio,
        seconds: round(incremental.elapsedMs / 1000, 1),
        peakRssMb: Math.round(incremental.maxRssMb),
      },
      targets: { ratioMin: 0.8, requestRatioMax: 1.05, peakRssMbMax: 300 },
      meetsTargets: { ratio: ratio >= 0.8, requestRatio: requestRatio <= 1.05, peakRss: full.maxRssMb < 300 },
    };
  } finally {
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const domains = process.argv[2] ? Number(process.argv[2]) : undefined;
  runSyncBench({ ...(domains ? { domains } : {}) }).then(
    (result) => console.log(JSON.stringify(result, null, 2)),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
