import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { readCsvInKeyOrder, scanCsvKeys, splitCsvRecord } from '../../../pipelines/export/csv-order.js';
import { readExportRows } from '../../../pipelines/export/index.js';
import { Prng } from '../../../src/simulator/prng.js';
import { exportFile, readAllRows, sortedByKey } from '../../helpers/export-rows.js';

const PIECES = ['a', 'b', ',', '"', '""', '\n', '\r\n', ' ', 'é', '{"k":[1]}', ''];

/** A cell written as a CSV writer writes it: quoted when it holds a comma, quote or line break. */
function encodeCell(cell: string): string {
  return /[",\r\n]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell;
}

/**
 * csv-parse's reading of one record's text: its cells, or undefined when it refuses it or reads
 * other than one record.
 */
function csvParseCells(text: string): string[] | undefined {
  try {
    const records = parse(text, { relax_column_count: true }) as string[][];
    return records.length === 1 ? records[0] : undefined;
  } catch {
    return undefined;
  }
}

describe('splitCsvRecord', () => {
  it('gives the cells a CSV writer wrote, as csv-parse reads them', () => {
    // Seeded, so that a failure can be replayed.
    const prng = new Prng(1);
    for (let n = 0; n < 3000; n++) {
      const cells = Array.from({ length: prng.int(1, 6) }, () =>
        Array.from({ length: prng.int(0, 4) }, () => prng.pick(PIECES)).join(''),
      );
      const text = cells.map(encodeCell).join(',');
      expect(splitCsvRecord(text, cells.length), text).toEqual(cells);
      expect(csvParseCells(text), text).toEqual(cells.length === 1 && cells[0] === '' ? undefined : cells);
      expect(splitCsvRecord(text, cells.length + 1), text).toBeUndefined();
    }
  });

  it('reads any text either as csv-parse does or not at all', () => {
    const prng = new Prng(2);
    let split = 0;
    let left = 0;
    for (let n = 0; n < 20000; n++) {
      const text = Array.from({ length: prng.int(0, 11) }, () => prng.pick(PIECES)).join('');
      const expected = csvParseCells(text);
      // Any number of cells asked for: a reading csv-parse refuses is refused whatever the count.
      let splitOnce = false;
      for (let columns = 1; columns <= 13; columns++) {
        const cells = splitCsvRecord(text, columns);
        if (cells === undefined) continue;
        splitOnce = true;
        // An empty record is not one csv-parse reads: the scan never gives one.
        if (text !== '') expect(cells, JSON.stringify(text)).toEqual(expected);
      }
      if (splitOnce) split += 1;
      else left += 1;
    }
    // Both kinds were met, so the comparison above ran on records of both.
    expect(split).toBeGreaterThan(2000);
    expect(left).toBeGreaterThan(2000);
  });
});

describe('CSV records read in key order', () => {
  for (const [what, record] of [
    // Two quotes, so that the scan does not take the cell for a quote left open.
    ['a quote inside an unquoted cell', 'a.example,y"z"'],
    ['text after a closing quote', 'a.example,"y"z'],
    ['a record with fewer cells', 'a.example'],
  ] as const) {
    it(`${what} is refused as in file order, naming its row and not the reader's own line count`, async () => {
      const path = await exportFile(
        'bad.csv',
        `domain_normalized,status\nz.example,x\n${record}\nb.example,y\n`,
      );
      const order = await scanCsvKeys(path);
      expect(order).toBeDefined();
      const error: unknown = await readAllRows(readCsvInKeyOrder(order!)).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toMatchObject({
        code: 'ERR_EXPORT_FILE_INVALID',
        message: expect.stringContaining(`${path}: not a readable CSV file near line 3`),
      });
      expect((error as Error).message).not.toMatch(/ (at|on) line 2/);
      expect((error as Error).message).toMatch(/nothing was loaded$/);
      await expect(readAllRows(readExportRows(path, 'csv'))).rejects.toMatchObject({
        code: 'ERR_EXPORT_FILE_INVALID',
      });
    });
  }

  it('reads quoted cells, doubled quotes and CRLF line ends as a read in file order does', async () => {
    const path = await exportFile(
      'plain.csv',
      'domain_normalized,status,licenses\r\nb.example,"a ""b""",[]\r\na.example,,"[{""jurisdiction"":""mga""}]"\r\n',
    );
    const inFileOrder = await readAllRows(readExportRows(path, 'csv'));
    const inKeyOrder = await readAllRows(readCsvInKeyOrder((await scanCsvKeys(path))!));
    expect(inKeyOrder).toEqual(sortedByKey(inFileOrder));
    expect(inKeyOrder[1]!.row.profile.status).toBe('a "b"');
  });
});
