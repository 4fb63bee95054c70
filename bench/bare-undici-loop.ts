/**
 * Child process of the sync benchmark: the bare loop a user would write by hand with undici, the
 * baseline of the sync targets. It pages through `GET /domains` (500 per page), then fetches every
 * profile with `undici.request` on `concurrency` lanes and parses each body as JSON; nothing is
 * validated, kept or written. It imports nothing of domain-sync and runs on plain `node` (Node's
 * own heap settings, not the CLI's), as such a script would. Prints one JSON line like
 * sync-child.ts: elapsed and CPU time of the profile fetches (the listing is not timed, as in the
 * bare client loop), per-thread CPU, profiles and peak RSS.
 * Input: BENCH_JOB (JSON) = { baseUrl, apiKey, concurrency }.
 */
// The bare baseline needs undici itself; only the benchmarks and src/api/http-transport.ts send through it.
import { Agent, request } from 'undici';
import { measured, onLanes, printResult, runChildMain } from './child-measure.js';

interface Job {
  baseUrl: string;
  apiKey: string;
  concurrency: number;
}

async function main(): Promise<void> {
  const job = JSON.parse(process.env.BENCH_JOB ?? '{}') as Job;
  const dispatcher = new Agent({ connections: job.concurrency });
  const headers = { 'x-api-key': job.apiKey, accept: 'application/json' };
  const getJson = async (path: string): Promise<unknown> => {
    const response = await request(`${job.baseUrl}${path}`, { dispatcher, headers });
    if (response.statusCode !== 200) {
      await response.body.dump();
      throw new Error(`GET ${path}: status ${response.statusCode}`);
    }
    return response.body.json();
  };

  const domains: string[] = [];
  for (let page = 1; ; page++) {
    const { data } = (await getJson(`/domains?per_page=500&page=${page}`)) as {
      data: { domains: { domain_normalized: string }[]; total: number };
    };
    for (const summary of data.domains) domains.push(summary.domain_normalized);
    if (data.domains.length === 0 || domains.length >= data.total) break;
  }

  const { elapsedMs, cpuMs, threads } = await measured(() =>
    onLanes(domains, job.concurrency, (domain) => getJson(`/domains/${encodeURIComponent(domain)}`)),
  );
  await dispatcher.close();
  printResult({ elapsedMs, cpuMs, threads, profiles: domains.length });
}

runChildMain(main);
