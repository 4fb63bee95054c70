/**
 * Child process of the sync benchmark: the bare loop a user would write by hand with undici, the
 * baseline of the sync targets (bare-loop.ts: listing and fetching on lanes, as a sync does),
 * each GET sent with `undici.request` and its body parsed as JSON. It imports nothing of
 * domain-sync and runs on plain `node` (Node's own heap settings, not the CLI's), as such a script
 * would. Before 2026-11-27 only the profile fetches were timed, after an untimed listing, while
 * the sync's clock ran through its listing. Input: BENCH_JOB (JSON) = { baseUrl, apiKey, concurrency }.
 */
// The bare baseline needs undici itself; only the benchmarks and src/api/http-transport.ts send through it.
import { Agent, request } from 'undici';
import { bareLoopJob, runBareLoop } from './bare-loop.js';
import { runChildMain } from './child-measure.js';

async function main(): Promise<void> {
  const job = bareLoopJob();
  const dispatcher = new Agent({ connections: job.concurrency });
  const headers = { 'x-api-key': job.apiKey, accept: 'application/json' };
  await runBareLoop(job, async (path) => {
    const response = await request(`${job.baseUrl}${path}`, { dispatcher, headers });
    if (response.statusCode !== 200) {
      await response.body.dump();
      throw new Error(`GET ${path}: status ${response.statusCode}`);
    }
    return response.body.json();
  });
  await dispatcher.close();
}

runChildMain(main);
