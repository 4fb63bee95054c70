import { setMaxListeners } from 'node:events';
import { createClient, type DomainServiceApi } from '../api/index.js';
import type { Config } from '../config/config.js';
import type { Logger } from '../log/logger.js';
import { noopLogger } from '../log/logger.js';
import { openMirror, type Mirror } from '../mirror/database.js';
import {
  openProfileWriter,
  type ProfileWriter,
  type ProfileWriterOptions,
} from '../mirror/profile-writer.js';
import { systemClock, type Clock } from '../util/time.js';
import { noopProgress, type Progress } from './progress.js';

/** What every pipeline receives. */
export interface RunContext {
  config: Config;
  /** The service client's interface (tests and the demo pass the real client on the simulator). */
  api: DomainServiceApi;
  mirror: Mirror;
  logger: Logger;
  /** Aborted on SIGINT/SIGTERM: stop starting new work, finish at a safe point. */
  signal: AbortSignal;
  progress: Progress;
  clock: Clock;
  /**
   * Opens the writer a sync writes `mirror` through (src/mirror/profile-writer.ts). Set by
   * {@link openRunContext} as its `profileWriter` option says; a context built without it gets
   * the worker thread.
   */
  openProfileWriter?: (mirror: Mirror, options?: ProfileWriterOptions) => Promise<ProfileWriter>;
}

/** Options of {@link openRunContext}. */
export interface OpenRunContextOptions {
  config: Config;
  /** From `DOMAIN_SYNC_API_KEY`; never part of Config. */
  apiKey: string;
  /** Base URL (already checked); defaults to `config.api.baseUrl`. */
  baseUrl?: string;
  logger?: Logger;
  signal?: AbortSignal;
  progress?: Progress;
  clock?: Clock;
  /**
   * Where a sync's mirror writes run: `thread`, a worker thread with its own connection, so
   * fetching is not held up by writing; or `inline`, the calling thread (same store functions and
   * results; the tests run the sync both ways). @default 'thread'
   */
  profileWriter?: 'thread' | 'inline';
}

/** A {@link RunContext} that owns its client and mirror; `close()` releases both. */
export interface OwnedRunContext extends RunContext {
  close(): Promise<void>;
}

/** Builds the client from `config.api` and opens (and migrates) the mirror at `config.database.path`. */
export async function openRunContext(options: OpenRunContextOptions): Promise<OwnedRunContext> {
  const { config } = options;
  const logger = options.logger ?? noopLogger;
  const baseUrl = options.baseUrl ?? config.api.baseUrl;
  if (baseUrl === null) throw new Error('openRunContext: no base URL');
  const mirror = await openMirror(config.database.path, { logger });
  const client = createClient({
    baseUrl,
    apiKey: options.apiKey,
    authHeader: config.api.authHeader,
    timeoutMs: config.api.timeoutMs,
    maxRetries: config.api.maxRetries,
    concurrency: config.api.concurrency,
    requestsPerSecond: config.api.requestsPerSecond,
    pollIntervalMs: config.api.pollIntervalMs,
    queryParams: config.api.queryParams,
    logger: logger.child({ component: 'api' }),
  });
  const signal = options.signal ?? new AbortController().signal;
  // Every request in flight and every queued task listens to this one signal.
  setMaxListeners(0, signal);
  return {
    config,
    api: client,
    mirror,
    logger,
    signal,
    progress: options.progress ?? noopProgress,
    clock: options.clock ?? systemClock,
    openProfileWriter: (target, writerOptions) =>
      openProfileWriter(target, { ...writerOptions, inline: options.profileWriter === 'inline' }),
    async close() {
      await client.close();
      await mirror.close();
    },
  };
}
