/**
 * Child process of the sync benchmark: the same bare loop as bare-undici-loop.ts (bare-loop.ts),
 * each GET sent with Node's built-in `fetch` and its body parsed with `response.json()`: the way
 * most scripts written by hand for Node call an HTTP API, with no library to install. Reported
 * beside the targets for that comparison; the targets are judged against the undici loop, which
 * costs less CPU per request. It imports nothing of domain-sync and runs on plain `node`.
 * Input: BENCH_JOB (JSON) = { baseUrl, apiKey, concurrency }.
 */
import { bareLoopJob, runBareLoop } from './bare-loop.js';
import { runChildMain } from './child-measure.js';

async function main(): Promise<void> {
  const job = bareLoopJob();
  const headers = { 'x-api-key': job.apiKey, accept: 'application/json' };
  await runBareLoop(job, async (path) => {
    const response = await fetch(`${job.baseUrl}${path}`, { headers });
    if (response.status !== 200) {
      await response.arrayBuffer();
      throw new Error(`GET ${path}: status ${response.status}`);
    }
    return response.json();
  });
}

runChildMain(main);
