/**
 * Where credentials may come from (docs/contract.md "Environment" and "Config file": the API key is
 * never read from the config file; only from `DOMAIN_SYNC_API_KEY`), and the warning about a
 * config file that others can read and that holds something key-like (src/config/load.ts).
 *
 * Files that hold a key on purpose are test inputs, so they live in a private directory that the
 * suite-wide key scan does not look at; everything the CLI writes goes to scanned temp dirs.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runCli, type CliRun } from '../../helpers/cli.js';
import { startTestSimulator } from '../../helpers/start-simulator.js';
import { tempDir } from '../../helpers/temp-dir.js';

const KEY = `client_credentials_${process.pid}_Hk2`;
/** A secret a user might paste that does not look like a service key. */
const UNPREFIXED = `sk_live_${process.pid}_credentialsTest`;

/** A directory for files that contain a key on purpose (inputs), removed after the test. */
function inputDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'domain-sync-key-inputs-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function writeConfig(dir: string, name: string, body: unknown, mode: number): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(body));
  chmodSync(path, mode);
  return path;
}

const READABLE_WARNING = /readable by other users and contains something key-like/;

function warningLines(run: CliRun): string[] {
  return run.stderr.split('\n').filter((l) => READABLE_WARNING.test(l));
}

describe('a config file readable by others that holds something key-like is warned about', () => {
  // The key-like value sits where the strict schema allows any string: a pipeline step option.
  const keyLike = (db: string): unknown => ({
    database: { path: db },
    pipelines: { weekly: { steps: [{ type: 'sync', options: { note: KEY } }] } },
  });

  it('mode 0644 and 0640 warn on stderr naming the file; 0600 and a clean 0644 file do not', async () => {
    const out = await tempDir('domain-sync-cfgmode-');
    const inputs = inputDir();
    const db = join(out, 'mirror.sqlite');
    const cases: Array<[string, string, number, boolean]> = [
      ['world-readable', writeConfig(inputs, 'c644.json', keyLike(db), 0o644), 0o644, true],
      ['group-readable', writeConfig(inputs, 'c640.json', keyLike(db), 0o640), 0o640, true],
      ['private', writeConfig(inputs, 'c600.json', keyLike(db), 0o600), 0o600, false],
      ['clean', writeConfig(out, 'clean.json', { database: { path: db } }, 0o644), 0o644, false],
    ];
    const runs = await Promise.all(
      cases.map(([, path]) => runCli(['status', '--config', path], { cwd: out })),
    );
    cases.forEach(([name, path, , warned], i) => {
      const run = runs[i]!;
      expect(run.code, `${name}: ${run.stderr}`).toBe(0);
      if (warned) {
        expect(warningLines(run), name).toHaveLength(1);
        expect(warningLines(run)[0], name).toContain(path);
      } else {
        expect(warningLines(run), name).toEqual([]);
      }
      // The value itself is never echoed, whatever the mode.
      expect(run.stdout + run.stderr, name).not.toContain(KEY);
    });
    // Key-like content gets the mode-independent "the key is only read from the environment"
    // warning too; the clean file gets none.
    expect(runs[2]!.stderr).toMatch(/looks like an API key; the key is only read from DOMAIN_SYNC_API_KEY/);
    expect(runs[3]!.stderr).not.toMatch(/looks like an API key/);
  });

  it('with log.file set, the warning goes to the log file, naming the config file', async () => {
    const out = await tempDir('domain-sync-cfgmode-');
    const inputs = inputDir();
    const logFile = join(out, 'logs', 'domain-sync.log');
    const path = writeConfig(
      inputs,
      'config.json',
      { ...(keyLike(join(out, 'mirror.sqlite')) as object), log: { file: logFile } },
      0o644,
    );
    const run = await runCli(['status', '--config', path], { cwd: out });
    expect(run.code, run.stderr).toBe(0);
    const log = readFileSync(logFile, 'utf8');
    const lines = log.split('\n').filter((l) => READABLE_WARNING.test(l));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(path);
    expect(log + run.stdout + run.stderr).not.toContain(KEY);
  });
});

