/**
 * Child process of the sync benchmark: the bare loop a user would write by hand with undici, the
 * baseline of the sync targets. It pages through `GET /domains` (500 per page) and, while it does,
 * fetches the profiles listed so far with `undici.request` on `concurrency` lanes, parsing each
 * body as JSON; nothing is validated, kept or written. It imports nothing of domain-sync and runs
 * on plain `node` (Node's own heap settings, not the CLI's), as such a script would. Prints one
 * JSON line like sync-child.ts: elapsed and CPU time of the whole job, listing included, as a
 * sync is timed (before 2026-11-27 only the profile fetches were timed, after an untimed listing,
 * while the sync's clock ran through its listing), per-thread CPU, profiles and peak RSS.
 * Input: BENCH_JOB (JSON) = { baseUrl, apiKey, concurrency }.
 */
// The bare baseline needs undici itself; only the benchmarks and src/api/http-transport.ts send through it.
import { Agent, request } from 'undici';
import { measureListingAndFetching, printResult, runChildMain } from './child-measure.js';

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

  async function* pages(): AsyncGenerator<string[]> {
    let listed = 0;
    for (let page = 1; ; page++) {
      const { data } = (await getJson(`/domains?per_page=500&page=${page}`)) as {
        data: { domains: { domain_normalized: string }[]; total: number };
      };
      listed += data.domains.length;
      yield data.domains.map((summary) => summary.domain_normalized);
      if (data.domains.length === 0 || listed >= data.total) return;
    }
  }

  const result = await measureListingAndFetching(pages(), job.concurrency, (domain) =>
    getJson(`/domains/${encodeURIComponent(domain)}`),
  );
  await dispatcher.close();
  printResult(result);
}

runChildMain(main);
