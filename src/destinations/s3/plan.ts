import { parseKey } from './layout.js';

/*
 * Pure decisions of an upload: which snapshot dates go to the bucket, and which remote dates
 * retention removes. The side effects are in upload.ts.
 */

/** What {@link planUploadDates} decides from. */
export interface UploadDatesInput {
  /** The date the snapshot just wrote: always uploaded (its files are checked one by one). */
  current: string;
  /** Every date with a manifest in the local snapshots dir. */
  localDates: readonly string[];
  /** Every date with a manifest in the bucket. */
  remoteDates: readonly string[];
  /** `snapshots.retainDates`; 0 keeps every date. */
  retainDates: number;
}

/**
 * The dates to upload, the current one first, then the others newest first.
 *
 * Besides the current date, a local date whose manifest is missing from the bucket is uploaded
 * too: a run killed or given up before it wrote a date's manifest is completed by the next run
 * even when that one falls on another day, and a bucket emptied by someone else is filled again
 * with every date kept locally. With `retainDates`, a date retention would remove straight away
 * is not uploaded.
 */
export function planUploadDates(input: UploadDatesInput): string[] {
  const remote = new Set(input.remoteDates);
  const missing = input.localDates.filter((d) => d !== input.current && !remote.has(d));
  let catchUp = [...new Set(missing)].sort().reverse();
  if (input.retainDates > 0) {
    const all = [...new Set([...input.remoteDates, input.current, ...catchUp])].sort().reverse();
    const kept = new Set(all.slice(0, input.retainDates));
    catchUp = catchUp.filter((d) => kept.has(d));
  }
  return [input.current, ...catchUp];
}

/** One date retention removes from the bucket: its manifest first, then its files. */
export interface RemoteRemoval {
  snapshotDate: string;
  /** Null when the date has no manifest (files left by an upload that never finished). */
  manifestKey: string | null;
  dataKeys: string[];
}

/**
 * Which dates `snapshots.retainDates` removes from a bucket, given every key under the
 * destination's prefix: the dates older than the newest `keep` dates that have a manifest, each
 * with its manifest and its data files, including partitions without a manifest older than the
 * oldest date kept (leftovers of an upload that never finished). Oldest first. Nothing is removed
 * while fewer than `keep` dates have a manifest; keys outside the layout are never touched.
 */
export function planRemoteRetention(prefix: string, keys: readonly string[], keep: number): RemoteRemoval[] {
  if (keep <= 0) return [];
  const manifests = new Map<string, string>();
  const data = new Map<string, string[]>();
  for (const key of keys) {
    const parsed = parseKey(prefix, key);
    if (parsed.kind === 'manifest') manifests.set(parsed.snapshotDate, key);
    else if (parsed.kind === 'data')
      data.set(parsed.snapshotDate, [...(data.get(parsed.snapshotDate) ?? []), key]);
  }
  const complete = [...manifests.keys()].sort().reverse();
  if (complete.length <= keep) return [];
  const oldestKept = complete[keep - 1]!;
  const doomed = [...new Set([...manifests.keys(), ...data.keys()])].filter((d) => d < oldestKept).sort();
  return doomed.map((snapshotDate) => ({
    snapshotDate,
    manifestKey: manifests.get(snapshotDate) ?? null,
    dataKeys: [...(data.get(snapshotDate) ?? [])].sort(),
  }));
}
