import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString, type HeapSpaceInfo } from 'node:v8';

/**
 * V8's heap growing factor for domain-sync processes, as a percentage over 1 (60 → ×1.6).
 *
 * A sync or an export load allocates a steady stream of short-lived objects (response bodies,
 * parsed profiles, rows), and some of them live just long enough to be promoted. V8's own factor
 * lets the old generation grow up to 4× its live size before a full collection, so the heap swung
 * between its live data and four times that between collections. With a fixed ×1.6, V8 collects
 * once the old generation reaches 1.6 times what survived the previous collection.
 * On a full sync of 100,000 simulator profiles with no service latency this gave a clearly lower
 * peak RSS than V8's default, and a lower one than ×2. The price is CPU for the more frequent
 * collections, on the main, writer and V8 helper threads alike: more CPU per profile. That only
 * slows a sync whose machine is CPU-bound; against a remote service the sync waits for the network.
 * The sync benchmark reports the current peak RSS and CPU per profile (docs/benchmarks.md "sync").
 */
export const HEAP_GROWING_PERCENT = 60;

/**
 * Sets {@link HEAP_GROWING_PERCENT} for this process and every worker thread it starts. It only
 * changes how early V8 collects; it never limits the heap, so a job that needs more memory still
 * gets it. Heap tuning is the CLI's choice, not the package's: the CLI entry point
 * (`src/cli/main.ts`) calls this once before any work, and the benchmarks call it to measure
 * what the CLI runs; the package entry (`src/index.ts`) does not export it.
 */
export function limitHeapGrowth(percent: number = HEAP_GROWING_PERCENT): void {
  setFlagsFromString(`--heap-growing-percent=${Math.max(1, Math.trunc(percent))}`);
}

/**
 * The CLI's memory settings for its process, once before any work: {@link limitHeapGrowth}
 * (unless node was given a heap growing factor of its own, the operator's choice) and
 * {@link capYoungGeneration}. `src/cli/main.ts` calls it, and so does each benchmark child that
 * stands for a CLI command.
 */
export function applyCliHeapSettings(execArgv: readonly string[] = process.execArgv): void {
  if (!execArgv.some((arg) => /^--heap[-_]growing[-_]percent\b/.test(arg))) limitHeapGrowth();
  capYoungGeneration(execArgv);
}

/** The semi-space size, in MB, that the CLI holds the young generation to. */
export const CLI_SEMI_SPACE_MB = 8;

/**
 * The semi-space size, in MB, that `snapshot` lets the young generation grow to: each row group
 * it buffers (100,000 rows) outlives many collections of a small young generation. Against 8 MB
 * it takes less time and CPU for more memory (figures: docs/operations.md, "Speed and memory").
 */
export const SNAPSHOT_SEMI_SPACE_MB = 32;

/** The shebang's `--max-semi-space-size`: the most any command gets ({@link SNAPSHOT_SEMI_SPACE_MB}). */
export const CLI_MAX_SEMI_SPACE_MB = SNAPSHOT_SEMI_SPACE_MB;

