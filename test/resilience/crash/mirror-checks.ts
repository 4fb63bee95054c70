import { existsSync, readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { basename, join, relative } from 'node:path';
import { mirrorIndexes, queryMirror } from '../../helpers/mirror.js';
import { duckdbQuery, sqlString } from '../../helpers/read-parquet.js';

/*
 * Independent reads of what a pipeline left on disk: the mirror through its own better-sqlite3
 * connection, export files by name, snapshots through DuckDB. Nothing here imports product code.
 */

/** True when the mirror file exists and has the table. */
export function hasTable(dbPath: string, table: string): boolean {
  if (!existsSync(dbPath)) return false;
  try {
    return (
      queryMirror(dbPath, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", table).length > 0
    );
  } catch {
    return false;
  }
}

/**
 * Every index of the mirror with its definition, and the definitions still set aside by a first
 * sync (the `deferred_indexes` table; none once the product has recovered).
 */
export function indexState(dbPath: string): { indexes: unknown[]; setAside: unknown[] } {
  return {
    indexes: mirrorIndexes(dbPath),
    setAside: hasTable(dbPath, 'deferred_indexes')
      ? queryMirror(dbPath, 'SELECT name FROM deferred_indexes')
      : [],
  };
}

/**
 * Where a killed process was when it died, read from the mirror it left:
 * - `startup`: no `pipeline_runs` row of its pid yet (loading, migrating, waiting for the lock);
 * - `mid-run`: a row of its pid is still `running` (the work was under way);
 * - `after-finish`: every row of its pid is finished (only the exit was left).
 */
export type KillStage = 'startup' | 'mid-run' | 'after-finish';

/** The {@link KillStage} of process `pid` in the mirror at `dbPath`. */
export function killStage(dbPath: string, pid: number): KillStage {
  if (!hasTable(dbPath, 'pipeline_runs')) return 'startup';
  const rows = queryMirror<{ status: string }>(dbPath, 'SELECT status FROM pipeline_runs WHERE pid = ?', pid);
  if (rows.length === 0) return 'startup';
  return rows.some((r) => r.status === 'running') ? 'mid-run' : 'after-finish';
}

/** Every file under `dir`, as paths relative to it (`[]` when it does not exist). */
export async function listFiles(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return [];
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

/**
 * The only names a reader may ever find: export files `export-<id>[-…].csv|ndjson|json`
 * (docs/exports.md step 5), snapshot files `<table>/snapshot_date=YYYY-MM-DD/part-0.parquet` and
 * manifests `_manifests/snapshot_date=YYYY-MM-DD.json` (docs/contract.md "Snapshots", docs/snapshots.md).
 * Everything else (the product's `.export-…part`, `.part-0.parquet.tmp-…`, `.….json.tmp-…`) is a
 * temporary or partial file.
 */
export const FINAL_EXPORT_FILE = /^export-\d+[A-Za-z0-9._-]*\.(csv|ndjson|json)$/;
export const FINAL_SNAPSHOT_FILE =
  /^(?:[A-Za-z][A-Za-z0-9_]*\/snapshot_date=\d{4}-\d{2}-\d{2}\/part-0\.parquet|_manifests\/snapshot_date=\d{4}-\d{2}-\d{2}\.json)$/;

/**
 * The files of a snapshots dir with each `YYYY-MM-DD` replaced by `<date>`: the layout, which
 * must not depend on whether the fault-free run and the trial ran on the same UTC day.
 */
export async function snapshotLayout(dir: string): Promise<string[]> {
  return (await listFiles(dir)).map((f) => withoutDates(f));
}

/** `text` with every `YYYY-MM-DD` replaced by `<date>`. */
export function withoutDates(text: string): string {
  return text.replace(/\d{4}-\d{2}-\d{2}/g, '<date>');
}

/** Files in `exports.dir` and `snapshots.dir` whose names are not final names. */
export async function nonFinalFiles(exportsDir: string, snapshotsDir: string): Promise<string[]> {
  const exports = (await listFiles(exportsDir)).filter((f) => !FINAL_EXPORT_FILE.test(f));
  const snapshots = (await listFiles(snapshotsDir)).filter((f) => !FINAL_SNAPSHOT_FILE.test(f));
  return [...exports.map((f) => `exports/${f}`), ...snapshots.map((f) => `snapshots/${f}`)];
}

/**
 * Checks that every file under a final name in `snapshotsDir` is whole: each Parquet file is
 * read to the end by DuckDB, each manifest parses as JSON. Returns the problems found.
 */
export async function brokenSnapshotFiles(snapshotsDir: string): Promise<string[]> {
  const problems: string[] = [];
  for (const file of await listFiles(snapshotsDir)) {
    if (!FINAL_SNAPSHOT_FILE.test(file)) continue;
    const path = join(snapshotsDir, file);
    try {
      if (file.endsWith('.parquet')) {
        await duckdbQuery(`SELECT count(*) AS n FROM read_parquet(${sqlString(path)})`);
      } else {
        JSON.parse(readFileSync(path, 'utf8'));
      }
    } catch (error) {
      problems.push(`${file}: ${(error as Error).message.split('\n')[0]}`);
    }
  }
  return problems;
}

/** How one table is compared with the fault-free mirror. */
export interface TableSpec {
  table: string;
  /** Bookkeeping columns left out (they differ between any two runs by design). */
  exclude?: readonly string[];
  /** Rewrites a row before comparison (e.g. a path to its base name). */
  map?: (row: Record<string, unknown>) => Record<string, unknown>;
}

/**
 * Compares tables of two mirror files as multisets of rows (minus the excluded columns) and
 * returns readable differences, at most `limit` per table (empty = equal).
 */
export function diffMirrors(
  actualDb: string,
  expectedDb: string,
  specs: readonly TableSpec[],
  limit = 5,
): string[] {
  const diffs: string[] = [];
  for (const spec of specs) {
    const actual = tableRows(actualDb, spec);
    const expected = tableRows(expectedDb, spec);
    diffs.push(...diffRowSets(spec.table, actual, expected, limit));
  }
  return diffs;
}

function tableRows(dbPath: string, spec: TableSpec): string[] {
  const rows = queryMirror(dbPath, `SELECT * FROM ${spec.table}`);
  return rows.map((row) => canonicalRow(row, spec)).sort();
}

/** A row as sorted-key JSON without the excluded columns (bigints as strings). */
export function canonicalRow(row: Record<string, unknown>, spec: Pick<TableSpec, 'exclude' | 'map'>): string {
  const mapped = spec.map ? spec.map(row) : row;
  const kept: Record<string, unknown> = {};
  for (const key of Object.keys(mapped).sort()) {
    if (spec.exclude?.includes(key)) continue;
    const value = mapped[key];
    kept[key] = typeof value === 'bigint' ? value.toString() : value;
  }
  return JSON.stringify(kept);
}

/** Differences between two sorted multisets of canonical rows. */
export function diffRowSets(table: string, actual: string[], expected: string[], limit: number): string[] {
  const remaining = new Map<string, number>();
  for (const row of expected) remaining.set(row, (remaining.get(row) ?? 0) + 1);
  const extra: string[] = [];
  for (const row of actual) {
    const n = remaining.get(row) ?? 0;
    if (n > 0) remaining.set(row, n - 1);
    else extra.push(row);
  }
  const missing = [...remaining].flatMap(([row, n]) => Array<string>(n).fill(row));
  if (extra.length === 0 && missing.length === 0) return [];
  return [
    `${table}: ${actual.length} rows vs ${expected.length} fault-free; ${missing.length} missing, ${extra.length} unexpected`,
    ...missing.slice(0, limit).map((r) => `  missing    ${r.slice(0, 400)}`),
    ...extra.slice(0, limit).map((r) => `  unexpected ${r.slice(0, 400)}`),
  ];
}

/** Base name of a stored path (the temp dirs of two runs differ). */
export function fileBase(value: unknown): unknown {
  return typeof value === 'string' ? basename(value) : value;
}

/**
 * Compares the Parquet snapshot of each table in `tables` between two snapshots dirs, read back
 * with DuckDB, minus the excluded columns and the hive `snapshot_date` column (the date of the
 * run; callers check the layout with {@link snapshotLayout}, one partition per table).
 */
export async function diffSnapshots(
  actualDir: string,
  expectedDir: string,
  tables: readonly TableSpec[],
  limit = 5,
): Promise<string[]> {
  const diffs: string[] = [];
  for (const spec of tables) {
    const read = async (dir: string): Promise<string[]> => {
      const glob = join(dir, spec.table, '*', '*.parquet');
      const { rows } = await duckdbQuery(
        `SELECT * FROM read_parquet(${sqlString(glob)}, hive_partitioning = true)`,
      );
      const exclude = [...(spec.exclude ?? []), 'snapshot_date'];
      return rows.map((row) => canonicalRow(row, { ...spec, exclude })).sort();
    };
    let actual: string[];
    try {
      actual = await read(actualDir);
    } catch (error) {
      diffs.push(`${spec.table}: snapshot not readable: ${(error as Error).message.split('\n')[0]}`);
      continue;
    }
    diffs.push(...diffRowSets(`snapshot ${spec.table}`, actual, await read(expectedDir), limit));
  }
  return diffs;
}
