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
 * Opening a mirror that is up to date loads neither kysely nor the migrations (database.ts,
 * migrations/names.ts): importing kysely took 106–151 ms of every command's start. These tests run
 * the CLI with a module hook that counts the kysely modules the process loads.
 */

/** A `--import` module that writes how many kysely modules the process loaded, at exit. */
async function kyselyCounter(dir: string): Promise<string> {
  const path = join(dir, 'count-kysely.mjs');
  await writeFile(
    path,
    [
      "import { registerHooks } from 'node:module';",
      'let loaded = 0;',
      'registerHooks({',
      '  load(url, context, next) {',
      "    if (url.includes('/node_modules/kysely/')) loaded++;",
      '    return next(url, context);',
      '  },',
      '});',
      "process.on('exit', () => process.stderr.write(`kysely modules loaded: ${loaded}\\n`));",
    ].join('\n'),
  );
  return pathToFileURL(path).href;
}

function kyselyModules(run: CliRun): number {
  const match = /kysely modules loaded: (\d+)/.exec(run.stderr);
  if (match === null) throw new Error(`no count in the child's stderr:\n${run.stderr}`);
  return Number(match[1]);
}

describe('kysely is loaded only when a mirror needs it', () => {
  it('MIRROR_MIGRATION_NAMES lists every migration of MIRROR_MIGRATIONS, in order', () => {
    expect([...MIRROR_MIGRATION_NAMES]).toEqual(Object.keys(MIRROR_MIGRATIONS));
  });

  it('a command on a new mirror loads it to migrate; sync, snapshot and status on an up-to-date mirror do not', async () => {
    const sim = await startTestSimulator({ domains: 30, seed: 5 });
    const dir = await tempDir();
    const db = join(dir, 'mirror.sqlite');
    const nodeArgs = ['--import', await kyselyCounter(dir)];
    const env = { DOMAIN_SYNC_API_KEY: sim.apiKey, DOMAIN_SYNC_BASE_URL: sim.baseUrl };
    const options = { cwd: dir, env, nodeArgs };

    // The mirror is new: its migrations run, through kysely's Migrator.
    const first = await runCli(['status', '--db', db], options);
    expect(first.code).toBe(0);
    expect(kyselyModules(first)).toBeGreaterThan(100);

    const sync = await runCli(['sync', '--db', db], options);
    expect(sync.code, sync.stderr).toBe(0);
    expect(sync.stdout).toContain('mirror:');
    expect(kyselyModules(sync)).toBe(0);

    const snapshot = await runCli(['snapshot', '--db', db, '--out', join(dir, 'snapshots')], options);
    expect(snapshot.code, snapshot.stderr).toBe(0);
    expect(snapshot.stdout).toMatch(/domains\s+30 rows/);
    expect(kyselyModules(snapshot)).toBe(0);

    const status = await runCli(['status', '--db', db], options);
    expect(status.code).toBe(0);
    expect(kyselyModules(status)).toBe(0);
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