/**
 * Node options the `domain-sync` binary starts with, from its shebang line (`src/cli/main.ts`,
 * `#!/usr/bin/env -S node …`), because V8 reads them only when the process starts.
 *
 * `--max-semi-space-size=32` caps each of the young generation's two semi-spaces at 32 MB, the
 * most any command gets: `snapshot` ({@link SNAPSHOT_SEMI_SPACE_MB}). Every other command is held
 * to 8 MB at run time ({@link capYoungGeneration}). Since Node 22, V8 sizes the young generation
 * from the machine's memory, and on a 24 GiB machine the sync's and the export load's stream of
 * short-lived objects (bodies, parsed profiles, rows) grew it far enough to add about 120 MB to a
 * full sync's peak RSS. With 8 MB, scavenges come more often and cost a little CPU; the sync and
 * export benchmarks report both (docs/benchmarks.md). The run-time cap is process-wide, so it
 * holds the mirror writer thread too, judged by the main thread's young generation. So a writer
 * whose young generation grows faster can pass it while the main thread's is small: in `sync
 * --full` of an existing mirror of 100,000 domains, the writer's reached 24 and 31 MB in two runs
 * of seven (Node 24, 2026-11-30); the one whose peak was recorded peaked at 226 MiB, against
 * 216–231 MiB in four runs where it stayed at the cap. And a writer started once the main thread
 * is at the cap stays small: in `run` of a pipeline with a fresh sync then a full one, the second
 * sync's writer ran about 2,000 scavenges where a writer of its own process runs about 260, yet
 * the pipeline used 29.2–29.9 s of CPU against 30.9–32.1 s for the same two syncs as two
 * processes (three alternating pairs).
 *
 * Starting the semi-spaces at 8 MB (`--min-semi-space-size=8`) with a growth factor of 1 would
 * make the cap V8's own, whatever a command does between turns of the event loop. It was tried
 * and not kept (2026-11-30, 100,000 domains, alternating with this on Nodes 22, 24 and 26): the
 * CLI's export of a CSV file peaked 7–20 MiB higher on every line (five pairs), and a full sync
 * on Node 22 19–21 MiB higher (two pairs), at a CPU time within the runs' spread.
 *
 * `--v8-pool-size=0` lets Node size V8's pool of helper threads (parallel and concurrent garbage
 * collection, background compilation) from the machine: one fewer than the cores, at least one.
 * Node's default is four whatever the machine, and on a 2-core machine four helpers woken at once
 * by each collection queued for the cores that the main thread, the mirror writer and, on
 * loopback, the simulator needed (docs/benchmarks.md "sync"). Measured ad hoc on 2026-11-25 on 2
 * cores (alternating runs of a full sync of 40,000 domains, where this option gives one helper):
 * with the service 10 ms away at concurrency 32, 1,815, 1,829 and 1,830 profiles/s against 1,795,
 * 1,778 and 1,800 with four; on loopback, 2,888, 2,924 and 2,646 against 2,496, 2,863 and 2,651;
 * CPU per profile within 3 % and peak RSS within 10 MB of each other.
 *
 * Running `node dist/src/cli/main.js` bypasses the shebang: V8's helper pool is then Node's
 * default, and the young generation is held at run time all the same. The benchmarks start their
 * stand-ins for the CLI with these options and call the same functions as the CLI.
 */
export const CLI_NODE_OPTIONS: readonly string[] = Object.freeze([
  `--max-semi-space-size=${CLI_MAX_SEMI_SPACE_MB}`,
  '--v8-pool-size=0',
]);

/** Node options (given to node itself or in `NODE_OPTIONS`) that size the young generation. */
const SEMI_SPACE_OPTION = /--(max|min)[-_]semi[-_]space[-_]size\b|--semi[-_]space[-_]growth[-_]factor\b/;

/**
 * Holds the young generation of this process to what `--max-semi-space-size=8`
 * ({@link CLI_SEMI_SPACE_MB}) would give it, under the shebang's larger cap or with none
 * (`node dist/src/cli/main.js …`), until {@link raiseYoungGenerationCap}.
 *
 * V8 reads its own cap only when the process starts, but it reads its growth factor for the young
 * generation (`--semi-space-growth-factor`, by default 2) each time it grows it, which it does
 * after as many bytes as the young generation holds have survived collections, by at most that
 * factor. So this sets the factor to 1 (no growth) at once, and at each notice of a garbage
 * collection to 2 while the young generation's semi-space capacity is at most half the cap
 * ({@link youngGenerationMayGrow}), and to 1 above that: it ends between half the cap and the
 * cap. It sets the factor at every notice, not only when it changes: on Node 22 every worker
 * thread that starts sets it back to 2 for the whole process, and
 * {@link holdYoungGenerationCap} sets it again as soon as such a thread is online. Set only on a
 * change, as until 2026-11-30, it let a second sync in one process on Node 22 grow the young
 * generation of both threads to 64 MB (figures: docs/operations.md, "Speed and memory").
 *
 * The notices come on the event loop, and the factor one sets holds until the next: a command
 * that allocates for long without turning the loop while the factor is 2 can grow the young
 * generation past this cap (not past V8's own). With turns every 60,000 small objects it never
 * did, in 100 runs on Nodes 22, 24 and 26, with busy cores too
 * (test/integration/cli/young-generation-child.ts). The sync turns the loop for each response,
 * and the export load every 256 KiB of rows it reads (pipelines/export/key-order.ts). Read at
 * each notice (2026-11-30), `new_space` stayed at or under 18 MB during an export load on Nodes
 * 22, 24 and 26, and at or under 16.5 MB on the main and the writer thread during a full sync.
 * Started through node on a 24 GiB machine, a full sync peaks at about the RSS it has under the
 * shebang with this cap, and about 120 MB higher with none (figures: docs/operations.md, "Speed
 * and memory").
 *
 * Does nothing, and returns false, when node was started with a size or growth factor for the
 * young generation other than the shebang's (an operator's choice, which V8 then enforces).
 */
