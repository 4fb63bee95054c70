import { spawnSync } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_NODE_OPTIONS, HEAP_GROWING_PERCENT } from '../../../src/util/heap-growth.js';
import { CLI, runCliProcess } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/temp-dir.js';

// The CLI holds its memory down in two ways (src/util/heap-growth.ts): V8's heap growing factor,
// set at start, and node options on the binary's shebang line, which V8 reads only at start.
// V8 does not fail on a runtime flag it does not know (it prints "unrecognized flag" and goes
// on), and a shebang nobody runs through is easy to break, so a renamed flag in a newer Node or
// a lost shebang would silently stop holding memory down. These tests catch that on the Node
// that runs them.
describe('memory settings of the CLI process', () => {
  it('the heap growing factor is a flag this V8 knows: setting it prints nothing', () => {
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

  it('the shebang options are ones this node accepts at start (and a wrong one is refused)', () => {
    const good = spawnSync(process.execPath, [...CLI_NODE_OPTIONS, '-e', ''], { encoding: 'utf8' });
    expect(good.stderr).toBe('');
    expect(good.status).toBe(0);
    const bad = spawnSync(process.execPath, ['--max-semi-space-sizes=8', '-e', ''], { encoding: 'utf8' });
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toMatch(/bad option/);
  });

  it('src/cli/main.ts and the built binary start with the shebang of CLI_NODE_OPTIONS', () => {
    const shebang = `#!/usr/bin/env -S node ${CLI_NODE_OPTIONS.join(' ')}`;
    const source = join(import.meta.dirname, '..', '..', '..', 'src', 'cli', 'main.ts');
    expect(readFileSync(source, 'utf8').split('\n')[0]).toBe(shebang);
    expect(readFileSync(CLI, 'utf8').split('\n')[0]).toBe(shebang);
  });

  it('run through its shebang, the binary runs on this node with those options', async () => {
    const dir = await tempDir();
    const report = join(dir, 'node.json');
    const probe = join(dir, 'probe.cjs');
    writeFileSync(
      probe,
      `require('node:fs').writeFileSync(${JSON.stringify(report)}, JSON.stringify({ version: process.version, execArgv: process.execArgv }));\n`,
    );
    // npm makes a package's bin executable when it installs it; tsc does not.
    chmodSync(CLI, 0o755);
    // child-process-check: runs the binary the way a user's shell does, through its shebang; PATH
    // starts with the folder of the node running this test, so that node is the one `env` finds.
    const run = spawnSync(CLI, ['--help'], {
      encoding: 'utf8',
      env: {
        PATH: [dirname(process.execPath), process.env.PATH ?? ''].join(delimiter),
        NODE_OPTIONS: `--require ${probe}`,
      },
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/sync/);
    const seen = JSON.parse(readFileSync(report, 'utf8')) as { version: string; execArgv: string[] };
    expect(seen.version).toBe(process.version);
    expect(seen.execArgv).toEqual([...CLI_NODE_OPTIONS]);
  });

  it('the built CLI writes nothing to stderr for --help', async () => {
    const run = await runCliProcess(['--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/sync/);
    expect(run.stderr).toBe('');
  });
});
