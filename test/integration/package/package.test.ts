/**
 * The package as installed: what `npm run build` makes (tsconfig.build.json), reached through
 * package.json's `main` and `bin`. Every other test runs the sources; these run a build, made by
 * this file into a private folder (fresh every run, so it cannot be stale, and `dist/` is neither
 * needed nor touched) and removed afterwards.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { delimiter, dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MINIMUM_NODE_VERSION, unsupportedNodeMessage } from '../../../src/cli/node-version.js';
import { CLI_NODE_OPTIONS } from '../../../src/util/heap-growth.js';
import type * as PackageEntry from '../../../src/index.js';
import { describeRun, startNodeScript } from '../../helpers/cli.js';
import { diffMirrorWithTruth } from '../../helpers/mirror-truth.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { recordFinishedChild } from '../../resilience/security/child-output.js';

const ROOT = resolve(import.meta.dirname, '..', '..', '..');
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  main: string;
  bin: Record<string, string>;
};
/** The build's folder, where package.json's paths point (`dist`). */
const DIST = (
  JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8')) as { compilerOptions: { outDir: string } }
).compilerOptions.outDir;
/** The build of this run; inside the repository, so its imports find node_modules. */
const BUILD = join(ROOT, '.tmp', `package-build-${process.pid}-${Date.now()}`);

/** A package.json path (`dist/…`) in this run's build. */
function built(packagePath: string): string {
  const inDist = relative(DIST, packagePath);
  expect(inDist.startsWith('..'), `${packagePath} is not under ${DIST}/`).toBe(false);
  return join(BUILD, inDist);
}

beforeAll(async () => {
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const run = await startNodeScript(tsc, ['-p', 'tsconfig.build.json', '--outDir', BUILD], {
    cwd: ROOT,
  }).exited;
  if (run.code !== 0) throw new Error(`npm run build's compile failed: ${describeRun(run)}`);
}, 240_000);

afterAll(() => rm(BUILD, { recursive: true, force: true }));

/**
 * A node on this machine older than the supported lines, with its version: the first on PATH or
 * in the usual system places. CI's machines have one, their system Node.
 */
function olderNode(): { path: string; version: string } | undefined {
  const candidates = new Set(['/usr/bin/node', '/usr/local/bin/node']);
  for (const dir of (process.env.PATH ?? '').split(delimiter))
    if (dir !== '') candidates.add(join(dir, 'node'));
  for (const path of candidates) {
    if (!existsSync(path)) continue;
    const args = ['-p', 'process.versions.node'];
    // child-process-check: asks a node other than this one its version, to find an older one.
    const run = spawnSync(path, args, { encoding: 'utf8' });
    recordFinishedChild({ args }, run);
    const version = run.stdout?.trim() ?? '';
    if (run.status === 0 && unsupportedNodeMessage(version, path) !== undefined) return { path, version };
  }
  return undefined;
}
const OLDER_NODE = olderNode();

describe('the package entry point', () => {
  // A main that points nowhere, or an entry that stops exporting, fails here.
  it('loads from package.json "main" and runs a sync against the simulator with what it exports', async () => {
    const entry = (await import(pathToFileURL(built(PKG.main)).href)) as typeof PackageEntry;
    for (const name of [
      'createClient',
      'loadConfig',
      'openMirror',
      'openRunContext',
      'startSimulator',
      'syncPipeline',
      'exportPipeline',
      'enrichPipeline',
      'snapshotPipeline',
      'runNamedPipeline',
    ] as const)
      expect(typeof entry[name], name).toBe('function');
    // Heap tuning belongs to the CLI, not to a program that imports the package.
    expect(Object.keys(entry)).not.toContain('limitHeapGrowth');
    expect(Object.keys(entry)).not.toContain('HEAP_GROWING_PERCENT');
    expect(new entry.NotFoundError({ method: 'GET', path: '/domains/x', status: 404 })).toBeInstanceOf(
      entry.ApiError,
    );

    const sim = await entry.startSimulator({ domains: 40, seed: 7 });
    try {
      const dir = await tempDir();
      const configPath = join(dir, 'config.json');
      writeFileSync(
        configPath,
        JSON.stringify({
          api: { baseUrl: sim.baseUrl, requestsPerSecond: 1000 },
          database: { path: join(dir, 'mirror.sqlite') },
        }),
      );
      const { config, errors } = entry.loadConfig({ env: {}, cwd: dir, configPath });
      expect(errors).toEqual([]);
      // The built sync writes through the built mirror writer thread (a .js worker beside it).
      const ctx = await entry.openRunContext({ config: config!, apiKey: sim.apiKey });
      let result;
      try {
        result = await entry.syncPipeline(ctx, {});
      } finally {
        await ctx.close();
      }
      expect(result).toMatchObject({ status: 'done', stats: { listed: 40, profilesFetched: 40 } });
      expect(diffMirrorWithTruth(join(dir, 'mirror.sqlite'), sim)).toEqual([]);
    } finally {
      await sim.close();
    }
  });
});

