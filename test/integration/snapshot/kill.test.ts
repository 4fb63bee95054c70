import { existsSync } from 'node:fs';
import { readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openMirror } from '../../../src/mirror/database.js';
import { startCli } from '../../helpers/cli.js';
import { duckdbQuery, sqlString } from '../../helpers/read-parquet.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { cli } from './fixture.js';

const DOMAINS = 8_000;
const SECTIONS = ['game_providers', 'affiliate_programs', 'geo', 'related_domains'];
const ROWS = DOMAINS * SECTIONS.length;

/**
 * A mirror whose `domain_sections` file takes several seconds to write: 32,000 rows of ~3 KB of
 * JSON, about 100 MB, so the writer flushes more than one row group (they are capped at ~48 MiB of
 * buffered values). Filled with plain SQL because only the size matters here; sections have no
 * history triggers, so this is quick.
 */
async function bigMirror(path: string): Promise<void> {
  const mirror = await openMirror(path);
  await mirror.close();
  const db = new Database(path);
  try {
    const at = '2026-01-02T03:04:05.678Z';
    db.exec('BEGIN');
    db.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       INSERT INTO domains (domain_normalized, company_name, first_synced_at, last_synced_at)
       SELECT 'd' || i || '.example', 'Company ' || i, ?, ? FROM n`,
    ).run(DOMAINS, at, at);
    db.prepare(
      `WITH s(section) AS (VALUES ${SECTIONS.map((x) => `('${x}')`).join(', ')})
       INSERT INTO domain_sections (domain_normalized, section, data, mirror_first_seen_at, mirror_updated_at)
       SELECT d.domain_normalized, s.section, json_array(d.domain_normalized, hex(randomblob(1500))), ?, ?
       FROM domains d, s`,
    ).run(at, at);
    db.exec('COMMIT');
  } finally {
    db.close();
  }
}

describe('snapshot killed with SIGKILL mid-write', () => {
  it('leaves no partial file under the final name, and the next snapshot succeeds', async () => {
    const dir = await tempDir('snapshot-kill-');
    const db = join(dir, 'mirror.sqlite');
    const out = join(dir, 'snapshots');
    await bigMirror(db);
    // The killed process leaves its mirror lock behind; the default lease (60 s) and no wait, so
    // the next snapshot must take it over at once from the dead holder (docs/operations.md).
    const config = join(dir, 'config.json');
    await writeFile(config, JSON.stringify({ lock: { lease: '60s', wait: '0s' } }));
    const partition = (date: string): string => join(out, 'domain_sections', `snapshot_date=${date}`);

    const snapshot = startCli(
      [
        '--config',
        config,
        '--db',
        db,
        '--log-level',
        'warn',
        'snapshot',
        '--out',
        out,
        '--tables',
        'domain_sections',
      ],
      { cwd: dir, isolatedEnv: true },
    );

    // Wait until the hidden temp file holds at least one row group, then kill: that is mid-write.
    let killedMidWrite: { date: string; tmp: string; bytes: number } | null = null;
    const deadline = Date.now() + 60_000;
    while (killedMidWrite === null && Date.now() < deadline && snapshot.child.exitCode === null) {
      const entries = existsSync(join(out, 'domain_sections'))
        ? await readdir(join(out, 'domain_sections'))
        : [];
      for (const entry of entries) {
        const date = /^snapshot_date=(.+)$/.exec(entry)?.[1];
        if (!date) continue;
        const files = await readdir(partition(date)).catch(() => [] as string[]);
        const tmp = files.find((f) => f.startsWith('.part-0.parquet.tmp'));
        if (tmp === undefined || files.includes('part-0.parquet')) continue;
        const bytes = (await stat(join(partition(date), tmp)).catch(() => ({ size: 0 }))).size;
        // More than the Parquet header: at least one row group is on disk, the rest is not.
        if (bytes > 1024 * 1024) {
          snapshot.kill();
          killedMidWrite = { date, tmp, bytes };
        }
      }
      if (killedMidWrite === null) await new Promise((r) => setTimeout(r, 2));
    }
    const exit = await snapshot.exited;
    expect(
      killedMidWrite,
      `the snapshot finished before it could be killed mid-write; stderr: ${exit.stderr}`,
    ).not.toBeNull();
    expect(exit.signal).toBe('SIGKILL');
    const { date } = killedMidWrite!;

    // Nothing under the final name; a `*.parquet` glob sees no file at all.
    const left = await readdir(partition(date));
    expect(left).not.toContain('part-0.parquet');
    expect(left.filter((f) => f.endsWith('.parquet'))).toEqual([]);
    expect(existsSync(join(out, '_manifests', `snapshot_date=${date}.json`))).toBe(false);

    // The next snapshot succeeds, cleans the leftover, and DuckDB reads every row.
    const next = await cli(
      [
        '--config',
        config,
        '--db',
        db,
        '--json',
        '--log-level',
        'warn',
        'snapshot',
        '--out',
        out,
        '--tables',
        'domain_sections',
      ],
      dir,
    );
    expect(next.exitCode, JSON.stringify(next.json)).toBe(0);
    const nextDate = (next.json!.stats as { snapshotDate: string }).snapshotDate;
    expect(await readdir(partition(nextDate))).toEqual(['part-0.parquet']);
    if (nextDate !== date)
      expect((await readdir(partition(date))).filter((f) => f.endsWith('.parquet'))).toEqual([]);
    const glob = sqlString(join(out, 'domain_sections', '*', '*.parquet'));
    const { rows } = await duckdbQuery(
      `SELECT count(*) AS n, count(DISTINCT domain_normalized) AS domains, min(mirror_updated_at) AS updated,
              count(data) AS data FROM read_parquet(${glob})`,
    );
    expect(rows).toEqual([
      { n: BigInt(ROWS), domains: BigInt(DOMAINS), updated: '2026-01-02T03:04:05.678Z', data: BigInt(ROWS) },
    ]);
  }, 180_000);
});
