import { describe, expect, it } from 'vitest';
import { readExportRows } from '../../../pipelines/export/index.js';
import { readNdjsonInKeyOrder, scanNdjsonKeys } from '../../../pipelines/export/ndjson-order.js';
import { AbortedError } from '../../../src/util/domain-sync-error.js';
import { exportFile, keyOfRow, readAllRows, sortedByKey } from '../../helpers/export-rows.js';

const file = (text: string): Promise<string> => exportFile('export.ndjson', text);
const line = (o: Record<string, unknown>): string => JSON.stringify(o);

describe('an NDJSON export file read in key order', () => {
  it('gives the rows a read in file order gives, sorted by key, the same key in file order, each named by its line', async () => {
    const lines = [
      // A byte-order mark on the first line, which also names the key column.
      `\uFEFF${line({ domain_normalized: 'm.example', status: 'enriched' })}`,
      '',
      '   ',
      `${line({ domain: 'B.example', domain_normalized: 'b.example', status: 'first' })}\r`,
      // The key escaped, spelled another way, after a nested value: each line is parsed for it.
      '{"domain_normalized":"\\u00e9.example","status":"escaped"}',
      line({ normalized_domain: 'c.example', status: 'other spelling' }),
      line({ operator: { name: 'Op' }, domain_normalized: 'a.example' }),
      line({ domain_normalized: 'ü.example', related_domains: ['a.example'], extra_note: 'kept' }),
      // Repeated: the later line must still come later.
      line({ domain_normalized: 'b.example', status: 'second' }),
      // Two key columns, or one twice: the parse keeps the last, and so must the order.
      '{"domain_normalized":"0.example","domain_normalized":"z.example"}',
      line({ domain_normalized: 'y.example', domainNormalized: '1.example' }),
      // The last line, without a newline after it.
      line({ domain_normalized: 'k.example', status: 'last' }),
    ];
    const path = await file(lines.join('\n'));
    const inFileOrder = await readAllRows(readExportRows(path, 'json'));
    expect(inFileOrder).toHaveLength(10);

    const order = await scanNdjsonKeys(path);
    expect(order.rows).toBe(10);
    const unknownColumns = new Set<string>();
    const inKeyOrder = await readAllRows(readNdjsonInKeyOrder(order, { unknownColumns }));
    expect(inKeyOrder).toEqual(sortedByKey(inFileOrder));
    expect(inKeyOrder.map(keyOfRow)).toEqual([
      '1.example',
      'a.example',
      'b.example',
      'b.example',
      'c.example',
      'k.example',
      'm.example',
      'z.example',
      'é.example',
      'ü.example',
    ]);
    expect(inKeyOrder.filter((r) => keyOfRow(r) === 'b.example').map((r) => r.row.profile.status)).toEqual([
      'first',
      'second',
    ]);
    expect(inKeyOrder.find((r) => keyOfRow(r) === 'k.example')!.where).toBe(`${path} line 12`);
    expect([...unknownColumns]).toEqual(['extra_note']);
  });

  it('finds the lines of a file whose lines are longer than the scan reads at once', async () => {
    const long = Array.from({ length: 3 }, (_, i) => `giant${i}.example`.padEnd(40, 'x'));
    const big = (key: string): string =>
      line({ domain_normalized: key, related_domains: Array.from({ length: 60_000 }, () => 'r.example') });
    const path = await file(
      `${big('z.example')}\n${big('a.example')}\n${line({ domain_normalized: long[0] })}\n`,
    );
    const order = await scanNdjsonKeys(path);
    const rows = await readAllRows(readNdjsonInKeyOrder(order));
    expect(rows.map(keyOfRow)).toEqual(['a.example', long[0], 'z.example']);
    expect((rows[0]!.row.profile as { related_domains: string[] }).related_domains).toHaveLength(60_000);
    expect(rows.map((r) => r.where.slice(path.length))).toEqual([' line 2', ' line 3', ' line 1']);
  });

  it('refuses before anything is read in key order: a first line without the key column, a line that is not a JSON object', async () => {
    const noKey = await file(
      `${line({ domain: 'a.example' })}\n${line({ domain_normalized: 'b.example' })}\n`,
    );
    await expect(scanNdjsonKeys(noKey)).rejects.toMatchObject({ code: 'ERR_EXPORT_LAYOUT' });
    const notJson = await file(
      `${line({ domain_normalized: 'a.example' })}\n${line({ domain_normalized: 'b.example' })}\nnot json\n`,
    );
    await expect(scanNdjsonKeys(notJson)).rejects.toMatchObject({
      code: 'ERR_EXPORT_FILE_INVALID',
      message: expect.stringContaining(`${notJson} line 3: not a JSON object`),
    });
  });

  it('a line whose key it read from the bytes but that is broken is refused when read, naming its line', async () => {
    const path = await file(
      `${line({ domain_normalized: 'b.example' })}\n{"domain_normalized":"a.example",\n`,
    );
    const order = await scanNdjsonKeys(path);
    await expect(readAllRows(readNdjsonInKeyOrder(order))).rejects.toMatchObject({
      code: 'ERR_EXPORT_FILE_INVALID',
      message: expect.stringContaining(`${path} line 2: not a JSON object`),
    });
  });

  it('an empty file has no rows; an aborted scan stops', async () => {
    expect((await scanNdjsonKeys(await file(''))).rows).toBe(0);
    const controller = new AbortController();
    controller.abort();
    const path = await file(`${line({ domain_normalized: 'a.example' })}\n`);
    await expect(scanNdjsonKeys(path, { signal: controller.signal })).rejects.toBeInstanceOf(AbortedError);
  });
});
