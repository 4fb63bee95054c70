import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { ARTIFACTS_ENV, artifactsDir, recordCliRun, registerKey, scanArtifacts } from './artifacts.js';
import { recordChildOutput } from './child-output.js';
import { base64Core, keyId, keyNeedles, needlesFor, scanBuffer, scanFile, scanPath } from './key-scan.js';

// The scanner must be able to fail: every case plants a key and expects it found at its offset.
const KEY = 'client_scanTest+Key/42=~x';

/** The one meta file added since `before` of the child given the key with id `givenKeyId`. */
function ourMeta(cliDir: string, before: ReadonlySet<string>, givenKeyId: string): string {
  const ours = readdirSync(cliDir).filter(
    (n) =>
      !before.has(n) &&
      n.endsWith('.meta.json') &&
      (JSON.parse(readFileSync(join(cliDir, n), 'utf8')) as { givenKeyId: string | null }).givenKeyId ===
        givenKeyId,
  );
  expect(ours).toHaveLength(1);
  return ours[0]!;
}

describe('key scanner', () => {
  it('finds the key raw, URL-encoded, JSON-escaped and base64 at each alignment, at the right offset', () => {
    const { needles } = needlesFor([KEY]);
    const cases: Array<[string, string, string]> = [
      ['raw', 'x-api-key: ', KEY],
      ['url-encoded', 'GET /a?key=', encodeURIComponent(KEY)],
      ['url-encoded-form', 'body=', new URLSearchParams({ k: KEY }).toString().slice(2)],
      ['json-escaped-slash', '{"k":"', JSON.stringify(KEY).slice(1, -1).replaceAll('/', '\\/')],
    ];
    for (const [form, prefix, encoded] of cases) {
      const text = `${prefix}${encoded}\n`;
      const hits = scanBuffer(Buffer.from(text), needles, 'f');
      expect(hits, form).toContainEqual({ file: 'f', offset: prefix.length, keyId: keyId(KEY), form });
    }
    // Inside a longer base64 blob (a Basic header) the key starts at each of the three alignments.
    for (const user of ['u:', 'us:', 'use:']) {
      const blob = Buffer.from(`${user}${KEY}`).toString('base64');
      const hits = scanBuffer(Buffer.from(`Authorization: Basic ${blob}`), needles);
      expect(
        hits.map((h) => h.form),
        user,
      ).toContain(`base64@${user.length % 3}`);
    }
    // base64url forms exist where the alphabets differ for this key; each is found.
    const urlForms = needles.filter((n) => n.form.startsWith('base64url@'));
    expect(urlForms.length).toBeGreaterThan(0);
    for (const { form } of urlForms) {
      const pad = 'ab'.slice(0, Number(form.slice(-1)));
      const urlSafe = Buffer.from(`${pad}${KEY}`).toString('base64url');
      expect(scanBuffer(Buffer.from(urlSafe), needles).map((h) => h.form)).toContain(form);
    }
    expect(scanBuffer(Buffer.from(`client_scanTest+Key/43=~x${KEY.slice(0, -1)}`), needles)).toEqual([]);
  });

  it('keeps only the base64 characters that depend on the key alone', () => {
    const key = Buffer.from('client_abcdefgh');
    for (let pad = 0; pad < 3; pad++) {
      const core = base64Core(key, pad);
      for (const before of ['', 'Q', 'QQ', 'QQQ', '\u00ff\u00ff']) {
        for (const after of ['', '!', '!!', '\u0000']) {
          const lead = Buffer.alloc(pad, before.length ? before.charCodeAt(0) : 0);
          const encoded = Buffer.concat([lead, key, Buffer.from(after, 'latin1')]).toString('base64');
          expect(encoded).toContain(core);
        }
      }
    }
  });

  it('leaves keys shorter than 8 characters out and says so', () => {
    expect(needlesFor(['client_', 'abc', KEY]).tooShort).toBe(2);
    expect(keyNeedles(KEY).every((n) => !n.form.includes(KEY))).toBe(true);
  });

  it('finds a key that straddles a 4 MB read chunk boundary once, and keys in a SQLite file and its WAL', async () => {
    const dir = await tempDir('domain-sync-scan-');
    const { needles } = needlesFor([KEY]);
    const big = Buffer.alloc(4 * 1024 * 1024 + 100, 0x61);
    const at = 4 * 1024 * 1024 - 5;
    big.write(KEY, at);
    const bigFile = join(dir, 'big.bin');
    writeFileSync(bigFile, big);
    expect(scanFile(bigFile, needles).hits).toEqual([
      { file: bigFile, offset: at, keyId: keyId(KEY), form: 'raw' },
    ]);

    const nested = join(dir, 'a', 'b');
    mkdirSync(nested, { recursive: true });
    const db = new Database(join(nested, 'mirror.sqlite'));
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (v TEXT)');
    db.prepare('INSERT INTO t VALUES (?)').run(`note ${KEY}`);
    const result = scanPath(dir, needles);
    // Written to the WAL, not yet checkpointed: the scan must look at -wal files too.
    expect(result.hits.map((h) => h.file.replace(dir, ''))).toContain('/a/b/mirror.sqlite-wal');
    db.close();
    expect(result.files).toBeGreaterThanOrEqual(3);
  });
});

