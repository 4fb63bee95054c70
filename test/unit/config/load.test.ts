import { writeFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULTS, loadConfig, readApiKey, checkBaseUrl } from '../../../src/config/index.js';
import { parseDuration } from '../../../src/util/duration.js';
import { tempDir } from '../../helpers/temp-dir.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');

async function withFile(content: unknown): Promise<{ dir: string; path: string }> {
  const dir = await tempDir();
  const path = join(dir, 'cfg.json');
  await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content));
  return { dir, path };
}

describe('config.example.json', () => {
  it('shows every key with its default', async () => {
    const example = JSON.parse(await readFile(join(ROOT, 'config.example.json'), 'utf8'));
    expect(example).toEqual(JSON.parse(JSON.stringify(DEFAULTS)));
  });

  it('loads without errors or warnings', () => {
    const result = loadConfig({ env: {}, cwd: ROOT, configPath: 'config.example.json' });
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual([]);
    expect(result.config?.enrich.staleAfterMs).toBe(30 * 86_400_000);
  });
});

describe('loadConfig', () => {
  it('uses the defaults when there is no file', async () => {
    const dir = await tempDir();
    const { config, errors } = loadConfig({ env: {}, cwd: dir });
    expect(errors).toEqual([]);
    expect(config).not.toBeNull();
    expect(config!.api.timeoutMs).toBe(30_000);
    expect(config!.api.baseUrl).toBeNull();
    expect(config!.database.path).toBe(join(dir, 'data/mirror.sqlite'));
    expect(config!.pipelines.nightly?.steps.map((s) => s.type)).toEqual(['sync', 'snapshot']);
    expect(config!.pipelines.nightly?.schedule).toBe('0 2 * * *');
    expect(Object.isFrozen(config!.api)).toBe(true);
    expect(config!.sourcePath).toBeNull();
  });

  it('reads ./config.json when present', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'config.json'), JSON.stringify({ api: { timeoutMs: 1234 } }));
    const { config } = loadConfig({ env: {}, cwd: dir });
    expect(config?.api.timeoutMs).toBe(1234);
    expect(config?.sourcePath).toBe(join(dir, 'config.json'));
  });

  const badFiles: Array<[string, unknown, RegExp]> = [
    ['unknown top-level key', { nope: 1 }, /^nope: unknown key/],
    ['unknown nested key', { api: { timeoutMS: 5 } }, /^api\.timeoutMS: unknown key/],
    ['wrong type', { api: { timeoutMs: '5s' } }, /^api\.timeoutMs: .*number/],
    ['negative retries', { api: { maxRetries: -1 } }, /^api\.maxRetries: /],
    ['per_page over 500', { sync: { perPage: 501 } }, /^sync\.perPage: /],
    ['unknown filter name', { api: { queryParams: { country: 'c' } } }, /^api\.queryParams/],
    ['bad step', { pipelines: { x: { steps: ['dance'] } } }, /^pipelines\.x\.steps\.0: /],
    ['bad duration', { enrich: { staleAfter: 'a month' } }, /^enrich\.staleAfter: not a duration/],
    [
      'bad cron',
      { pipelines: { x: { steps: ['sync'], schedule: 'every day' } } },
      /^pipelines\.x\.schedule: /,
    ],
    [
      'base URL without the base path',
      { api: { baseUrl: 'http://h/api' } },
      /^api\.baseUrl: must end in \/api\/v1\/igaming/,
    ],
    ['not JSON', '{ "api": ', /not valid JSON/],
  ];
  it.each(badFiles)('rejects %s, naming the key', async (_name, content, expected) => {
    const { dir, path } = await withFile(content);
    const result = loadConfig({ env: {}, cwd: dir, configPath: path });
    expect(result.config).toBeNull();
    expect(result.errors.length).toBeGreaterThan(0);
    expect(result.errors[0]).toMatch(expected);
  });

  it('names a missing --config file', async () => {
    const dir = await tempDir();
    const result = loadConfig({ env: {}, cwd: dir, configPath: 'missing.json' });
    expect(result.errors[0]).toMatch(/^--config: config file not found: .*missing\.json/);
  });

  it('applies defaults < file < environment < flags', async () => {
    const { dir, path } = await withFile({
      api: { baseUrl: 'http://file.test/api/v1/igaming' },
      database: { path: 'file.sqlite' },
    });
    const env = {
      DOMAIN_SYNC_CONFIG: path,
      DOMAIN_SYNC_BASE_URL: 'http://env.test/api/v1/igaming/',
      DOMAIN_SYNC_DB: 'env.sqlite',
    };
    const fromEnv = loadConfig({ env, cwd: dir });
    expect(fromEnv.config?.api.baseUrl).toBe('http://env.test/api/v1/igaming');
    expect(fromEnv.config?.database.path).toBe(join(dir, 'env.sqlite'));
    const fromFlags = loadConfig({
      env,
      cwd: dir,
      baseUrl: 'http://flag.test:8080/api/v1/igaming',
      dbPath: '/tmp/flag.sqlite',
    });
    expect(fromFlags.config?.api.baseUrl).toBe('http://flag.test:8080/api/v1/igaming');
    expect(fromFlags.config?.database.path).toBe('/tmp/flag.sqlite');
  });

  it('names the source of a bad base URL', async () => {
    const dir = await tempDir();
    const result = loadConfig({ env: { DOMAIN_SYNC_BASE_URL: 'ftp://x/api/v1/igaming' }, cwd: dir });
    expect(result.errors[0]).toMatch(/^DOMAIN_SYNC_BASE_URL: must be an http or https URL/);
  });

  it('rejects a bad --log-level and only warns about a bad log.level in the file', async () => {
    const { dir, path } = await withFile({ log: { level: 'loud' } });
    const fromFile = loadConfig({ env: {}, cwd: dir, configPath: path });
    expect(fromFile.errors).toEqual([]);
    expect(fromFile.warnings[0]).toMatch(/^log\.level: unknown log level "loud"/);
    const fromFlag = loadConfig({ env: {}, cwd: dir, logLevel: 'loud' });
    expect(fromFlag.errors[0]).toMatch(/^--log-level: unknown log level "loud"/);
  });

  it('warns when the config file holds something key-like and never takes the key from it', async () => {
    const { dir, path } = await withFile({
      api: { baseUrl: 'http://h/api/v1/igaming', queryParams: { geo: 'client_abcdef' } },
    });
    const result = loadConfig({ env: {}, cwd: dir, configPath: path });
    expect(result.warnings.some((w) => w.includes('looks like an API key'))).toBe(true);
    expect(JSON.stringify(result.config)).not.toContain('apiKey');
  });

  it('keeps user pipelines next to the default nightly', async () => {
    const { dir, path } = await withFile({
      pipelines: {
        weekly: {
          steps: [{ type: 'enrich', options: { budget: 50 }, continueOnError: true }],
          schedule: '0 3 * * 1',
        },
      },
    });
    const { config } = loadConfig({ env: {}, cwd: dir, configPath: path });
    expect(Object.keys(config!.pipelines).sort()).toEqual([
      'nightly',
      'sync-publish',
      'weekly',
      'weekly-reenrich',
    ]);
    expect(config!.pipelines.weekly?.steps[0]).toEqual({
      type: 'enrich',
      options: { budget: 50 },
      continueOnError: true,
    });
  });
});

