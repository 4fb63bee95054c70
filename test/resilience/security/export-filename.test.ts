/**
 * The export file name cannot escape `exports.dir`. The service names the file in
 * `Content-Disposition` (docs/service-api.md "GET /exports/:id/download"; the name itself is not
 * described),
 * so a relay in front of the simulator, acting as the configured service, sends hostile names.
 * Every case runs the CLI and then checks that the only new file is one regular file
 * directly inside `exports.dir`, and that everything around it is byte for byte unchanged.
 *
 * The config has no setting for the file name; `exports.dir` itself is the boundary.
 */
import { createHash } from 'node:crypto';
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { startTestSimulator } from '../../helpers/start-simulator.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { testConfigFile } from '../../helpers/test-context.js';
import { scale } from '../mode.js';
import { startRelay } from './relay.js';

const KEY = `client_export_filename_${process.pid}_Qv3`;

interface Case {
  name: string;
  /** The Content-Disposition header the service sends (undefined: none), given the case's paths. */
  disposition: (paths: Paths) => string | undefined;
  /** Rewrites `format` in the export's JSON (a hostile format from the service). */
  format?: string;
  /** Something planted in exports.dir before the run. */
  plant?: (paths: Paths) => void;
  /** The run may refuse (exit 1) instead of sanitising; either way nothing escapes. */
  mayRefuse?: boolean;
  /** Part of the hostile name that survives sanitising: proves the header reached the client. */
  keeps?: string;
}

interface Paths {
  root: string;
  work: string;
  exportsDir: string;
  outside: string;
}

const LONG = `${'a'.repeat(5000)}.csv`;

// Ordered so that the fast slice (`npm test`) covers each kind of attack once.
const ALL_CASES: Case[] = [
  {
    name: 'parent traversal ../../',
    disposition: () => 'attachment; filename="../../escape.csv"',
    keeps: 'escape.csv',
  },
  {
    name: 'absolute path',
    disposition: (p) => `attachment; filename="${join(p.outside, 'abs.csv')}"`,
    keeps: 'abs.csv',
  },
  {
    name: 'Windows traversal ..\\..\\',
    disposition: () => 'attachment; filename="..\\\\..\\\\escape.csv"',
    keeps: 'escape.csv',
  },
  {
    name: 'NUL inside (RFC 5987 %00)',
    disposition: () => "attachment; filename*=UTF-8''evil%00..%2F..%2Fescape.csv",
    keeps: 'escape.csv',
  },
  { name: 'very long (5000 characters)', disposition: () => `attachment; filename="${LONG}"`, keeps: 'aaaa' },
  {
    name: 'a symlink in exports.dir with the file name, pointing outside',
    disposition: () => 'attachment; filename="export-1.csv"',
    plant: (p) => symlinkSync(join(p.outside, 'target.csv'), join(p.exportsDir, 'export-1.csv')),
    keeps: 'export-1.csv',
  },
  {
    name: 'encoded traversal in filename*',
    disposition: () => "attachment; filename*=UTF-8''..%2F..%2Fescape.csv",
    keeps: 'escape.csv',
  },
  { name: 'just ".."', disposition: () => 'attachment; filename=".."' },
  { name: 'a hidden name ".x.csv"', disposition: () => 'attachment; filename=".x.csv"', keeps: 'x.csv' },
  {
    name: 'a path into a sibling dir',
    disposition: () => 'attachment; filename="../../outside/x.csv"',
    keeps: 'x.csv',
  },
  {
    name: 'a malformed percent escape',
    disposition: () => 'attachment; filename*=UTF-8\'\'%E0%A4%A; filename="../x.csv"',
    keeps: 'x.csv',
  },
  {
    name: 'no file name and a hostile export format from the service',
    disposition: () => undefined,
    format: '../../evil',
    mayRefuse: true,
  },
];
const CASES = ALL_CASES.slice(0, scale(7, ALL_CASES.length));

/** Every path under `dir` (not following symlinks) with a content hash, except `skip` subtrees. */
function inventory(dir: string, skip: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  const visit = (p: string): void => {
    if (skip.includes(p)) return;
    const st = lstatSync(p);
    const rel = relative(dir, p) || '.';
    if (st.isSymbolicLink()) out.set(rel, `link:${readlinkSync(p)}`);
    else if (st.isDirectory()) {
      out.set(rel, 'dir');
      for (const name of readdirSync(p)) visit(join(p, name));
    } else out.set(rel, createHash('sha256').update(readFileSync(p)).digest('hex'));
  };
  visit(dir);
  return out;
}