describe('suite-wide recording (global setup)', () => {
  const dir = artifactsDir();

  it('is switched on in this vitest run', () => {
    expect(process.env[ARTIFACTS_ENV], 'vitest.config.ts globalSetup must set the artifact dir').toBeTruthy();
    expect(dir).toBeDefined();
  });

  it('keeps the stdout and stderr of every CLI run made through the helper, with the key registered', async () => {
    const cwd = await tempDir();
    const key = `client_recording_probe_${process.pid}`;
    const cliDir = join(dir!, 'cli');
    const before = new Set(existsSync(cliDir) ? readdirSync(cliDir) : []);
    const run = await runCli(['migrate', '--db', join(cwd, 'm.sqlite')], {
      cwd,
      env: { DOMAIN_SYNC_API_KEY: key },
    });
    expect(run.code).toBe(0);
    // Other test files run beside this one and record their children here too: find ours by the
    // key it was given, which no other child has.
    const meta = ourMeta(join(dir!, 'cli'), before, keyId(key));
    expect(JSON.parse(readFileSync(join(dir!, 'cli', meta), 'utf8'))).toMatchObject({
      command: 'migrate',
      givenKeyId: keyId(key),
      code: run.code,
    });
    const base = meta.slice(0, -'.meta.json'.length);
    expect(readFileSync(join(dir!, 'cli', `${base}.stderr`), 'utf8')).toBe(run.stderr);
    expect(readFileSync(join(dir!, 'cli', `${base}.stdout`), 'utf8')).toBe(run.stdout);
    expect(readFileSync(join(dir!, 'keys.jsonl'), 'utf8')).toContain(JSON.stringify(key));
  });

  it('keeps the output of a child a test spawns itself and passes to recordChildOutput, and registers its key', async () => {
    const key = `client_raw_spawn_probe_${process.pid}`;
    const cliDir = join(dir!, 'cli');
    const before = new Set(existsSync(cliDir) ? readdirSync(cliDir) : []);
    const env = { PATH: process.env.PATH, DOMAIN_SYNC_API_KEY: key };
    const child = spawn(
      process.execPath,
      ['-e', 'process.stdout.write("out-" + process.argv[1]); process.stderr.write("err")', 'probe'],
      {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    recordChildOutput(child, { args: ['probe'], env });
    let seen = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => (seen += chunk));
    await new Promise((resolve) => child.on('close', resolve));
    // The test's own consumer still gets everything.
    expect(seen).toBe('out-probe');
    const base = ourMeta(cliDir, before, keyId(key)).slice(0, -'.meta.json'.length);
    expect(readFileSync(join(cliDir, `${base}.stdout`), 'utf8')).toBe('out-probe');
    expect(readFileSync(join(cliDir, `${base}.stderr`), 'utf8')).toBe('err');
    expect(JSON.parse(readFileSync(join(cliDir, `${base}.meta.json`), 'utf8'))).toMatchObject({
      givenKeyId: keyId(key),
    });
    expect(readFileSync(join(dir!, 'keys.jsonl'), 'utf8')).toContain(JSON.stringify(key));
  });

  it('scans a temp dir before removing it when its test finishes', async () => {
    let scannedDir = '';
    // Registered before tempDir(): vitest runs onTestFinished hooks in reverse order of
    // registration, so this check runs after tempDir()'s scan and removal, and fails this test.
    onTestFinished(() => {
      expect(existsSync(scannedDir)).toBe(false);
      const records = readFileSync(join(dir!, `dirs-${process.pid}.jsonl`), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { dir: string; files: number; bytes: number });
      expect(records.find((r) => r.dir === scannedDir)).toMatchObject({ files: 1, bytes: 5 });
    });
    scannedDir = await tempDir();
    writeFileSync(join(scannedDir, 'file.txt'), 'hello');
    expect(existsSync(scannedDir)).toBe(true);
  });

  it('the end-of-suite scan reports a planted key by file and offset without printing it', async () => {
    // A private artifact dir, so the plant cannot fail the real run.
    const fake = await tempDir('domain-sync-fake-artifacts-');
    const saved = process.env[ARTIFACTS_ENV];
    process.env[ARTIFACTS_ENV] = fake;
    try {
      const secret = 'client_planted_for_the_scan_7';
      const publicKey = 'client_public_default_key';
      registerKey(secret, 'cli-env');
      registerKey(publicKey, 'simulator-default');
      recordCliRun(
        't',
        ['sync'],
        { DOMAIN_SYNC_API_KEY: secret },
        fake,
        1,
        Buffer.from(''),
        Buffer.from(`oops ${secret}`),
      );
      // The public default key in the output of a run that was not given it (help text) is fine…
      recordCliRun('t', ['--help'], {}, fake, 0, Buffer.from(`default: ${publicKey}`), Buffer.alloc(0));
      // …but not in the output of a run that was given it.
      recordCliRun(
        't',
        ['sync'],
        { DOMAIN_SYNC_API_KEY: publicKey },
        fake,
        0,
        Buffer.from(`x ${publicKey}`),
        Buffer.alloc(0),
      );
      const report = scanArtifacts(fake);
      expect(report.cliRuns).toBe(3);
      expect(report.hits).toHaveLength(2);
      expect(report.hits[0]).toMatch(/\.stderr at byte 5: API key sha256:[0-9a-f]{10} \(raw\)/);
      expect(report.hits.join('\n')).not.toContain(secret);
      expect(report.hits.join('\n')).not.toContain(publicKey);
    } finally {
      process.env[ARTIFACTS_ENV] = saved;
    }
  });
});
