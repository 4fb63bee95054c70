/**
 * Child process of the sync benchmark: runs one measured job against a simulator started by
 * the parent and prints one JSON line. Kept apart so its RSS and CPU are its own.
 * Input: BENCH_JOB (JSON) = { mode: 'sync-full'|'sync-incremental'|'bare-loop', baseUrl, apiKey, dir, concurrency }.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { syncPipeline } from '../pipelines/sync.js';
import { createClient } from '../src/api/index.js';
import { loadConfig } from '../src/config/load.js';
import { openRunContext } from '../src/runtime/run-context.js';

interface Job {
  mode: 'sync-full' | 'sync-incremental' | 'bare-loop';
  baseUrl: string;
  apiKey: string;
  dir: string;
  concurrency: number;
}

async function main(): Promise<void> {
  const job = JSON.parse(process.env.BENCH_JOB ?? '{}') as Job;
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
    const domains: string[] = [];
    for await (const summary of client.iterateDomains({}, { perPage: 500 }))
      domains.push(summary.domain_normalized);
    const started = performance.now();
    const cpuStart = process.cpuUsage();
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < domains.length) {
        const domain = domains[next++]!;
        await client.getDomain(domain);
      }
    };
    await Promise.all(Array.from({ length: job.concurrency }, lane));
    const elapsedMs = performance.now() - started;
    const cpuMs = cpuMsSince(cpuStart);
    await client.close();
    print({ elapsedMs, cpuMs, profiles: domains.length });
    return;
  }
  const ctx = await openRunContext({ config, apiKey: job.apiKey });
  const started = performance.now();
  const cpuStart = process.cpuUsage();
  const result = await syncPipeline(ctx, { full: job.mode === 'sync-full' });
  const elapsedMs = performance.now() - started;
  const cpuMs = cpuMsSince(cpuStart);
  await ctx.close();
  if (result.status !== 'done' || result.failures.length > 0)
    throw new Error(
      `sync ended ${result.status}: ${JSON.stringify(result.error ?? result.failures.slice(0, 3))}`,
    );
  print({
    elapsedMs,
    cpuMs,
    profiles: result.stats.profilesFetched,
    pages: result.stats.pages,
    stats: result.stats,
  });
}

/** CPU time (user + system, all threads of this process) since `start`, in ms. */
function cpuMsSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

function print(fields: Record<string, unknown>): void {
  const maxRssMb = process.resourceUsage().maxRSS / 1024;
  process.stdout.write(`${JSON.stringify({ ...fields, maxRssMb })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
