import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { S3DestinationConfig } from '../../config/destinations.js';
import type { Logger } from '../../log/logger.js';
import { noopLogger } from '../../log/logger.js';
import { redactText } from '../../log/redact.js';
import { AbortedError } from '../../util/domain-sync-error.js';
import type { Clock } from '../../util/time.js';
import { isoFromMs, systemClock } from '../../util/time.js';
import { DestinationError, StoreFailure } from './errors.js';
import { dataKey, destinationUrl, manifestKey, parseKey, rootPrefix } from './layout.js';
import { planRemoteRetention, planUploadDates } from './plan.js';
import { RetriesExhausted, RetryBudget, retryPolicyFor } from './retry.js';
import type { RetryPolicy } from './retry.js';
import type { OpenS3StoreOptions, S3Store } from './store.js';

/** Content type of the Parquet files (IANA, 2024). */
const PARQUET_CONTENT_TYPE = 'application/vnd.apache.parquet';

/** One table's file of a local snapshot date. */
export interface LocalSnapshotFile {
  table: string;
  /** The file on disk. */
  path: string;
  /** Its size on disk. */
  bytes: number;
  /**
   * Its SHA-256 (hex), when the caller knows it for these very bytes (the Parquet writer computes
   * it while writing); otherwise the file is read to compute it.
   */
  sha256?: string;
}

/** A snapshot date as the local snapshots dir holds it: its manifest and the files it lists. */
export interface LocalSnapshotDate {
  snapshotDate: string;
  /** The local manifest (`_manifests/snapshot_date=D.json`) as read; copied into the remote one. */
  manifest: { tables: Record<string, object> } & Record<string, unknown>;
  /** The files of the tables the manifest lists, in its order. */
  files: LocalSnapshotFile[];
}

