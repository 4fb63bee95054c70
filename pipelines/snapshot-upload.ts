import { stat } from 'node:fs/promises';
import type { Config } from '../src/config/config.js';
import type { S3DestinationConfig } from '../src/config/destinations.js';
import { DestinationError, retryPolicyFor, uploadSnapshot } from '../src/destinations/s3/index.js';
import type { LocalSnapshotDate, SnapshotUploadResult } from '../src/destinations/s3/index.js';
import type { MirrorRunContext } from '../src/runtime/run.js';
import { AbortedError, UsageError } from '../src/util/domain-sync-error.js';
import { listManifestDates, readSnapshotManifest, snapshotFilePath } from '../src/warehouse/index.js';

/*
 * The snapshot pipeline's upload step (`snapshot --to NAME`, `snapshots.to`): after the local
 * snapshot is written, each destination gets it through src/destinations/s3 (docs/snapshots.md
 * "Object storage"). This file only reads the local snapshots dir and orders the destinations.
 */

/**
 * The s3 destinations a snapshot uploads to: `names` (the `--to` flags or a step's `to`) when
 * given, else `snapshots.to`. Throws {@link UsageError} (exit 2) for a name that is not an s3
 * destination of the config, before anything runs.
 */
export function resolveSnapshotDestinations(
  config: Config,
  names?: readonly string[],
): S3DestinationConfig[] {
  const chosen = names ?? config.snapshots.to;
  const s3 = Object.values(config.destinations).filter((d): d is S3DestinationConfig => d.type === 's3');
  return [...new Set(chosen)].map((name) => {
    const destination = Object.hasOwn(config.destinations, name) ? config.destinations[name] : undefined;
    if (destination?.type !== 's3') {
      throw new UsageError(
        `--to "${name}": ${destination === undefined ? 'no destination of that name' : `destination of type ${destination.type}, not s3`} ` +
          `(s3 destinations in the config: ${s3.length ? s3.map((d) => d.name).join(', ') : 'none'})`,
      );
    }
    return destination;
  });
}

/** What {@link uploadToDestinations} uploads. */
export interface UploadToDestinationsOptions {
  /** The snapshots dir the snapshot was written to. */
  dir: string;
  /** The date just written. */
  snapshotDate: string;
  destinations: readonly S3DestinationConfig[];
  /** `snapshots.retainDates` (0 keeps every date), applied in each bucket too. */
  retainDates: number;
  /**
   * The files this run just wrote, by table: their size and SHA-256 as the writer computed them,
   * so they need not be read again. Other files are hashed from disk.
   */
  written?: ReadonlyMap<string, { bytes: number; sha256: string }>;
}

/**
 * Uploads the snapshot to each destination in turn, recording each one's result in `uploads`
 * (by destination name) as it finishes. Every destination is tried even when an earlier one
 * failed; then the first failure is thrown (a {@link DestinationError} naming every destination
 * that failed), so the run fails with exit status 1 while the local snapshot stays written. A
 * stop (SIGINT, SIGTERM, lost lock) is thrown at once as {@link AbortedError}.
 */
export async function uploadToDestinations(
  ctx: MirrorRunContext,
  options: UploadToDestinationsOptions,
  uploads: Record<string, SnapshotUploadResult>,
): Promise<void> {
  const { dir, snapshotDate } = options;
  const current = await loadLocalSnapshotDate(dir, snapshotDate);
  if (current === null) return; // Nothing written locally (every table failed): nothing to send.
  for (const file of current.files) {
    const written = options.written?.get(file.table);
    if (written !== undefined && written.bytes === file.bytes) file.sha256 = written.sha256;
  }
  const localDates = await listManifestDates(dir);
  const failures: DestinationError[] = [];
  for (const destination of options.destinations) {
    const task = ctx.progress.task(
      `upload to ${destination.name}`,
      current.files.reduce((n, f) => n + f.bytes, 0),
      'bytes',
    );
    let total = current.files.reduce((n, f) => n + f.bytes, 0);
    try {
      const { result, failure } = await uploadSnapshot({
        destination,
        current,
        localDates,
        loadLocalDate: async (date) => {
          // An older date with an unreadable manifest is left out rather than blocking this one.
          const local = await loadLocalSnapshotDate(dir, date).catch((error: unknown) => {
            ctx.logger.warn('local snapshot date not uploaded: its manifest cannot be read', {
              snapshotDate: date,
              error: error instanceof Error ? error.message : String(error),
            });
            return null;
          });
          if (local !== null) {
            total += local.files.reduce((n, f) => n + f.bytes, 0);
            task.setTotal(total);
          }
          return local;
        },
        retainDates: options.retainDates,
        retryPolicy: retryPolicyFor(destination.giveUpAfterMs),
        logger: ctx.logger,
        signal: ctx.signal,
        clock: ctx.clock,
        onBytes: (bytes) => task.increment(bytes),
      });
      uploads[destination.name] = result;
      ctx.logger[failure === null ? 'info' : 'error']('snapshot upload finished', {
        destination: destination.name,
        url: result.url,
        status: result.status,
        dates: result.dates,
        uploaded: result.uploaded,
        skipped: result.skipped,
        removedDates: result.removedDates,
        retries: result.retries,
        seconds: result.seconds,
        ...(result.error ? { error: result.error } : {}),
      });
      if (failure instanceof AbortedError) throw failure;
      if (failure !== null) failures.push(failure);
    } finally {
      task.done();
    }
  }
  if (failures.length === 1) throw failures[0]!;
  if (failures.length > 1) {
    const first = failures[0]!;
    throw new DestinationError(
      {
        destination: first.destination,
        kind: first.kind,
        message: failures.map((f) => f.message).join('; '),
        status: first.status,
        storeCode: first.storeCode,
        attempts: first.attempts,
      },
      { cause: first },
    );
  }
}

/**
 * A local snapshot date as its manifest lists it, each table with the file in place and its size
 * on disk; null when the date has no manifest (or no file left).
 */
export async function loadLocalSnapshotDate(
  dir: string,
  snapshotDate: string,
): Promise<LocalSnapshotDate | null> {
  const manifest = await readSnapshotManifest(dir, snapshotDate);
  if (manifest === null) return null;
  const files: LocalSnapshotDate['files'] = [];
  const tables: Record<string, object> = {};
  for (const [table, entry] of Object.entries(manifest.tables)) {
    const path = snapshotFilePath(dir, table, snapshotDate);
    const size = await stat(path).then(
      (s) => s.size,
      () => null,
    );
    if (size === null) continue; // Removed since the manifest was written: not sent.
    files.push({ table, path, bytes: size });
    tables[table] = entry;
  }
  if (files.length === 0) return null;
  return { snapshotDate, manifest: { ...manifest, tables }, files };
}
