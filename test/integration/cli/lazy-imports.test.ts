import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openMirror } from '../../../src/mirror/database.js';
import { MIRROR_MIGRATIONS } from '../../../src/mirror/migrations/index.js';
import { MIRROR_MIGRATION_NAMES } from '../../../src/mirror/migrations/names.js';
import { runCli, type CliRun } from '../../helpers/cli.js';
import { startTestSimulator } from '../../helpers/start-simulator.js';
import { tempDir } from '../../helpers/temp-dir.js';

/*
 * A command loads the heavy libraries only when it uses them. Opening a mirror that is up to date
 * loads neither kysely nor the migrations (src/mirror/database.ts, migrations/names.ts): importing
 * kysely took 106–151 ms of every command's start. The Parquet writer (hyparquet-writer, with the
 * hyparquet reader it imports) is loaded by the commands that write snapshots, not by `sync`
 * (pipelines/tables.ts), and a named run loads only the pipelines of its steps. These tests run
 * the CLI with a module hook that counts the modules each package loaded.
 */

const COUNTED = ['kysely', 'hyparquet-writer', 'pg', 'csv-parse'] as const;
type Counts = Record<(typeof COUNTED)[number], number>;

/** No module of any {@link COUNTED} package. */
const NONE: Readonly<Counts> = Object.freeze(Object.fromEntries(COUNTED.map((name) => [name, 0])) as Counts);

/**
 * A `--import` module that writes how many modules of each {@link COUNTED} package were loaded, at
 * exit. Worker threads inherit the `--import`, so each thread writes its own line.
 */
async function moduleCounter(dir: string): Promise<string> {
  const path = join(dir, 'count-modules.mjs');
  await writeFile(
    path,
    [
      "import { registerHooks } from 'node:module';",
      `const counted = ${JSON.stringify(COUNTED)};`,
      'const loaded = Object.fromEntries(counted.map((name) => [name, 0]));',
      'registerHooks({',
      '  load(url, context, next) {',
      '    for (const name of counted) if (url.includes(`/node_modules/${name}/`)) loaded[name]++;',
      '    return next(url, context);',
      '  },',
      '});',
      "process.on('exit', () => process.stderr.write(`modules loaded: ${JSON.stringify(loaded)}\\n`));",
    ].join('\n'),
  );
  return pathToFileURL(path).href;
}

function modulesLoaded(run: CliRun): Counts {
  // One line per thread that ended: the main thread's and each worker's (the sync's mirror
  // writer opens the mirror too), as the hook runs in every thread.
  const lines = [...run.stderr.matchAll(/^modules loaded: (\{.*\})$/gm)];
  if (lines.length === 0) throw new Error(`no count in the child's stderr:\n${run.stderr}`);
  const total: Counts = { ...NONE };
  for (const line of lines) {
    const counts = JSON.parse(line[1]!) as Counts;
    for (const name of COUNTED) total[name] += counts[name];
  }
  return total;
}

describe('heavy libraries are loaded only by the commands that use them', () => {
  it('MIRROR_MIGRATION_NAMES lists every migration of MIRROR_MIGRATIONS, in order', () => {
    expect([...MIRROR_MIGRATION_NAMES]).toEqual(Object.keys(MIRROR_MIGRATIONS));
  });

  it('kysely only to migrate a new mirror, the Parquet writer only to snapshot, pg and csv-parse not for sync or nightly', async () => {
    const sim = await startTestSimulator({ domains: 30, seed: 5 });
    const dir = await tempDir();
    const db = join(dir, 'mirror.sqlite');
    const nodeArgs = ['--import', await moduleCounter(dir)];
    const env = { DOMAIN_SYNC_API_KEY: sim.apiKey, DOMAIN_SYNC_BASE_URL: sim.baseUrl };
    const options = { cwd: dir, env, nodeArgs };

    // The mirror is new: its migrations run, through kysely's Migrator.
    const first = await runCli(['status', '--db', db], options);
    expect(first.code).toBe(0);
    expect(modulesLoaded(first).kysely).toBeGreaterThan(100);

    const sync = await runCli(['sync', '--db', db], options);
    expect(sync.code, sync.stderr).toBe(0);
    expect(sync.stdout).toContain('mirror:');
    // The main thread and the mirror writer's thread.
    expect(sync.stderr.match(/^modules loaded: /gm)).toHaveLength(2);
    expect(modulesLoaded(sync)).toEqual(NONE);

    const snapshot = await runCli(['snapshot', '--db', db, '--out', join(dir, 'snapshots')], options);
    expect(snapshot.code, snapshot.stderr).toBe(0);
    expect(snapshot.stdout).toMatch(/domains\s+30 rows/);
    const snapshotLoaded = modulesLoaded(snapshot);
    expect(snapshotLoaded.kysely).toBe(0);
    expect(snapshotLoaded['hyparquet-writer']).toBeGreaterThan(5);

    // The default nightly pipeline, sync then snapshot: the pipelines of other steps (publish with
    // pg and kysely, export with csv-parse) stay unloaded (pipelines/registry.ts).
    const nightly = await runCli(['run', 'nightly', '--db', db], options);
    expect(nightly.code, nightly.stderr).toBe(0);
    expect(nightly.stdout).toMatch(/1\. snapshot\s+done/);
    const nightlyLoaded = modulesLoaded(nightly);
    expect(nightlyLoaded).toMatchObject({ kysely: 0, pg: 0, 'csv-parse': 0 });
    expect(nightlyLoaded['hyparquet-writer']).toBeGreaterThan(5);

    const status = await runCli(['status', '--db', db], options);
    expect(status.code).toBe(0);
    // It reads the snapshot's manifest without the Parquet writer (src/warehouse/manifest.ts).
    expect(status.stdout).toMatch(/domains\s+\d{4}-\d{2}-\d{2}\s+30 rows/);
    expect(modulesLoaded(status)).toEqual(NONE);
  });

  it('mirror.db of an up-to-date mirror is made on first use, once, and reads the mirror', async () => {
    const dir = await tempDir();
    const path = join(dir, 'mirror.sqlite');
    await (await openMirror(path)).close();
    const mirror = await openMirror(path);
    try {
      const db = mirror.db;
      expect(mirror.db).toBe(db);
      const tables = await db.selectFrom('domains').select('domain_normalized').execute();
      expect(tables).toEqual([]);
    } finally {
      await mirror.close();
    }
    // Closed with its kysely instance: nothing can use the connection any more.
    await expect(mirror.db.selectFrom('domains').selectAll().execute()).rejects.toThrow();
  });
});
