/**
 * Child process of the sync benchmark: runs one measured job against a simulator started by
 * the parent and prints one JSON line. Kept apart so its RSS and CPU are its own.
 * Input: BENCH_JOB (JSON) = { mode: 'sync-full'|'sync-incremental'|'sync-discard-profiles'|'bare-loop',
 * baseUrl, apiKey, dir, concurrency },
 * or { mode: one of WRITER_FLOOR_MODES, source, dir } (bench/sync-writer-floor.ts).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { syncPipeline } from '../pipelines/sync.js';
import { createClient } from '../src/api/index.js';
import { loadConfig } from '../src/config/load.js';
import type { Mirror } from '../src/mirror/database.js';
import {
  openProfileWriter,
  type ProfileWriter,
  type ProfileWriterOptions,
} from '../src/mirror/profile-writer.js';
import { openRunContext } from '../src/runtime/run-context.js';
import { applyCliHeapSettings } from '../src/util/heap-growth.js';
import { isWriterFloorMode, runWriterFloor } from './sync-writer-floor.js';
import type { WriterFloorMode } from './sync-writer-floor.js';
import { measured, measureListingAndFetching, printResult, runChildMain } from './child-measure.js';

// The CLI's process setting (src/cli/main.ts), for every mode, so the child is the CLI's process.
applyCliHeapSettings();

interface Job {
  mode: 'sync-full' | 'sync-incremental' | 'sync-discard-profiles' | 'bare-loop' | WriterFloorMode;
  /** The synced mirror whose profiles the writer modes write again. */
  source?: string;
  baseUrl: string;
  apiKey: string;
  dir: string;
  concurrency: number;
}

async function main(): Promise<void> {
  const job = JSON.parse(process.env.BENCH_JOB ?? '{}') as Job;
  if (isWriterFloorMode(job.mode)) {
    const result = await runWriterFloor(job.mode, job.source!, join(job.dir, 'mirror.sqlite'));
    printResult({ ...result, threads: null });
    return;
  }
  const configPath = join(job.dir, 'config.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      api: { baseUrl: job.baseUrl, concurrency: job.concurrency, requestsPerSecond: 1_000_000 },
      database: { path: join(job.dir, 'mirror.sqlite') },
    }),
  );
  const { config, errors } = loadConfig({ env: {}, cwd: job.dir, configPath });
  if (!config) throw new Error(errors.join('; '));
  if (job.mode === 'bare-loop') {
    const client = createClient({
      baseUrl: job.baseUrl,
      apiKey: job.apiKey,
      concurrency: job.concurrency,
      requestsPerSecond: 1_000_000,
    });
    // Listing and fetching at once, timed together, as the bare undici loop and the sync are.
    async function* pages(): AsyncGenerator<string[]> {
      for await (const page of client.iterateDomainPages({}, { perPage: 500 }))
        yield page.domains.map((summary) => summary.domain_normalized);
    }
    const result = await measureListingAndFetching(pages(), job.concurrency, (domain) =>
      client.getDomain(domain),
    );
    await client.close();
    printResult(result);
    return;
  }
  const ctx = await openRunContext({ config, apiKey: job.apiKey });
  if (job.mode === 'sync-discard-profiles') ctx.openProfileWriter = openDiscardingWriter;
  const {
    value: result,
    elapsedMs,
    cpuMs,
    threads,
  } = await measured(() => syncPipeline(ctx, { full: job.mode !== 'sync-incremental' }));
  await ctx.close();
  if (result.status !== 'done' || result.failures.length > 0)
    throw new Error(
      `sync ended ${result.status}: ${JSON.stringify(result.error ?? result.failures.slice(0, 3))}`,
    );
  printResult({
    elapsedMs,
    cpuMs,
    threads,
    profiles: result.stats.profilesFetched,
    pages: result.stats.pages,
    stats: result.stats,
  });
}

/**
 * The sync's own writer thread, except that profiles are acknowledged without being sent to it:
 * listing pages and run stats are written as usual, profiles are not (no hand-off, no rows). A
 * full sync through it measures what the sync costs without its profile writes: the most the
 * fetching side allows, whatever the mirror.
 */
async function openDiscardingWriter(mirror: Mirror, options?: ProfileWriterOptions): Promise<ProfileWriter> {
  const writer = await openProfileWriter(mirror, options);
  return {
    writeSummaries: (summaries, listedAt) => writer.writeSummaries(summaries, listedAt),
    writeProfileTexts: async ({ texts }) => ({ profilesWritten: texts.length, failures: [] }),
    writeRunStats: (runId, stats) => writer.writeRunStats(runId, stats),
    get pending() {
      return writer.pending;
    },
    threadNice: writer.threadNice,
    waitForRoom: () => writer.waitForRoom(),
    drain: () => writer.drain(),
    close: () => writer.close(),
  };
}

runChildMain(main);
