import { describe, expect, it } from 'vitest';
import { readCsvInKeyOrder, scanCsvKeys } from '../../../pipelines/export/csv-order.js';
import { readExportRows } from '../../../pipelines/export/index.js';
import { AbortedError } from '../../../src/util/domain-sync-error.js';
import { exportFile, keyOfRow, readAllRows, sortedByKey } from '../../helpers/export-rows.js';

const file = (text: string): Promise<string> => exportFile('export.csv', text);

describe('a CSV export file read in key order', () => {
  for (const eol of ['\n', '\r\n']) {
    it(`gives the rows a read in file order gives, sorted by key, each named by its row (${JSON.stringify(eol)} line ends)`, async () => {
      const records = [
        // The key in the second column, a byte-order mark, an unknown column.
        '\uFEFFstatus,domain_normalized,licenses,extra_note',
        'enriched,m.example,[],a',
        '',
        // A quoted key with a doubled quote; a cell with a comma and a line break inside quotes.
        `first,"b,""x"".example","[{""jurisdiction"":""mga"",""license_number"":""1""}]","two${eol}lines"`,
        'other,ü.example,,',
        'second,"b,""x"".example",[],',
        'last,a.example,[],z',
      ];
      const path = await file(records.join(eol));
      const inFileOrder = await readAllRows(readExportRows(path, 'csv'));
      expect(inFileOrder).toHaveLength(5);
      const order = await scanCsvKeys(path);
      expect(order).toBeDefined();
      expect(order!.rows).toBe(5);
      const unknownColumns = new Set<string>();
      const inKeyOrder = await readAllRows(readCsvInKeyOrder(order!, { unknownColumns }));
      expect(inKeyOrder).toEqual(sortedByKey(inFileOrder));
      expect(inKeyOrder.map(keyOfRow)).toEqual([
        'a.example',
        'b,"x".example',
        'b,"x".example',
        'm.example',
        'ü.example',
      ]);
      expect(inKeyOrder.map((r) => r.row.profile.status)).toEqual([
        'last',
        'first',
        'second',
        'enriched',
        'other',
      ]);
      expect(inKeyOrder[0]!.where).toBe(`${path} row 5 (line 6)`);
      expect((inKeyOrder[1]!.row.profile as unknown as Record<string, unknown>).extra_note).toBe(
        `two${eol}lines`,
      );
      expect([...unknownColumns]).toEqual(['extra_note']);
    });
  }

  it('finds the records of a file whose records are longer than the scan reads at once', async () => {
    const big = (key: string): string => `${key},"${'x'.repeat(1_500_000)}"`;
    const path = await file(
      `domain_normalized,note\n${big('z.example')}\n${big('a.example')}\nk.example,short`,
    );
    const order = await scanCsvKeys(path);
    const rows = await readAllRows(readCsvInKeyOrder(order!));
    expect(rows.map(keyOfRow)).toEqual(['a.example', 'k.example', 'z.example']);
    expect((rows[0]!.row.profile as unknown as Record<string, unknown>).note).toHaveLength(1_500_000);
    expect(rows.map((r) => r.where.slice(path.length))).toEqual([
      ' row 2 (line 3)',
      ' row 3 (line 4)',
      ' row 1 (line 2)',
    ]);
  });

  it('leaves to the read in file order a file whose bytes it could read otherwise than the reader', async () => {
    for (const text of [
      'domain_normalized,status\na.example,x\r\nb.example,y\n', // CRLF and LF both
      'domain_normalized,status\ra.example,x\rb.example,y\r', // carriage returns alone
      'domain_normalized,status\na.example,"x\nb.example,y\n', // a quote left open
      'domain_normalized,status\na.example,x\r', // a carriage return at the end of an LF file
      'domain,status\na.example,x\n', // no key column: refused in file order
      '',
    ])
      expect(await scanCsvKeys(await file(text))).toBeUndefined();
  });

  it('a record with another number of cells is refused, naming its row', async () => {
    const path = await file('domain_normalized,status\nb.example,x\na.example,y,extra\nc.example,z\n');
    const order = await scanCsvKeys(path);
    await expect(readAllRows(readCsvInKeyOrder(order!))).rejects.toMatchObject({
      code: 'ERR_EXPORT_FILE_INVALID',
      message: expect.stringContaining(`${path}: not a readable CSV file near line 3`),
    });
  });

  it('an aborted scan stops', async () => {
    const controller = new AbortController();
    controller.abort();
    const path = await file('domain_normalized\na.example\n');
    await expect(scanCsvKeys(path, { signal: controller.signal })).rejects.toBeInstanceOf(AbortedError);
  });
});