export function capYoungGeneration(
  execArgv: readonly string[] = process.execArgv,
  nodeOptionsEnv: string = process.env['NODE_OPTIONS'] ?? '',
): boolean {
  if (SEMI_SPACE_OPTION.test(nodeOptionsEnv)) return false;
  const sizing = execArgv.filter((option) => SEMI_SPACE_OPTION.test(option));
  const shebangs = `--max-semi-space-size=${CLI_MAX_SEMI_SPACE_MB}`;
  if (sizing.some((option) => option !== shebangs)) return false;
  let grow = false;
  const observer = new PerformanceObserver(() => {
    const newSpace = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
    if (newSpace !== undefined) grow = youngGenerationMayGrow(newSpace);
    holdYoungGenerationCap();
  });
  heldCap = { observer, hold: () => setFlagsFromString(`--semi-space-growth-factor=${grow ? 2 : 1}`) };
  holdYoungGenerationCap();
  observer.observe({ entryTypes: ['gc'] });
  return true;
}

/** What {@link youngGenerationCapacity} reads: V8's statistics of its `new_space`, in bytes. */
export type NewSpaceStatistics = Pick<
  HeapSpaceInfo,
  'space_size' | 'space_used_size' | 'space_available_size'
>;

/**
 * The young generation's semi-space capacity, in bytes, as far as V8's statistics tell it.
 *
 * V8 reports no capacity for its young generation; it is read two ways, and the larger taken:
 * what it holds plus what it has free (`space_used_size + space_available_size`), and half of
 * what it has committed (`space_size`). The first is a little under the semi-space's size (for
 * 8 MB: 8,247,296 bytes on Node 22, 8,388,096 on Nodes 24 and 26), and on Nodes 24 and 26 now and
 * then more for a while (up to 11.25 MB), which only holds the growth back until a later notice.
 * On Nodes 22 and 24 the committed size is twice the semi-space's. On Node 26 (V8 14) it is
 * committed as it is used, so it lags behind a growth: right after the semi-spaces grew to 8 MB
 * it read 7 MB, under half the cap. Deciding from the committed size alone, as until 2026-11-30,
 * set the factor back to 2 at the cap once in each of seven runs of the workload of
 * test/integration/cli/young-generation-child.ts on Node 26, and now and then V8 grew the
 * semi-spaces to 16 MB before the next notice set it to 1 again (a CI run, 2026-11-30: a 29.9 MB
 * young generation, the cap 16).
 */
export function youngGenerationCapacity(newSpace: NewSpaceStatistics): number {
  return Math.max(newSpace.space_used_size + newSpace.space_available_size, newSpace.space_size / 2);
}

/**
 * Whether the young generation may grow once more, by V8's factor of 2, and stay within
 * `semiSpaceBytes` (by default the CLI's {@link CLI_SEMI_SPACE_MB}): whether its semi-space
 * capacity ({@link youngGenerationCapacity}) is at most half that.
 */
export function youngGenerationMayGrow(
  newSpace: NewSpaceStatistics,
  semiSpaceBytes: number = CLI_SEMI_SPACE_MB * 1024 * 1024,
): boolean {
  return youngGenerationCapacity(newSpace) <= semiSpaceBytes / 2;
}

/** The cap {@link capYoungGeneration} holds: its GC observer, and how to set its factor again. */
let heldCap: { observer: PerformanceObserver; hold: () => void } | undefined;

/**
 * Sets V8's growth factor for the young generation again to what {@link capYoungGeneration}'s cap
 * needs, for code that has just started a worker thread (on Node 22 that sets it back to V8's
 * default for the whole process). Does nothing when no cap is held.
 */
export function holdYoungGenerationCap(): void {
  heldCap?.hold();
}

/**
 * Lets the young generation grow past {@link capYoungGeneration}'s cap for the rest of the
 * process, for a command whose objects live longer (`snapshot`): under the shebang to its
 * {@link CLI_MAX_SEMI_SPACE_MB} semi-spaces ({@link SNAPSHOT_SEMI_SPACE_MB}). Started without the
 * shebang, it gives the young generation back to V8's own sizing: such a command allocates for
 * long without turning the event loop, and a cap of 32 MB semi-spaces held by notices let
 * `new_space` grow from 8 to 128 MB before the first notice. Does nothing, and returns false,
 * when no cap of {@link capYoungGeneration} is in use.
 */
export function raiseYoungGenerationCap(): boolean {
  if (heldCap === undefined) return false;
  // Under the shebang, V8's own cap is the one `snapshot` gets. Without it, late notices could let
  // the young generation grow past any cap of ours: it goes back to V8's own sizing.
  heldCap.observer.disconnect();
  heldCap = undefined;
  setFlagsFromString('--semi-space-growth-factor=2');
  return true;
}
