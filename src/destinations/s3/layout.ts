import { MANIFESTS_DIR_NAME, PART_FILE_NAME, isSnapshotDate } from '../../warehouse/snapshot-layout.js';

/*
 * The bucket layout is the local one (docs/snapshots.md "Layout") under the destination's prefix:
 * `<prefix>/<table>/snapshot_date=YYYY-MM-DD/part-0.parquet` and the date's manifest
 * `<prefix>/_manifests/snapshot_date=YYYY-MM-DD.json`, so a local snapshots dir and its bucket
 * prefix can be read with the same relative globs. Pure functions only.
 */

/** User metadata key (`x-amz-meta-…`) holding the SHA-256 (hex) of an object's bytes. */
export const SHA256_METADATA_KEY = 'domain-sync-sha256';

/** `<prefix>/<relativePath>`, or `relativePath` alone for an empty prefix. */
export function objectKey(prefix: string, relativePath: string): string {
  return prefix === '' ? relativePath : `${prefix}/${relativePath}`;
}

/** The key of a table's file for a date: `<prefix>/<table>/snapshot_date=D/part-0.parquet`. */
export function dataKey(prefix: string, table: string, snapshotDate: string): string {
  return objectKey(prefix, `${table}/snapshot_date=${snapshotDate}/${PART_FILE_NAME}`);
}

/** The key of a date's manifest: `<prefix>/_manifests/snapshot_date=D.json`. */
export function manifestKey(prefix: string, snapshotDate: string): string {
  return objectKey(prefix, `${MANIFESTS_DIR_NAME}/snapshot_date=${snapshotDate}.json`);
}

/** The prefix every manifest key starts with (for a listing). */
export function manifestsPrefix(prefix: string): string {
  return objectKey(prefix, `${MANIFESTS_DIR_NAME}/`);
}

/** The prefix every key of the destination starts with (for a listing): `<prefix>/`, or ''. */
export function rootPrefix(prefix: string): string {
  return prefix === '' ? '' : `${prefix}/`;
}

/** What a key under the destination's prefix is, as far as the layout says. */
export type ParsedKey =
  | { kind: 'manifest'; snapshotDate: string }
  | { kind: 'data'; table: string; snapshotDate: string }
  | { kind: 'other' };

const MANIFEST_NAME = /^snapshot_date=(\d{4}-\d{2}-\d{2})\.json$/;
const TABLE_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;
const PARTITION = /^snapshot_date=(\d{4}-\d{2}-\d{2})$/;

/**
 * Reads a key under the destination's prefix: a manifest, an object inside a table's date
 * partition (`<table>/snapshot_date=D/…`, any file name), or something else (left alone by
 * retention).
 */
export function parseKey(prefix: string, key: string): ParsedKey {
  const root = rootPrefix(prefix);
  if (!key.startsWith(root)) return { kind: 'other' };
  const parts = key.slice(root.length).split('/');
  if (parts.length === 2 && parts[0] === MANIFESTS_DIR_NAME) {
    const date = MANIFEST_NAME.exec(parts[1]!)?.[1];
    return date !== undefined && isSnapshotDate(date)
      ? { kind: 'manifest', snapshotDate: date }
      : { kind: 'other' };
  }
  if (parts.length >= 3 && TABLE_NAME.test(parts[0]!)) {
    const date = PARTITION.exec(parts[1]!)?.[1];
    if (date !== undefined && isSnapshotDate(date) && parts.slice(2).every((p) => p !== '')) {
      return { kind: 'data', table: parts[0]!, snapshotDate: date };
    }
  }
  return { kind: 'other' };
}

/** The destination as a URL for messages and summaries: `s3://bucket/prefix`. */
export function destinationUrl(bucket: string, prefix: string): string {
  return prefix === '' ? `s3://${bucket}` : `s3://${bucket}/${prefix}`;
}
