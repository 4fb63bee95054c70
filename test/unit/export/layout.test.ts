import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { estimateExportCredits, exportParamsHash, readExportRows } from '../../../pipelines/export/index.js';
import type { ExportRowInput } from '../../../src/mirror/store/export-load.js';
import { checkExportRow } from '../../../src/mirror/store/export-load.js';

const FIXTURES = resolve(import.meta.dirname, '../../fixtures/export');

async function readAll(
  name: string,
  format: 'csv' | 'json',
  unknownColumns?: Set<string>,
): Promise<ExportRowInput[]> {
  const out: ExportRowInput[] = [];
  for await (const { row } of readExportRows(join(FIXTURES, name), format, { unknownColumns })) out.push(row);
  return out;
}

describe('export file layouts (mapped by column name)', () => {
  it('maps an alternative key name, dotted operator/brand columns, JSON section cells and keeps unknown columns', async () => {
    const unknown = new Set<string>();
    const rows = await readAll('flat-dotted.csv', 'csv', unknown);
    expect(rows).toHaveLength(2);
    expect(rows[0]).toEqual({
      companyName: 'Foo Ltd',
      profile: {
        domain_normalized: 'foo.example',
        licenses: [{ jurisdiction: 'mga', license_number: 'MGA/1', status: 'active' }],
        extra_note: 'hello',
        operator: { name: 'Foo Op', country_of_incorporation: 'MT' },
        brand: { name: 'Foo', slug: 'foo' },
      },
    });
    // Empty cells are null; an empty section cell means "section not in the file".
    expect(rows[1]!.profile).not.toHaveProperty('licenses');
    expect(rows[1]!.companyName).toBeNull();
    expect([...unknown]).toEqual(['extra_note']);
    rows.forEach((row, i) => checkExportRow(row, `row ${i + 1}`));
  });

  it('maps nested operator/brand objects given as JSON text in CSV cells', async () => {
    const [row] = await readAll('nested-json-cells.csv', 'csv');
    expect(row!.profile.operator).toEqual({
      name: 'N Op',
      legal_entity_name: 'N Ltd',
      country_of_incorporation: 'GB',
    });
    expect(row!.profile.brand).toEqual({ name: 'N', slug: 'n' });
    expect(row!.profile.payment_methods).toEqual([{ normalized_name: 'visa', category: 'card' }]);
    expect(row).not.toHaveProperty('companyName');
  });

  it('maps NDJSON with nested or flat operator fields, skips blank lines, keeps unknown keys', async () => {
    const unknown = new Set<string>();
    const rows = await readAll('mixed.ndjson', 'json', unknown);
    expect(rows.map((r) => r.profile.domain_normalized)).toEqual(['a.example', 'b.example']);
    expect(rows[0]!.profile.operator).toEqual({ name: 'A Op' });
    expect(rows[0]!.profile.geo).toEqual({ countries: ['MT'] });
    expect((rows[0]!.profile as unknown as Record<string, unknown>).x_extra).toBe(1);
    expect(rows[1]!.companyName).toBe('B Ltd');
    expect([...unknown]).toEqual(['x_extra']);
  });

  it.each([
    [
      'missing-key.csv',
      'csv',
      /no domain_normalized column .*columns found: domain, company_name, brand_name/,
    ],
    ['missing-key.ndjson', 'json', /no domain_normalized column .*columns found: domain/],
  ] as const)(
    '%s: a file without a key column is refused naming the columns found',
    async (name, format, message) => {
      await expect(readAll(name, format)).rejects.toMatchObject({
        code: 'ERR_EXPORT_LAYOUT',
        message: expect.stringMatching(message),
      });
    },
  );

  it('a cell that is not valid JSON names the row and the column', async () => {
    await expect(readAll('bad-json-cell.csv', 'csv')).rejects.toMatchObject({
      code: 'ERR_EXPORT_FILE_INVALID',
      message: expect.stringMatching(/row 2 \(line 3\), column licenses: not valid JSON/),
    });
  });

  it('checkExportRow names the field of a bad value', () => {
    expect(() =>
      checkExportRow(
        { profile: { domain_normalized: 'x.example', licenses: [{ jurisdiction: 'mga' } as never] } },
        'line 7',
      ),
    ).toThrow(/line 7\.licenses\[0\]\.license_number/);
    expect(() => checkExportRow({ profile: { domain_normalized: '' } }, 'line 8')).toThrow(
      /line 8\.domain_normalized/,
    );
  });
});

describe('export parameters and cost', () => {
  it('hashes parameters independently of filter and field order', () => {
    const a = exportParamsHash({
      filters: { jurisdiction: 'mga', geo: 'de' },
      format: 'csv',
      fields: ['geo', 'licenses'],
    });
    const b = exportParamsHash({
      filters: { geo: 'de', jurisdiction: 'mga' },
      format: 'csv',
      fields: ['licenses', 'geo'],
    });
    expect(a).toBe(b);
    expect(exportParamsHash({ filters: {}, format: 'csv', fields: undefined })).not.toBe(
      exportParamsHash({ filters: {}, format: 'csv', fields: [] }),
    );
    expect(exportParamsHash({ filters: {}, format: 'csv', fields: undefined })).not.toBe(
      exportParamsHash({ filters: {}, format: 'json', fields: undefined }),
    );
  });

  it.each([
    [0, 0.1, 0],
    [30, 0.1, 3],
    [31, 0.1, 4],
    [1251, 0.10071942446043165, 126],
    [5, 1, 5],
  ])('estimate of %i rows at %f credits per row is %i', (rows, price, expected) => {
    expect(estimateExportCredits(rows, price)).toBe(expected);
  });
});