async function runCase(c: Case): Promise<void> {
  const sim = await startTestSimulator({ domains: 40, seed: 5, timeScale: 0.001, apiKeys: [KEY] });
  const root = await tempDir('domain-sync-filename-');
  const paths: Paths = {
    root,
    work: join(root, 'work'),
    exportsDir: join(root, 'area', 'exports'),
    outside: join(root, 'outside'),
  };
  for (const d of [paths.work, paths.exportsDir, paths.outside]) mkdirSync(d, { recursive: true });
  writeFileSync(join(paths.outside, 'target.csv'), 'untouched\n');
  writeFileSync(join(root, 'area', 'neighbour.txt'), 'untouched\n');
  c.plant?.(paths);
  const relay = await startRelay(sim.origin, {
    rewriteHeaders: (req, _status, headers) => {
      if (!req.url.endsWith('/download')) return headers;
      const out = { ...headers };
      const disposition = c.disposition(paths);
      if (disposition === undefined) delete out['content-disposition'];
      else out['content-disposition'] = disposition;
      return out;
    },
    ...(c.format === undefined
      ? {}
      : {
          rewriteJson: (req, _status, body) => {
            const data = (body as { data?: Record<string, unknown> }).data;
            if (/\/exports\/\d+$/.test(req.url) && data && 'format' in data) data.format = c.format;
            return body;
          },
        }),
  });
  const config = testConfigFile(paths.work, { exports: { dir: paths.exportsDir } });
  const configPath = join(paths.work, 'config.json');
  writeFileSync(configPath, JSON.stringify(config));
  const before = inventory(root, [paths.work, paths.exportsDir]);
  const exportsBefore = inventory(paths.exportsDir, []);

  const run = await runCli(['export', '--json', '--no-load', '--config', configPath], {
    cwd: paths.work,
    env: { DOMAIN_SYNC_API_KEY: KEY, DOMAIN_SYNC_BASE_URL: `${relay.origin}/api/v1/igaming` },
  });
  const summary = JSON.parse(run.stdout.trim().split('\n').pop() ?? 'null') as {
    stats?: { filePath?: string };
    error?: { code: string; message: string };
  };
  const downloads = relay.requests().filter((r) => r.url.endsWith('/download'));

  // Nothing outside exports.dir changed: not the parent, not the sibling, not the planted target.
  expect(inventory(root, [paths.work, paths.exportsDir]), c.name).toEqual(before);
  expect(run.stdout + run.stderr).not.toContain(KEY);
  const added = [...inventory(paths.exportsDir, []).entries()].filter(
    ([rel, hash]) => exportsBefore.get(rel) !== hash,
  );
  if (run.code !== 0) {
    expect(c.mayRefuse, `${c.name}: exit ${run.code}: ${run.stderr}`).toBe(true);
    expect(summary.error?.message, c.name).toBeTruthy();
    expect(added, c.name).toEqual([]);
    return;
  }
  expect(downloads.length, `${c.name}: the hostile header was served`).toBeGreaterThan(0);
  // Exactly one new (or replaced) regular file, directly in exports.dir, with a sane name; it is the one the
  // summary names and it holds the download.
  const file = summary.stats!.filePath!;
  const name = relative(paths.exportsDir, file);
  expect(name, c.name).not.toMatch(/[/\\\0]/);
  expect(name.length, c.name).toBeLessThanOrEqual(255);
  expect(name.startsWith('.'), c.name).toBe(false);
  expect(realpathSync(file), c.name).toBe(join(realpathSync(paths.exportsDir), name));
  expect(lstatSync(file).isFile(), c.name).toBe(true);
  if (c.keeps) expect(name, c.name).toContain(c.keeps);
  expect(readFileSync(file, 'utf8').split('\r\n')[0], c.name).toMatch(/^domain_normalized,/);
  const files = added.filter(([, hash]) => hash !== 'dir');
  expect(
    files.map(([rel]) => rel),
    c.name,
  ).toEqual([name]);
}

describe('export file names from the service cannot escape exports.dir', () => {
  it(`${CASES.length} hostile names (${CASES.map((c) => c.name).join('; ')})`, async () => {
    // Two at a time: each case is one CLI process.
    for (let i = 0; i < CASES.length; i += 2) await Promise.all(CASES.slice(i, i + 2).map(runCase));
  });
});