describe('credentials are only read from DOMAIN_SYNC_API_KEY', () => {
  it('a key in the config file, a .env file, a CLI flag or the base URL is never used: exit 2 and no request reaches the service', async () => {
    const sim = await startTestSimulator({ domains: 20, apiKeys: [KEY] });
    const out = await tempDir('domain-sync-creds-');
    const inputs = inputDir();
    const db = ['--db', join(out, 'mirror.sqlite')];
    const base = ['--base-url', sim.baseUrl];
    const withCredentials = new URL(sim.baseUrl);
    withCredentials.username = 'user';
    withCredentials.password = KEY;
    writeFileSync(join(inputs, '.env'), `DOMAIN_SYNC_API_KEY=${KEY}\n`);

    const cases: Array<{
      name: string;
      args: string[];
      cwd?: string;
      env?: Record<string, string>;
      expect: RegExp | RegExp[];
      json?: boolean;
    }> = [
      {
        name: 'api.apiKey, apiKey and DOMAIN_SYNC_API_KEY in the config file',
        args: [
          'account',
          ...db,
          ...base,
          '--config',
          writeConfig(
            inputs,
            'a.json',
            { api: { apiKey: KEY }, apiKey: KEY, DOMAIN_SYNC_API_KEY: KEY },
            0o600,
          ),
        ],
        expect: [
          /\bapi\.apiKey: unknown key/m,
          /^\s*apiKey: unknown key/m,
          /^\s*DOMAIN_SYNC_API_KEY: unknown key/m,
        ],
      },
      {
        name: 'the key in a valid config value, no environment variable',
        args: [
          'account',
          ...db,
          ...base,
          '--config',
          writeConfig(inputs, 'd.json', { api: { queryParams: { geo: KEY } } }, 0o600),
        ],
        expect: /DOMAIN_SYNC_API_KEY is not set/,
      },
      {
        name: 'an --api-key flag',
        args: ['account', ...db, ...base, '--api-key', KEY],
        expect: /unknown option/,
      },
      {
        name: 'an --api-key=KEY flag, with --json',
        args: ['--json', 'account', `--api-key=${KEY}`, ...db, ...base],
        expect: /unknown option '--api-key=…'/,
        json: true,
      },
      {
        name: 'a secret without the client_ prefix in --token=',
        args: ['account', `--token=${UNPREFIXED}`, ...db, ...base],
        expect: /unknown option '--token=…'/,
      },
      {
        name: 'a .env file in the working directory',
        args: ['account', ...db, ...base],
        cwd: inputs,
        expect: /DOMAIN_SYNC_API_KEY is not set/,
      },
      {
        name: 'another variable name (API_KEY)',
        args: ['account', ...db, ...base],
        env: { API_KEY: KEY, DOMAIN_SYNC_KEY: KEY },
        expect: /DOMAIN_SYNC_API_KEY is not set/,
      },
      {
        name: 'credentials in DOMAIN_SYNC_BASE_URL',
        args: ['account', ...db],
        env: { DOMAIN_SYNC_BASE_URL: withCredentials.href },
        expect: /DOMAIN_SYNC_BASE_URL: must not contain credentials/,
      },
      {
        name: 'credentials in --base-url, with a key in the environment',
        args: ['account', ...db, '--base-url', withCredentials.href],
        env: { DOMAIN_SYNC_API_KEY: 'client_other_key_not_accepted' },
        expect: /--base-url: must not contain credentials/,
      },
    ];
    const runs = await Promise.all(cases.map((c) => runCli(c.args, { cwd: c.cwd ?? out, env: c.env ?? {} })));
    cases.forEach((c, i) => {
      const run = runs[i]!;
      expect(run.code, `${c.name}: ${run.stderr}`).toBe(2);
      for (const re of [c.expect].flat()) expect(run.stderr, c.name).toMatch(re);
      expect(run.stdout + run.stderr, c.name).not.toContain(KEY);
      expect(run.stdout + run.stderr, c.name).not.toContain(UNPREFIXED);
      if (c.json) {
        expect(JSON.parse(run.stdout), c.name).toMatchObject({
          ok: false,
          exitCode: 2,
          error: { code: 'ERR_USAGE' },
        });
      }
    });
    expect(sim.control.requests(), 'no request may reach the service').toEqual([]);

    // The same key from the environment works: the refusals above were not for lack of a good key.
    const ok = await runCli(['account', '--json', ...db, ...base], {
      cwd: out,
      env: { DOMAIN_SYNC_API_KEY: KEY },
    });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout + ok.stderr).not.toContain(KEY);
    expect(sim.control.requests().map((r) => [r.path, r.authValid])).toEqual([['/account', true]]);
  });
});
