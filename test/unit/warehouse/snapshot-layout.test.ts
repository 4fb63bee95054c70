import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  assertTableName,
  isSnapshotDate,
  manifestPath,
  partitionDir,
  snapshotFilePath,
  utcDate,
} from '../../../src/warehouse/snapshot-layout.js';

describe('snapshot layout', () => {
  it('utcDate is the UTC calendar date whatever the local zone', () => {
    expect(utcDate(Date.parse('2024-12-31T23:59:59.999Z'))).toBe('2024-12-31');
    expect(utcDate(Date.parse('2025-01-01T00:00:00.000Z'))).toBe('2025-01-01');
    expect(utcDate(Date.parse('2025-01-01T01:00:00+02:00'))).toBe('2024-12-31');
  });

  it.each([
    ['2024-02-29', true],
    ['2023-02-29', false],
    ['2024-2-29', false],
    ['2024-02-29T00:00:00Z', false],
    ['', false],
  ])('isSnapshotDate(%j) is %s', (value, ok) => {
    expect(isSnapshotDate(value)).toBe(ok);
  });

  it('builds the Hive-style paths of the contract and the manifest path', () => {
    expect(partitionDir('/s', 'licenses', '2024-05-01')).toBe(
      join('/s', 'licenses', 'snapshot_date=2024-05-01'),
    );
    expect(snapshotFilePath('/s', 'licenses', '2024-05-01')).toBe(
      join('/s', 'licenses', 'snapshot_date=2024-05-01', 'part-0.parquet'),
    );
    expect(manifestPath('/s', '2024-05-01')).toBe(join('/s', '_manifests', 'snapshot_date=2024-05-01.json'));
  });

  it.each(['licenses', 'domain_sections', 'T2'])('accepts table name %j', (name) => {
    expect(() => assertTableName(name)).not.toThrow();
  });

  it.each(['', '_manifests', '.hidden', '../x', 'a/b', 'a b', '2fa'])('rejects table name %j', (name) => {
    expect(() => assertTableName(name)).toThrow(expect.objectContaining({ code: 'ERR_SNAPSHOT_SCHEMA' }));
  });
});