describe('readApiKey', () => {
  it('reads the key only from DOMAIN_SYNC_API_KEY', () => {
    expect(readApiKey({})).toEqual({});
    expect(readApiKey({ DOMAIN_SYNC_API_KEY: 'client_abc' })).toEqual({ apiKey: 'client_abc' });
    expect(readApiKey({ DOMAIN_SYNC_API_KEY: 'abc' }).warning).toMatch(/does not start with "client_"/);
  });
});

describe('checkBaseUrl', () => {
  it.each([
    ['http://127.0.0.1:8787/api/v1/igaming', 'http://127.0.0.1:8787/api/v1/igaming'],
    ['https://svc.example/api/v1/igaming/', 'https://svc.example/api/v1/igaming'],
    ['https://svc.example/prefix/api/v1/igaming', 'https://svc.example/prefix/api/v1/igaming'],
  ])('accepts %s', (input, expected) => {
    expect(checkBaseUrl(input)).toEqual({ url: expected });
  });
  it.each(['nope', 'http://u:p@h/api/v1/igaming', 'http://h/api/v1/igaming?x=1', 'http://h/api/v2/igaming'])(
    'rejects %s',
    (input) => {
      expect(checkBaseUrl(input).error).toBeTruthy();
    },
  );
});

describe('parseDuration', () => {
  it.each([
    ['90s', 90_000],
    ['15m', 900_000],
    ['12h', 43_200_000],
    ['30d', 2_592_000_000],
    ['500ms', 500],
  ])('%s', (text, ms) => expect(parseDuration(text)).toBe(ms));
  it.each(['', '10', '1w', '-5s', 's'])('rejects "%s"', (text) => expect(parseDuration(text)).toBeNull());
});