/** What {@link uploadSnapshot} takes. */
export interface UploadSnapshotOptions {
  destination: S3DestinationConfig;
  /** The date the snapshot just wrote; always uploaded. */
  current: LocalSnapshotDate;
  /** Every date with a local manifest (the current one may be among them). */
  localDates: readonly string[];
  /** Reads another local date when the bucket lacks it; null when it has gone meanwhile. */
  loadLocalDate: (snapshotDate: string) => Promise<LocalSnapshotDate | null>;
  /** `snapshots.retainDates`; 0 keeps every date. @default 0 */
  retainDates?: number;
  /** The retry policy. @default retryPolicyFor(60_000) */
  retryPolicy?: RetryPolicy;
  logger?: Logger;
  signal?: AbortSignal;
  /** @default systemClock */
  clock?: Clock;
  /** Bytes checked so far (uploaded or found in place), for a progress bar. */
  onBytes?: (bytes: number) => void;
  /** The SDK seam (tests and benchmarks use the real one). @default openS3Store of store.ts */
  openStore?: (destination: S3DestinationConfig, options: OpenS3StoreOptions) => S3Store;
  /** For tests of the retry timing. @default the real sleep */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** One object of an upload and what was done with it. */
export interface UploadedObject {
  key: string;
  bytes: number;
  /** `skipped`: an object of the same size and SHA-256 was already there. */
  action: 'uploaded' | 'skipped';
}

/** What one destination got from a snapshot run: the `stats.uploads.NAME` of its summary. */
export interface SnapshotUploadResult {
  destination: string;
  /** `s3://bucket/prefix`. */
  url: string;
  status: 'done' | 'failed' | 'interrupted';
  /** Dates whose files and manifest this run put (or found) in place, current first. */
  dates: string[];
  /** The newest of {@link dates}, or null when none was completed. */
  latestDate: string | null;
  uploaded: { objects: number; bytes: number };
  skipped: { objects: number; bytes: number };
  /** Every object checked, in order (data files, then each date's manifest). */
  objects: UploadedObject[];
  /** Dates removed from the bucket by `snapshots.retainDates`. */
  removedDates: string[];
  /** Retries made (attempts after a failure). */
  retries: number;
  seconds: number;
  error?: { code: string; message: string };
}

/** {@link uploadSnapshot}'s answer: the result, and the error to raise when it did not finish. */
export interface UploadSnapshotOutcome {
  result: SnapshotUploadResult;
  /** A {@link DestinationError}, or an {@link AbortedError} when the run was stopped. */
  failure: DestinationError | AbortedError | null;
}

/**
 * Uploads a snapshot date (and any local date the bucket lacks) to an S3-compatible destination,
 * then applies retention in the bucket. Never throws: the outcome says what was done and why it
 * stopped.
 *
 * - Layout: the local one under the destination's prefix (layout.ts).
 * - Each file is checked against the bucket itself (the prefix's listing for its size, then HEAD
 *   for the SHA-256 stored in the object's metadata) and uploaded only when it differs or is
 *   missing, then checked again (HEAD).
 * - A date's manifest is written last, once every file it lists is in place; when a date that
 *   already has a manifest gets a changed file, its manifest is deleted first, so no manifest
 *   ever describes files that are not all there.
 * - Retention (`retainDates`): dates older than the newest N with a manifest lose their manifest
 *   first, then their files.
 * - Transient failures (5xx, throttling, no answer) are retried with backoff; the destination is
 *   given up once it has kept failing for `retryPolicy.giveUpAfterMs` (retries included).
 */
export async function uploadSnapshot(options: UploadSnapshotOptions): Promise<UploadSnapshotOutcome> {
  const { destination, current } = options;
  const clock = options.clock ?? systemClock;
  const logger = (options.logger ?? noopLogger).child({ destination: destination.name });
  const policy = options.retryPolicy ?? retryPolicyFor(60_000);
  const started = clock();
  const url = destinationUrl(destination.bucket, destination.prefix);
  const where = `destination "${destination.name}" (${url}${destination.endpoint === null ? '' : ` at ${destination.endpoint}`})`;
  const result: SnapshotUploadResult = {
    destination: destination.name,
    url,
    status: 'done',
    dates: [],
    latestDate: null,
    uploaded: { objects: 0, bytes: 0 },
    skipped: { objects: 0, bytes: 0 },
    objects: [],
    removedDates: [],
    retries: 0,
    seconds: 0,
  };
  const budget = new RetryBudget({
    policy,
    clock,
    signal: options.signal,
    ...(options.sleep ? { sleep: options.sleep } : {}),
    onRetry: (event) =>
      logger.warn('destination request failed, retrying', {
        operation: event.operation,
        attempt: event.attempt,
        delayMs: event.delayMs,
        code: event.failure.storeCode,
        status: event.failure.status,
        error: redactText(event.failure.message),
      }),
  });
  // The SDK is loaded on the first upload only (store.ts is its one importer).
  const openStore = options.openStore ?? (await import('./store.js')).openS3Store;
  const store = openStore(destination, {
    attemptTimeoutMs: policy.attemptTimeoutMs,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const run = async <T>(operation: string, attempt: () => Promise<T>): Promise<T> => {
    try {
      return await budget.run(operation, attempt);
    } catch (error) {
      throw toDestinationError(error, where, operation, destination.name);
    }
  };
  const record = (object: UploadedObject): void => {
    result.objects.push(object);
    const bucketOf = object.action === 'uploaded' ? result.uploaded : result.skipped;
    bucketOf.objects++;
    bucketOf.bytes += object.bytes;
  };

  let failure: DestinationError | AbortedError | null = null;
  try {
    const prefix = destination.prefix;
    // One listing of the prefix says which dates have a manifest and which objects exist with
    // which size; only an object of the right size needs a HEAD for its checksum.
    const listed = await run(`list ${rootPrefix(prefix) || '/'}`, () => store.list(rootPrefix(prefix)));
    const sizes = new Map(listed.map((o) => [o.key, o.bytes]));
    const remoteDates = listed
      .map((o) => parseKey(prefix, o.key))
      .flatMap((p) => (p.kind === 'manifest' ? [p.snapshotDate] : []));
    const dates = planUploadDates({
      current: current.snapshotDate,
      localDates: options.localDates,
      remoteDates,
      retainDates: options.retainDates ?? 0,
    });
    logger.info('snapshot upload started', { url, dates });
    for (const date of dates) {
      const local = date === current.snapshotDate ? current : await options.loadLocalDate(date);
      if (local === null) continue;
      await uploadDate(local, remoteDates.includes(date), sizes, {
        store,
        run,
        record,
        prefix,
        logger,
        clock,
        onBytes: options.onBytes,
      });
      result.dates.push(date);
      if (result.latestDate === null || date > result.latestDate) result.latestDate = date;
    }
    if ((options.retainDates ?? 0) > 0) {
      const keys = (await run(`list ${rootPrefix(prefix) || '/'}`, () => store.list(rootPrefix(prefix)))).map(
        (o) => o.key,
      );
      for (const removal of planRemoteRetention(prefix, keys, options.retainDates ?? 0)) {
        // The manifest goes first: from then on nothing says the date is complete.
        if (removal.manifestKey !== null) {
          const key = removal.manifestKey;
          await run(`delete ${key}`, () => store.delete(key));
        }
        for (const key of removal.dataKeys) await run(`delete ${key}`, () => store.delete(key));
        result.removedDates.push(removal.snapshotDate);
        logger.info('snapshot date removed from the destination by retention', {
          snapshotDate: removal.snapshotDate,
          objects: removal.dataKeys.length + (removal.manifestKey === null ? 0 : 1),
        });
      }
    }
  } catch (error) {
    failure =
      error instanceof DestinationError || error instanceof AbortedError
        ? error
        : toDestinationError(error, where, 'upload', destination.name);
    result.status = failure instanceof AbortedError ? 'interrupted' : 'failed';
    result.error = { code: failure.code, message: redactText(failure.message) };
  } finally {
    store.close();
  }
  result.retries = budget.retries;
  result.seconds = Math.round((clock() - started) / 10) / 100;
  return { result, failure };
}

interface DateContext {
  store: S3Store;
  run: <T>(operation: string, attempt: () => Promise<T>) => Promise<T>;
  record: (object: UploadedObject) => void;
  prefix: string;
  logger: Logger;
  clock: Clock;
  onBytes: ((bytes: number) => void) | undefined;
}

/** Puts one date's files in place, then its manifest (see {@link uploadSnapshot}). */
async function uploadDate(
  local: LocalSnapshotDate,
  hasRemoteManifest: boolean,
  sizes: ReadonlyMap<string, number>,
  c: DateContext,
): Promise<void> {
  const { store, run, prefix } = c;
  const date = local.snapshotDate;
  const manifestObjectKey = manifestKey(prefix, date);
  // Each file is hashed (and, when the bucket lists an object of its size, looked up) a few at a
  // time, smallest first, while the ones before it are being uploaded: the hashing of the large
  // files overlaps the upload of the small ones.
  const files = [...local.files].sort((a, b) => a.bytes - b.bytes);
  const checks = inOrderWithLimit(files, CHECKS_IN_FLIGHT, async (file): Promise<CheckedFile> => {
    const key = dataKey(prefix, file.table, date);
    // Missing, or of another size: to upload, no HEAD needed. Otherwise the checksum decides.
    const candidate = sizes.get(key) === file.bytes;
    const [sha256, head] = await Promise.all([
      file.sha256 ?? sha256OfFile(file.path),
      candidate ? run(`HEAD ${key}`, () => store.head(key)) : null,
    ]);
    return {
      file,
      key,
      sha256,
      inPlace: head !== null && head.bytes === file.bytes && head.sha256 === sha256,
    };
  });
  let remoteManifest: string | null = null;
  if (hasRemoteManifest) {
    // A date marked complete stops being so before any of its files changes.
    const [checked, text] = await Promise.all([
      Promise.all(checks),
      run(`GET ${manifestObjectKey}`, () => store.getText(manifestObjectKey)),
    ]);
    remoteManifest = text;
    if (remoteManifest !== null && checked.some((f) => !f.inPlace)) {
      await run(`delete ${manifestObjectKey}`, () => store.delete(manifestObjectKey));
      remoteManifest = null;
      c.logger.info('snapshot date reopened: its manifest is removed until its changed files are uploaded', {
        snapshotDate: date,
      });
    }
  }
  // Each object sent is checked in the bucket (size and checksum) while the next one goes up,
  // and all of them before the manifest says the date is complete.
  const verifications: Array<Promise<void>> = [];
  const verify = (file: LocalSnapshotFile, key: string, sha256: string): Promise<void> =>
    run(`HEAD ${key}`, () => store.head(key)).then((after) => {
      if (after === null || after.bytes !== file.bytes || after.sha256 !== sha256) {
        throw new StoreFailure(
          'failed',
          `after the upload of ${key} the bucket holds ${after === null ? 'no object' : `${after.bytes} bytes with SHA-256 ${after.sha256 ?? 'unknown'}`}, expected ${file.bytes} bytes with SHA-256 ${sha256}`,
        );
      }
    });
  const checkedByTable = new Map<string, CheckedFile>();
  for (const pending of checks) {
    const { file, key, sha256, inPlace } = await pending;
    checkedByTable.set(file.table, { file, key, sha256, inPlace });
    if (inPlace) {
      c.record({ key, bytes: file.bytes, action: 'skipped' });
      c.onBytes?.(file.bytes);
      c.logger.debug('object already in place, skipped', { key, bytes: file.bytes });
      continue;
    }
    let reported = 0;
    await run(`upload ${key}`, () =>
      store.uploadFile(key, file.path, {
        sha256,
        contentType: PARQUET_CONTENT_TYPE,
        onProgress: (loaded) => {
          if (loaded > reported) {
            c.onBytes?.(loaded - reported);
            reported = loaded;
          }
        },
      }),
    );
    if (file.bytes > reported) c.onBytes?.(file.bytes - reported);
    c.record({ key, bytes: file.bytes, action: 'uploaded' });
    c.logger.debug('object uploaded', { key, bytes: file.bytes });
    const check = verify(file, key, sha256);
    check.catch(() => undefined); // awaited below; it must not count as unhandled meanwhile
    verifications.push(check);
  }
  for (const check of verifications) await check;

  const tables: Record<string, object> = {};
  for (const file of local.files) {
    const { key, sha256 } = checkedByTable.get(file.table)!;
    tables[file.table] = { ...(local.manifest.tables[file.table] ?? {}), key, bytes: file.bytes, sha256 };
  }
  const { tables: _localTables, ...rest } = local.manifest;
  const body = { ...rest, snapshot_date: date, tables };
  if (remoteManifest !== null && sameManifest(remoteManifest, body)) {
    c.record({ key: manifestObjectKey, bytes: Buffer.byteLength(remoteManifest), action: 'skipped' });
  } else {
    const text = `${JSON.stringify({ ...body, uploaded_at: isoFromMs(c.clock()) }, null, 2)}\n`;
    const sha256 = createHash('sha256').update(text).digest('hex');
    await run(`PUT ${manifestObjectKey}`, () =>
      store.putText(manifestObjectKey, text, { sha256, contentType: 'application/json' }),
    );
    c.record({ key: manifestObjectKey, bytes: Buffer.byteLength(text), action: 'uploaded' });
  }
  c.logger.info('snapshot date uploaded', { snapshotDate: date, manifest: manifestObjectKey });
}

/** A local file checked against the bucket. */
interface CheckedFile {
  file: LocalSnapshotFile;
  key: string;
  sha256: string;
  /** The bucket already holds it: same size and SHA-256. */
  inPlace: boolean;
}

/** Files checked (hashed and looked up) at once. */
const CHECKS_IN_FLIGHT = 4;

/**
 * Starts `fn` on `items` in order, at most `limit` at a time, and returns one promise per item
 * (so a caller can use each result as soon as it is ready).
 */
function inOrderWithLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Array<Promise<R>> {
  let running = 0;
  const waiting: Array<() => void> = [];
  const slot = async (): Promise<void> => {
    if (running < limit) {
      running++;
      return;
    }
    await new Promise<void>((resolve) => waiting.push(resolve));
  };
  const release = (): void => {
    const next = waiting.shift();
    if (next) next();
    else running--;
  };
  return items.map(async (item) => {
    await slot();
    try {
      return await fn(item);
    } finally {
      release();
    }
  });
}

/** Whether the manifest in the bucket already says what `body` says (its upload time aside). */
function sameManifest(remoteText: string, body: Record<string, unknown>): boolean {
  try {
    const { uploaded_at: _at, ...remote } = JSON.parse(remoteText) as Record<string, unknown>;
    return JSON.stringify(remote) === JSON.stringify(body);
  } catch {
    return false;
  }
}

/** SHA-256 (hex) of a file, streamed. */
export async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 }))
    hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Any failure of an operation → a DestinationError naming the destination and the operation. */
function toDestinationError(
  error: unknown,
  where: string,
  operation: string,
  name: string,
): DestinationError | AbortedError {
  if (error instanceof DestinationError || error instanceof AbortedError) return error;
  if (error instanceof RetriesExhausted) {
    const f = error.failure;
    const gaveUp = f.kind === 'unreachable' ? 'unreachable' : 'server';
    return new DestinationError(
      {
        destination: name,
        kind: gaveUp,
        message: `${where}: ${operation}: given up after ${error.attempts} attempts over ${Math.round(error.failingForMs / 1000)} s: ${f.message}`,
        status: f.status,
        storeCode: f.storeCode,
        attempts: error.attempts,
      },
      { cause: f },
    );
  }
  if (error instanceof StoreFailure) {
    return new DestinationError(
      {
        destination: name,
        kind: error.kind,
        message: `${where}: ${operation}: ${error.message}`,
        status: error.status,
        storeCode: error.storeCode,
      },
      { cause: error },
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  return new DestinationError(
    { destination: name, kind: 'failed', message: `${where}: ${operation}: ${message}` },
    { cause: error },
  );
}
