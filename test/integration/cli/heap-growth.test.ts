import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { HEAP_GROWING_PERCENT } from '../../../src/util/heap-growth.js';
import { runCliProcess } from '../../helpers/cli.js';

// The CLI sets V8's heap growing factor at start (src/util/heap-growth.ts). V8 does not fail on
// a flag it does not know: it prints "unrecognized flag" and goes on, so a renamed flag in a
// newer Node would silently stop holding memory down. These tests catch that on the Node that
// runs them.
describe('heap growth setting of the CLI process', () => {
  it('is a flag this V8 knows: setting it prints nothing', () => {
    const run = spawnSync(
      process.execPath,
      ['-e', `require('node:v8').setFlagsFromString('--heap-growing-percent=${HEAP_GROWING_PERCENT}')`],
      { encoding: 'utf8' },
    );
    expect(run.status).toBe(0);
    expect(run.stderr).toBe('');
  });

  it('would be reported if V8 did not know it (the check above can fail)', () => {
    const run = spawnSync(
      process.execPath,
      ['-e', `require('node:v8').setFlagsFromString('--heap-growing-percentage=${HEAP_GROWING_PERCENT}')`],
      { encoding: 'utf8' },
    );
    expect(run.stderr).toMatch(/unrecognized flag/);
  });

  it('the built CLI starts with it and writes nothing to stderr for --help', async () => {
    const run = await runCliProcess(['--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/sync/);
    expect(run.stderr).toBe('');
  });
});
