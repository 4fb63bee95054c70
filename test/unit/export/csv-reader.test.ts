import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { csvRecordsOf, readCsvRecords, readExportRows } from '../../../pipelines/export/format.js';
import { exportFile } from '../../helpers/export-rows.js';

/** Every record `csvRecordsOf` gives for `chunks`, read as they are split here. */
async function records(chunks: readonly Buffer[], options?: { to?: number }): Promise<string[][]> {
  const out: string[][] = [];
  for await (const record of csvRecordsOf(Readable.from(chunks, { objectMode: false }), options)) {
    out.push(record);
  }
  return out;
}

describe('the CSV reader of export files', () => {
  it('keeps a character whose UTF-8 bytes two reads split', async () => {
    const text = 'domain_normalized,note\nü.example,"日本語 😀, ""quoted"""\n';
    const bytes = Buffer.from(text);
    // Split inside every multi-byte character in turn (and everywhere else).
    for (let at = 1; at < bytes.length; at++) {
      expect(await records([bytes.subarray(0, at), bytes.subarray(at)])).toEqual([
        ['domain_normalized', 'note'],
        ['ü.example', '日本語 😀, "quoted"'],
      ]);
    }
  });

  it('reads a file much larger than one read, its records in order, with a byte-order mark dropped', async () => {
    const rows = Array.from({ length: 5_000 }, (_, i) => `d${i}.example,"${'ä'.repeat(i % 97)},x""${i}"""`);
    const path = await exportFile('big.csv', `\uFEFFdomain_normalized,note\r\n${rows.join('\r\n')}\r\n`);
    const got: string[][] = [];
    for await (const record of readCsvRecords(path)) got.push(record);
    expect(got).toHaveLength(5_001);
    expect(got[0]).toEqual(['domain_normalized', 'note']);
    expect(
      got.slice(1).every((r, i) => r[0] === `d${i}.example` && r[1] === `${'ä'.repeat(i % 97)},x"${i}"`),
    ).toBe(true);
  });

  it('reads no further ahead than it must while its consumer is busy', async () => {
    let chunksRead = 0;
    const source = Readable.from(
      (function* () {
        yield Buffer.from('domain_normalized,note\n');
        for (let c = 0; c < 1_000; c++) {
          chunksRead++;
          yield Buffer.from(Array.from({ length: 100 }, (_, i) => `d${c}-${i}.example,x\n`).join(''));
        }
      })(),
      { objectMode: false },
    );
    const reader = csvRecordsOf(source);
    expect((await reader.next()).value).toEqual(['domain_normalized', 'note']);
    // The consumer holds on to the rest for a while: the stream must not keep flowing meanwhile.
    // Each chunk is 1.6 KB; the streams' buffers between the file and the consumer hold about
    // 64 KB (41 chunks were read here), far from the 1.6 MB of the whole input.
    for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(chunksRead).toBeLessThan(100);
    let rest = 0;
    for await (const record of reader) rest += record.length === 2 ? 1 : 0;
    expect(rest).toBe(100_000);
    expect(chunksRead).toBe(1_000);
  });

  it('stops after `to` records', async () => {
    expect(await records([Buffer.from('a,b\n1,2\n3,4\n')], { to: 1 })).toEqual([['a', 'b']]);
  });

  for (const [what, text, line] of [
    ['a quote left open', 'domain_normalized,status\na.example,x\nb.example,"y\nc.example,z\n', 3],
    ['text after a closing quote', 'domain_normalized,status\na.example,x\nb.example,"y"z\n', 3],
    ['a record with fewer cells', 'domain_normalized,status\na.example,x\nb.example\n', 3],
    ['a record with more cells', 'domain_normalized,status\na.example,x,y\n', 2],
    ['a quote inside an unquoted cell', 'domain_normalized,status\na.example,x\nb.example,y"z\n', 3],
  ] as const) {
    it(`refuses ${what}, naming the line, and gives no row after it`, async () => {
      const path = await exportFile('bad.csv', text);
      const seen: string[] = [];
      const read = async (): Promise<void> => {
        for await (const { row } of readExportRows(path, 'csv')) seen.push(row.profile.domain_normalized);
      };
      const error: unknown = await read().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toMatchObject({
        code: 'ERR_EXPORT_FILE_INVALID',
        message: expect.stringContaining(`${path}: not a readable CSV file near line ${line}`),
      });
      expect((error as Error).message).toMatch(/nothing was loaded$/);
      expect(seen).toEqual(line === 3 ? ['a.example'] : []);
    });
  }
});
