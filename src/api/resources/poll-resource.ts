import { pollUntilSettled } from '../poll.js';
import type { PollOptions } from '../poll.js';
import type { ApiTransport } from '../transport.js';
import { resourceUrl } from '../transport.js';
import type { RequestOptions } from './domains.js';

/**
 * Polls `GET /<collection>/:id` through `get` until `isSettled`, with the transport's clock and
 * sleep (the shared body of `waitForEnrichmentRun` and `waitForExport`). The id or `poll_url` is
 * resolved once up front, so a foreign `poll_url` fails before the first request.
 */
export function pollResource<T extends { status: string }>(
  transport: ApiTransport,
  target: {
    collection: string;
    subject: string;
    get: (transport: ApiTransport, idOrPollUrl: string, options: RequestOptions) => Promise<T>;
    isSettled: (value: T) => boolean;
  },
  idOrPollUrl: number | string,
  options: Required<Pick<PollOptions<T>, 'pollIntervalMs' | 'maxPollIntervalMs' | 'deadlineMs'>> &
    PollOptions<T>,
): Promise<T> {
  const url = resourceUrl(transport, target.collection, idOrPollUrl);
  return pollUntilSettled(
    {
      subject: `${target.subject} ${String(idOrPollUrl)}`,
      fetch: (signal) => target.get(transport, url.pathAndQuery, { signal }),
      isSettled: target.isSettled,
      statusOf: (value) => value.status,
      now: () => transport.now(),
      sleep: (ms, signal) => transport.sleep(ms, signal),
    },
    options,
  );
}
