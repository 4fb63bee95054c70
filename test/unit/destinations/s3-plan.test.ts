import { describe, expect, it } from 'vitest';
import { dataKey, manifestKey, parseKey } from '../../../src/destinations/s3/layout.js';
import { planRemoteRetention, planUploadDates } from '../../../src/destinations/s3/plan.js';

describe('bucket layout: the local one under the prefix', () => {
  it.each([
    ['', 'licenses/snapshot_date=2026-11-24/part-0.parquet', '_manifests/snapshot_date=2026-11-24.json'],
    [
      'warehouse/domain-sync',
      'warehouse/domain-sync/licenses/snapshot_date=2026-11-24/part-0.parquet',
      'warehouse/domain-sync/_manifests/snapshot_date=2026-11-24.json',
    ],
  ])('prefix %j', (prefix, data, manifest) => {
    expect(dataKey(prefix, 'licenses', '2026-11-24')).toBe(data);
    expect(manifestKey(prefix, '2026-11-24')).toBe(manifest);
    expect(parseKey(prefix, data)).toEqual({ kind: 'data', table: 'licenses', snapshotDate: '2026-11-24' });
    expect(parseKey(prefix, manifest)).toEqual({ kind: 'manifest', snapshotDate: '2026-11-24' });
  });

  it.each([
    ['p', 'other/licenses/snapshot_date=2026-11-24/part-0.parquet'],
    ['p', 'p/licenses/snapshot_date=2026-02-30/part-0.parquet'],
    ['p', 'p/licenses/2026-11-24/part-0.parquet'],
    ['p', 'p/licenses/snapshot_date=2026-11-24/'],
    ['p', 'p/_manifests/snapshot_date=2026-11-24.json.tmp'],
    ['p', 'p/_manifests/nested/snapshot_date=2026-11-24.json'],
    ['p', 'p/notes.txt'],
    ['p', 'p/9tables/snapshot_date=2026-11-24/part-0.parquet'],
  ])('leaves alone what is not its layout: %j %j', (prefix, key) => {
    expect(parseKey(prefix, key)).toEqual({ kind: 'other' });
  });
});

describe('planUploadDates', () => {
  it('uploads the current date, then local dates the bucket lacks, newest first', () => {
    expect(
      planUploadDates({
        current: '2026-11-24',
        localDates: ['2026-11-24', '2026-11-23', '2026-11-22', '2026-11-20'],
        remoteDates: ['2026-11-24', '2026-11-22'],
        retainDates: 0,
      }),
    ).toEqual(['2026-11-24', '2026-11-23', '2026-11-20']);
  });

  it('an emptied bucket gets every local date again', () => {
    expect(
      planUploadDates({
        current: '2026-11-24',
        localDates: ['2026-11-23', '2026-11-24'],
        remoteDates: [],
        retainDates: 0,
      }),
    ).toEqual(['2026-11-24', '2026-11-23']);
  });

  it('with retainDates, a date retention would remove at once is not uploaded', () => {
    expect(
      planUploadDates({
        current: '2026-11-24',
        localDates: ['2026-11-24', '2026-11-21', '2026-11-20'],
        remoteDates: ['2026-11-23', '2026-11-22'],
        retainDates: 3,
      }),
    ).toEqual(['2026-11-24']);
    expect(
      planUploadDates({
        current: '2026-11-24',
        localDates: ['2026-11-24', '2026-11-23', '2026-11-20'],
        remoteDates: ['2026-11-22'],
        retainDates: 3,
      }),
    ).toEqual(['2026-11-24', '2026-11-23']);
  });
});

describe('planRemoteRetention', () => {
  const p = 'snap';
  const date = (d: string): string[] => [
    `${p}/_manifests/snapshot_date=${d}.json`,
    `${p}/domains/snapshot_date=${d}/part-0.parquet`,
    `${p}/licenses/snapshot_date=${d}/part-0.parquet`,
  ];

  it('removes the dates older than the newest N with a manifest: manifest first, then files, oldest first', () => {
    const keys = [
      ...date('2026-11-24'),
      ...date('2026-11-23'),
      ...date('2026-11-20'),
      ...date('2026-11-19'),
      // An upload that never finished (no manifest), older than what is kept.
      `${p}/domains/snapshot_date=2026-11-18/part-0.parquet`,
      // Not the layout: never touched.
      `${p}/README.txt`,
      `other/domains/snapshot_date=2026-11-01/part-0.parquet`,
    ];
    expect(planRemoteRetention(p, keys, 2)).toEqual([
      {
        snapshotDate: '2026-11-18',
        manifestKey: null,
        dataKeys: [`${p}/domains/snapshot_date=2026-11-18/part-0.parquet`],
      },
      {
        snapshotDate: '2026-11-19',
        manifestKey: date('2026-11-19')[0],
        dataKeys: date('2026-11-19').slice(1),
      },
      {
        snapshotDate: '2026-11-20',
        manifestKey: date('2026-11-20')[0],
        dataKeys: date('2026-11-20').slice(1),
      },
    ]);
  });

  it('keeps a newer date without a manifest (an upload to complete) and removes nothing below N dates', () => {
    const keys = [
      ...date('2026-11-24'),
      `${p}/domains/snapshot_date=2026-11-25/part-0.parquet`,
      ...date('2026-11-20'),
    ];
    expect(planRemoteRetention(p, keys, 2)).toEqual([]);
    expect(planRemoteRetention(p, keys, 1)).toEqual([
      {
        snapshotDate: '2026-11-20',
        manifestKey: date('2026-11-20')[0],
        dataKeys: date('2026-11-20').slice(1),
      },
    ]);
    expect(planRemoteRetention(p, keys, 0)).toEqual([]);
  });
});
