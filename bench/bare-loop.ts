/**
 * What the sync benchmark's two bare loops share (bare-undici-loop.ts, bare-fetch-loop.ts): the
 * loop a user would write by hand, given how it sends one GET and parses the JSON body. It pages
 * through `GET /domains` (500 per page) and, while it does, fetches the profiles listed so far on
 * `concurrency` lanes; nothing is validated, kept or written. Prints one JSON line like
 * sync-child.ts: elapsed and CPU time of the whole job, listing included, as a sync is timed,
 * per-thread CPU, profiles and peak RSS.
 */
import { measureListingAndFetching, printResult } from './child-measure.js';

/** The job a bare loop is given in BENCH_JOB. */
export interface BareLoopJob {
  baseUrl: string;
  apiKey: string;
  concurrency: number;
}

/** The job of this child process (BENCH_JOB, JSON). */
export function bareLoopJob(): BareLoopJob {
  return JSON.parse(process.env.BENCH_JOB ?? '{}') as BareLoopJob;
}

/** Lists and fetches every profile of the job's service with `getJson`, then prints the result line. */
export async function runBareLoop(
  job: BareLoopJob,
  getJson: (path: string) => Promise<unknown>,
): Promise<void> {
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
  printResult(result);
}
