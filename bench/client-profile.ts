/**
 * Where the client benchmark's CPU goes: runs the two modes of bench/client.ts (the bare
 * `undici.request` loop and our client's `getDomain`) one after the other against one simulator in
 * this process, each under the inspector's CPU profiler, and groups their samples by what the
 * code does, in µs per request, for the "client" section of docs/benchmarks.md (CLIENT_PROFILE in
 * bench/run.ts).
 *
 * The simulator serves both modes in this process, as in the benchmark, so its share is in both
 * columns. A sample goes to the simulator when any frame of its stack is the simulator's code or
 * Node's HTTP server; otherwise to a group by its innermost frame. JSON.parse runs inlined into its
 * caller (undici's body reader in the bare loop, the transport's body reader in the client), so
 * "reading and parsing bodies" holds both callers' self time.
 *
 * `node dist/bench/client-profile.js [CONCURRENCY] [ROUNDS]` prints the table (defaults 8 and 8): each
 * round profiles each mode for a second, alternating which goes first.
 */
import { Session } from 'node:inspector/promises';
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { startSimulator } from '../src/simulator/index.js';
import { clientBenchModes, runLanes } from './client.js';
import type { Worker } from './client.js';
import { groupSamples, inCompiledZodValidator, isHttpFrame, samplesOf } from './cpu-profile-samples.js';
import type { CpuProfile, Sample } from './cpu-profile-samples.js';

/** The groups of the table. */
const GROUPS = {
  simulator: "the simulator (its code and Node's HTTP server)",
  http: 'HTTP client (undici, sockets)',
  body: "reading and parsing bodies (undici's body reader, JSON.parse)",
  validation: 'response validation (zod, with its timestamp pattern)',
  client: 'our client: transport, retries, limiter, URLs',
  async: 'promises, ticks, timers',
  gc: 'garbage collection',
  other: 'other (the loop itself, V8, Node internals)',
} as const;

/** The groups of the table, in its order. */
export const CLIENT_PROFILE_GROUPS: readonly string[] = Object.values(GROUPS);

