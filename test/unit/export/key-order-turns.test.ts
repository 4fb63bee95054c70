import { describe, expect, it } from 'vitest';
import { readCsvInKeyOrder, scanCsvKeys } from '../../../pipelines/export/csv-order.js';
import { ROW_BYTES_PER_TURN } from '../../../pipelines/export/key-order.js';
import { readNdjsonInKeyOrder, scanNdjsonKeys } from '../../../pipelines/export/ndjson-order.js';
import { exportFile } from '../../helpers/export-rows.js';
import type { ReadRow } from '../../helpers/export-rows.js';

/*
 * The key-order readers read each row synchronously. Without turns of the event loop between
 * rows, a whole load would run without one: no timer, no I/O callback and no garbage-collection
 * notice (which the CLI's cap on the young generation acts on, src/util/heap-growth.ts) between
 * its first row and its last.
 */

const ROWS = 1_000;
const note = 'x'.repeat(2_000);
const keys = Array.from({ length: ROWS }, (_, i) => `d${String((i * 7919) % ROWS).padStart(4, '0')}.example`);

/** How many times a repeating setImmediate ran while `rows` gave its rows after the first. */
async function turnsWhileReading(rows: AsyncIterable<ReadRow>): Promise<{ rows: number; turns: number }> {
  let read = 0;
  let turns = 0;
  let timer: NodeJS.Immediate | undefined;
  const tick = (): void => {
    turns += 1;
    timer = setImmediate(tick);
  };
  try {
    for await (const _ of rows) {
      read += 1;
      if (read === 1) timer = setImmediate(tick);
    }
  } finally {
    clearImmediate(timer);
  }
  return { rows: read, turns };
}

describe('a file read in key order lets the event loop turn as it goes', () => {
  const bytes = ROWS * note.length;
  // About one turn per ROW_BYTES_PER_TURN read; the first row's share and rounding allowed for.
  const atLeast = Math.floor(bytes / ROW_BYTES_PER_TURN) - 1;

  it('the file is many turns long (so the checks below can fail)', () => {
    expect(atLeast).toBeGreaterThanOrEqual(5);
  });

  it('NDJSON', async () => {
    const path = await exportFile(
      'export.ndjson',
      keys.map((domain_normalized) => JSON.stringify({ domain_normalized, note })).join('\n'),
    );
    const read = await turnsWhileReading(readNdjsonInKeyOrder(await scanNdjsonKeys(path)));
    expect(read.rows).toBe(ROWS);
    expect(read.turns).toBeGreaterThanOrEqual(atLeast);
  });

  it('CSV', async () => {
    const path = await exportFile(
      'export.csv',
      ['domain_normalized,note', ...keys.map((key) => `${key},${note}`)].join('\n'),
    );
    const order = await scanCsvKeys(path);
    expect(order).toBeDefined();
    const read = await turnsWhileReading(readCsvInKeyOrder(order!));
    expect(read.rows).toBe(ROWS);
    expect(read.turns).toBeGreaterThanOrEqual(atLeast);
  });
});
