import { describe, expect, it } from 'vitest';
import { recordCredits } from '../../../src/mirror/store/credits.js';
import { upsertProfiles } from '../../../src/mirror/store/profiles.js';
import { upsertExport } from '../../../src/mirror/store/exports.js';
import {
  describeTable,
  iterateTableRowArrays,
  iterateTableRows,
  SNAPSHOT_TABLES,
  tableRowCount,
} from '../../../src/mirror/store/snapshot.js';
import { profile } from './builders.js';
import { tempMirror } from './helpers.js';
import type { DomainProfileInput } from '../../../src/mirror/inputs.js';

describe('snapshot support', () => {
  it('describes every contract table with logical types', async () => {
    const mirror = await tempMirror();
    expect([...SNAPSHOT_TABLES]).toEqual([
      'domains',
      'licenses',
      'payment_methods',
      'domain_sections',
      'enrichment_runs',
      'exports',
      'pipeline_runs',
    ]);
    const domains = describeTable(mirror, 'domains');
    const type = (name: string): string | undefined => domains.find((c) => c.name === name)?.type;
    expect(type('domain_normalized')).toBe('text');
    expect(type('last_enriched_at')).toBe('timestamp');
    expect(type('served_from_cache')).toBe('boolean');
    expect(type('raw_profile')).toBe('json');
    expect(type('profile_extra')).toBe('json');
    expect(type('freshness_age_seconds')).toBe('integer');
    expect(domains.find((c) => c.name === 'domain_normalized')?.nullable).toBe(false);
    for (const table of SNAPSHOT_TABLES) {
      for (const c of describeTable(mirror, table)) {
        if (c.name.endsWith('_at')) expect(c.type).toBe('timestamp');
      }
    }
    expect(describeTable(mirror, 'pipeline_runs').find((c) => c.name === 'stats')?.type).toBe('json');
    expect(() => describeTable(mirror, 'sqlite_schema' as never)).toThrow(/unknown snapshot table/);
  });

  it('streams rows in batches from one read snapshot, with exact int64 and booleans', async () => {
    const mirror = await tempMirror();
    const domains = Array.from({ length: 25 }, (_, i) => profile(`d${String(i).padStart(2, '0')}.example`));
    upsertProfiles(mirror, [...domains, profile('ünïcode.example')], { syncedAt: '2025-04-01T00:00:00Z' });
    const big = 2n ** 53n + 1n;
    upsertExport(
      mirror,
      { id: big, status: 'completed', total_rows: big, credits_used: 3 },
      { at: '2025-04-01T00:00:00Z' },
    );
    recordCredits(mirror, { at: '2025-04-01T00:00:00Z', operation: 'export', credits: 3, exportId: big });

    expect(tableRowCount(mirror, 'domains')).toBe(26);
    const iterator = iterateTableRows(mirror, 'domains', { batchSize: 7 });
    const first = iterator.next();
    // Rows written after the iterator started are not seen: one read transaction.
    upsertProfiles(mirror, [profile('late.example')], { syncedAt: '2025-04-02T00:00:00Z' });
    const rows = [first.value as Record<string, unknown>, ...iterator];
    expect(rows).toHaveLength(26);
    expect(rows.map((r) => r.domain_normalized)).toContain('ünïcode.example');
    const row = rows[0]!;
    expect(Object.keys(row)).toEqual(describeTable(mirror, 'domains').map((c) => c.name));
    expect(row.served_from_cache).toBe(false);
    expect(row.freshness_age_seconds).toBe(3600n);
    expect(row.last_enriched_at).toBe('2025-03-01T10:00:00.000Z');
    expect(row.company_name).toBeNull();

    const exports = [...iterateTableRows(mirror, 'exports')];
    expect(exports[0]).toMatchObject({ id: big, total_rows: big, credits_used: 3n });
  });

  it('streams the same rows as arrays in column order; jsonAsBytes gives JSON as its UTF-8 bytes', async () => {
    const mirror = await tempMirror();
    // A field the mirror has no column for, with text beyond ASCII, for profile_extra's JSON bytes.
    const unicode = { ...profile('ünïcode.example'), x_note: 'ünïcode.example' } as DomainProfileInput;
    upsertProfiles(mirror, [profile('a.example'), unicode], {
      syncedAt: '2025-04-01T00:00:00Z',
    });
    const columns = describeTable(mirror, 'domains');
    const objects = [...iterateTableRows(mirror, 'domains')];
    const arrays = [...iterateTableRowArrays(mirror, 'domains', { batchSize: 1 })];
    const bytes = [...iterateTableRowArrays(mirror, 'domains', { jsonAsBytes: true })];
    expect(arrays).toHaveLength(2);
    for (const [r, row] of objects.entries()) {
      columns.forEach((c, i) => {
        const value = row[c.name];
        if (c.type === 'boolean') expect(arrays[r]![i]).toBe(value === null ? null : value ? 1n : 0n);
        else expect(arrays[r]![i], c.name).toEqual(value);
        if (c.type === 'json' && value !== null) {
          expect(Buffer.isBuffer(bytes[r]![i]), c.name).toBe(true);
          expect((bytes[r]![i] as Buffer).toString('utf8'), c.name).toBe(value);
        } else {
          expect(bytes[r]![i], c.name).toEqual(arrays[r]![i]);
        }
      });
    }
    expect(JSON.parse(String(objects[1]!.profile_extra))).toEqual({ x_note: 'ünïcode.example' });
  });
});