const SIMULATOR = /\/dist\/src\/simulator\/|node:_http_(server|outgoing|incoming|common)|node:http$/;
const READ_BODY =
  /^(consumeEnd|consumeStart|consumePush|#readBody|readBodyText|parseJsonText|parse|JSON\.parse)$/;

/** A sample of the profiler being stopped at the end of a round. */
function isProfilerStop(sample: Sample): boolean {
  return sample.stack.some((f) => f.functionName === 'post' && f.url === 'node:inspector');
}

/** The group of one sample. */
function groupOf(sample: Sample): string {
  if (sample.stack.some((f) => SIMULATOR.test(f.url))) return GROUPS.simulator;
  const leaf = sample.stack[0];
  if (leaf === undefined) return GROUPS.other;
  const { url, functionName: fn } = leaf;
  if (fn === '(garbage collector)') return GROUPS.gc;
  if (READ_BODY.test(fn)) return GROUPS.body;
  if (/zod/.test(url) || fn.startsWith('RegExp') || inCompiledZodValidator(sample)) return GROUPS.validation;
  if (/\/dist\/src\/api\//.test(url)) return GROUPS.client;
  if (isHttpFrame(leaf)) return GROUPS.http;
  if (/runMicrotasks|nextTick|processTicksAndRejections|timers/.test(`${fn} ${url}`)) return GROUPS.async;
  return GROUPS.other;
}

/** µs per request of one mode, by group; idle time apart. */
export interface ModeProfile {
  requests: number;
  /** The innermost frames of the last group ("other"), µs per request, largest first. */
  otherLeaves: Array<[string, number]>;
  /** The innermost frames of the group of our client's own code, µs per request, largest first. */
  clientLeaves: Array<[string, number]>;
  idleMicrosPerRequest: number;
  groups: Record<string, number>;
}

/** Result of {@link profileClientBench}. */
export interface ClientProfile {
  concurrency: number;
  rounds: number;
  bare: ModeProfile;
  client: ModeProfile;
}

/** Profiles both modes of the client benchmark; see the file comment. */
export async function profileClientBench(concurrency = 8, rounds = 8): Promise<ClientProfile> {
  const sim = await startSimulator({ domains: 5000, seed: 7 });
  const domains = sim.control.truth.listDomains();
  const modes = clientBenchModes(sim, domains, concurrency);
  const session = new Session();
  session.connect();
  try {
    const run = async (worker: Worker, ms: number): Promise<number> =>
      (await runLanes(concurrency, ms, worker)).requests;
    // Warm both paths first, as the benchmark does.
    await run(modes.bare, 1500);
    await run(modes.client, 1500);
    await session.post('Profiler.enable');
    // Both modes are profiled in alternating rounds of a second (as the benchmark measures them),
    // so a stretch of time when this shared machine is slower weighs on both alike.
    const totals = {
      bare: { requests: 0, samples: [] as Sample[] },
      client: { requests: 0, samples: [] as Sample[] },
    };
    for (let round = 0; round < rounds; round++) {
      for (const mode of round % 2 === 0 ? (['bare', 'client'] as const) : (['client', 'bare'] as const)) {
        await session.post('Profiler.start');
        totals[mode].requests += await run(modes[mode], 1000);
        const { profile } = await session.post('Profiler.stop');
        totals[mode].samples.push(...samplesOf(profile as unknown as CpuProfile));
      }
    }
    const shares = ({ requests, samples }: { requests: number; samples: Sample[] }): ModeProfile => {
      const perRequest = (micros: number): number => Math.round((micros / requests) * 10) / 10;
      const idle = samples.filter((s) => s.stack[0]?.functionName === '(idle)');
      // The profiler's own work when a round stops it (inspector's `post`) is neither mode's.
      const busy = samples.filter((s) => s.stack[0]?.functionName !== '(idle)' && !isProfilerStop(s));
      const groups: Record<string, number> = {};
      for (const group of CLIENT_PROFILE_GROUPS) groups[group] = 0;
      for (const [group, micros] of groupSamples(busy, groupOf)) groups[group] = perRequest(micros);
      const leavesOf = (group: string): Array<[string, number]> =>
        groupSamples(
          busy.filter((s) => groupOf(s) === group),
          (s) => `${s.stack[0]?.functionName || '(anonymous)'} ${s.stack[0]?.url ?? ''}`,
        )
          .slice(0, 8)
          .map(([leaf, micros]): [string, number] => [leaf, perRequest(micros)]);
      return {
        requests,
        otherLeaves: leavesOf(GROUPS.other),
        clientLeaves: leavesOf(GROUPS.client),
        idleMicrosPerRequest: perRequest(idle.reduce((sum, s) => sum + s.micros, 0)),
        groups,
      };
    };
    const bare = shares(totals.bare);
    const viaClient = shares(totals.client);
    return { concurrency, rounds, bare, client: viaClient };
  } finally {
    session.disconnect();
    await modes.close();
    await sim.close();
  }
}

const entry = process.argv[1];
if (entry && import.meta.url === pathToFileURL(realpathSync(entry)).href) {
  const [concurrency, rounds] = process.argv.slice(2).map(Number);
  profileClientBench(concurrency || undefined, rounds || undefined)
    .then((r) => {
      const total = (m: ModeProfile): number =>
        Math.round(Object.values(m.groups).reduce((a, b) => a + b, 0) * 10) / 10;
      console.log(
        `concurrency ${r.concurrency}, ${r.rounds} rounds of a second per mode; µs per request (bare / client)`,
      );
      for (const group of CLIENT_PROFILE_GROUPS)
        console.log(`${group}\t${r.bare.groups[group]}\t${r.client.groups[group]}`);
      console.log(`total (idle apart)\t${total(r.bare)}\t${total(r.client)}`);
      console.log(`idle\t${r.bare.idleMicrosPerRequest}\t${r.client.idleMicrosPerRequest}`);
      console.log(`requests\t${r.bare.requests}\t${r.client.requests}`);
      for (const mode of ['bare', 'client'] as const) {
        console.log(`\n"other" of ${mode}, by innermost frame:`);
        for (const [leaf, micros] of r[mode].otherLeaves) console.log(`${leaf}\t${micros}`);
      }
      console.log(`\n"${GROUPS.client}" of client, by innermost frame:`);
      for (const [leaf, micros] of r.client.clientLeaves) console.log(`${leaf}\t${micros}`);
    })
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    });
}
