/**
 * kill -9 in the middle of a snapshot: no partial file is ever visible under
 * the final name, the `*\/*.parquet` glob ignores the leftover temporary file, and the next
 * snapshot succeeds.
 *
 * The writer runs in a child process, which cannot load TypeScript, so the warehouse module and
 * the utilities it imports are transpiled once into a temp folder whose `node_modules` links to
 * the project's.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { snapshotFilePath, writeSnapshot } from '../../../src/warehouse/index.js';
import type { ColumnSpec } from '../../../src/warehouse/index.js';
import { readParquet } from '../../helpers/read-parquet.js';
import { tempDir } from '../../helpers/temp-dir.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const SOURCES = ['src/warehouse', 'src/util', 'src/log/logger.ts'];

const COLUMNS: ColumnSpec[] = [
  { name: 'id', type: 'integer', nullable: false },
  { name: 'payload', type: 'text' },
  { name: 'seen_at', type: 'timestamp' },
];

/**
 * The child: writes `licenses` for the given date from a generator of incompressible rows.
 * After `readyAfter` rows (several row groups, well past the sink's flush threshold) it reports
 * the temporary file on stdout and then stalls forever, as a slow cursor would.
 */
const CHILD = `
import { readdirSync, statSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { writeSnapshot, partitionDir } from './src/warehouse/index.js';
const [dir, snapshotDate, readyAfter] = process.argv.slice(2);
const columns = ${JSON.stringify(COLUMNS)};
async function* rows() {
  for (let i = 0; ; i++) {
    if (i === Number(readyAfter)) {
      const partition = partitionDir(dir, 'licenses', snapshotDate);
      const temp = readdirSync(partition).filter((f) => f.startsWith('.'));
      process.stdout.write(JSON.stringify({ temp, size: temp.map((f) => statSync(partition + '/' + f).size) }) + '\\n');
      await new Promise((resolve) => setTimeout(resolve, 3_600_000));
    }
    yield { id: i, payload: randomBytes(600).toString('base64'), seen_at: new Date(1e12 + i).toISOString() };
  }
}
await writeSnapshot({ dir, snapshotDate, rowGroupSize: 2000, tables: [{ table: 'licenses', columns, rows: rows() }] });
`;

let build: string;

beforeAll(async () => {
  build = await mkdtemp(join(tmpdir(), 'domain-sync-warehouse-build-'));
  const files: string[] = [];
  for (const source of SOURCES) {
    const full = join(ROOT, source);
    if ((await stat(full)).isDirectory()) {
      for (const f of await readdir(full)) if (f.endsWith('.ts')) files.push(join(full, f));
    } else files.push(full);
  }
  for (const file of files) {
    const out = join(build, relative(ROOT, file)).replace(/\.ts$/, '.js');
    const { outputText } = ts.transpileModule(await readFile(file, 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    });
    await mkdir(dirname(out), { recursive: true });
    await writeFile(out, outputText);
  }
  await writeFile(join(build, 'package.json'), '{"type":"module"}');
  await symlink(join(ROOT, 'node_modules'), join(build, 'node_modules'), 'dir');
  await writeFile(join(build, 'child.mjs'), CHILD);
});

afterAll(async () => {
  await rm(build, { recursive: true, force: true });
});

/** Runs the child until it reports its temporary file, SIGKILLs it, and returns the report. */
async function killMidWrite(dir: string, snapshotDate: string): Promise<{ temp: string[]; size: number[] }> {
  const child = spawn(process.execPath, [join(build, 'child.mjs'), dir, snapshotDate, '12000'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const report = await new Promise<string>((resolveLine, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('\n')) resolveLine(stdout.trim());
    });
    child.on('exit', (code) => reject(new Error(`child exited early (${code}): ${stderr}`)));
  });
  const exited = new Promise<NodeJS.Signals | null>((resolveExit) =>
    child.on('exit', (_code, signal) => resolveExit(signal)),
  );
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  return JSON.parse(report) as { temp: string[]; size: number[] };
}

describe('snapshot killed with SIGKILL mid-write', () => {
  it('leaves nothing under the final name for a new date; the glob skips the temp file; the next write succeeds', async () => {
    const dir = await tempDir();
    await writeSnapshot({
      dir,
      snapshotDate: '2024-05-01',
      tables: [{ table: 'licenses', columns: COLUMNS, rows: [{ id: 1, payload: 'kept', seen_at: null }] }],
    });

    const report = await killMidWrite(dir, '2024-05-02');
    expect(report.temp).toHaveLength(1);
    expect(report.temp[0]).toMatch(/^\.part-0\.parquet\.tmp-[0-9a-f]+$/);
    // Several row groups had reached the disk when the process died: a real partial file.
    expect(report.size[0]).toBeGreaterThan(4 * 1024 * 1024);

    const partition = join(dir, 'licenses', 'snapshot_date=2024-05-02');
    expect(await readdir(partition)).toEqual(report.temp);
    const afterKill = await readParquet(`${dir}/licenses/*/*.parquet`, { hivePartitioning: true });
    expect(afterKill.rows).toEqual([{ id: 1n, payload: 'kept', seen_at: null, snapshot_date: '2024-05-01' }]);

    await writeSnapshot({
      dir,
      snapshotDate: '2024-05-02',
      tables: [{ table: 'licenses', columns: COLUMNS, rows: [{ id: 2, payload: 'next', seen_at: null }] }],
    });
    expect(await readdir(partition)).toEqual(['part-0.parquet']);
    const next = await readParquet(`${dir}/licenses/*/*.parquet`, { hivePartitioning: true, orderBy: 'id' });
    expect(next.rows.map((r) => r.payload)).toEqual(['kept', 'next']);
  });

  it('keeps the previous complete file when a same-day rewrite is killed', async () => {
    const dir = await tempDir();
    await writeSnapshot({
      dir,
      snapshotDate: '2024-05-02',
      tables: [{ table: 'licenses', columns: COLUMNS, rows: [{ id: 1, payload: 'first', seen_at: null }] }],
    });
    const path = snapshotFilePath(dir, 'licenses', '2024-05-02');
    const before = await readFile(path);

    await killMidWrite(dir, '2024-05-02');
    expect(await readFile(path)).toEqual(before);
    expect((await readParquet(`${dir}/licenses/*/*.parquet`, { hivePartitioning: true })).rows).toEqual([
      { id: 1n, payload: 'first', seen_at: null, snapshot_date: '2024-05-02' },
    ]);

    await writeSnapshot({
      dir,
      snapshotDate: '2024-05-02',
      tables: [{ table: 'licenses', columns: COLUMNS, rows: [{ id: 2, payload: 'second', seen_at: null }] }],
    });
    expect(await readdir(dirname(path))).toEqual(['part-0.parquet']);
    expect((await readParquet(path)).rows.map((r) => r.payload)).toEqual(['second']);
  });
});
