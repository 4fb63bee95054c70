import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { diffMirrorWithTruth } from '../../helpers/mirror-truth.js';
import { tempDir } from '../../helpers/temp-dir.js';
import type * as PackageEntry from '../../../src/index.js';

const root = resolve(import.meta.dirname, '..', '..', '..');

// package.json "main" is what `import 'domain-sync'` loads. It is the built file (`npm test`
// builds first), so this catches a main that points nowhere or an entry that stops exporting.
describe('the package entry point', () => {
  it('loads from package.json "main" and runs a sync against the simulator with what it exports', async () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { main: string };
    const entry = (await import(pathToFileURL(join(root, pkg.main)).href)) as typeof PackageEntry;
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