describe('the domain-sync binary (package.json "bin")', () => {
  it('starts with the shebang of CLI_NODE_OPTIONS', () => {
    const shebang = `#!/usr/bin/env -S node ${CLI_NODE_OPTIONS.join(' ')}`;
    expect(readFileSync(built(PKG.bin['domain-sync']!), 'utf8').split('\n')[0]).toBe(shebang);
  });

  it('run through its shebang, runs on this node with those options', async () => {
    const bin = built(PKG.bin['domain-sync']!);
    const dir = await tempDir();
    const report = join(dir, 'node.json');
    const probe = join(dir, 'probe.cjs');
    writeFileSync(
      probe,
      `require('node:fs').writeFileSync(${JSON.stringify(report)}, JSON.stringify({ version: process.version, execArgv: process.execArgv }));\n`,
    );
    // npm makes a package's bin executable when it installs it; tsc does not.
    chmodSync(bin, 0o755);
    const env = {
      PATH: [dirname(process.execPath), process.env.PATH ?? ''].join(delimiter),
      NODE_OPTIONS: `--require ${probe}`,
    };
    // child-process-check: runs the binary the way a user's shell does, through its shebang; PATH
    // starts with the folder of the node running this test, so that node is the one `env` finds.
    const run = spawnSync(bin, ['--help'], { encoding: 'utf8', env });
    recordFinishedChild({ args: ['--help'], env }, run);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/sync/);
    const seen = JSON.parse(readFileSync(report, 'utf8')) as { version: string; execArgv: string[] };
    expect(seen.version).toBe(process.version);
    expect(seen.execArgv).toEqual([...CLI_NODE_OPTIONS]);
  });

  // Found on 2026-11-30: on Node 20 (this machine's system Node) `sync` failed with "internal
  // error (this is a bug, please report it): Cannot read properties of undefined (reading 'bind')",
  // from undici 8 loading, and `--version` worked.
  it.runIf(OLDER_NODE !== undefined)(
    "on a node older than the supported lines (this machine's), stops at once naming the version it needs: exit 1",
    async () => {
      const { path, version } = OLDER_NODE!;
      const bin = built(PKG.bin['domain-sync']!);
      chmodSync(bin, 0o755);
      const dir = await tempDir();
      // The way a cron job whose PATH finds the system's node runs it: through the shebang.
      const env = { PATH: [dirname(path), process.env.PATH ?? ''].join(delimiter), DOMAIN_SYNC_API_KEY: 'k' };
      const args = ['--db', join(dir, 'mirror.sqlite'), 'sync', '--json'];
      // child-process-check: runs the binary through its shebang with an older node first on PATH.
      const run = spawnSync(bin, args, { encoding: 'utf8', env, cwd: dir });
      recordFinishedChild({ args, env }, run);
      // --json: the one summary object, as for any command that fails.
      expect(JSON.parse(run.stdout)).toEqual({
        command: null,
        ok: false,
        exitCode: 1,
        error: { code: 'ERR_UNSUPPORTED_NODE', message: run.stderr.trim() },
      });
      expect(run.stderr).toContain(`domain-sync needs Node.js ${MINIMUM_NODE_VERSION} or newer`);
      expect(run.stderr).toContain(`this is Node.js v${version}`);
      expect(run.stderr).not.toMatch(/internal error/);
      expect(run.status).toBe(1);
      expect(existsSync(join(dir, 'mirror.sqlite'))).toBe(false);
    },
  );
});
