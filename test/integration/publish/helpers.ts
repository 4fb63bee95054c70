/**
 * What the publish tests share: a workspace (simulator, mirror, config with a postgres
 * destination, the CLI's environment) and an independent comparison of a destination's tables
 * with the mirror's, value by value with the types checked.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { canonicalJson } from '../../../src/mirror/store/values.js';
import type { RunningSimulator } from '../../../src/simulator/index.js';
import { runCli, type CliRun } from '../../helpers/cli.js';
import { readMirror } from '../../helpers/mirror.js';
import type { TestPostgres } from '../../helpers/postgres.js';
import { startTestSimulator } from '../../helpers/start-simulator.js';
import { testConfigFile } from '../../helpers/test-context.js';
import { tempDir } from '../../helpers/temp-dir.js';

/** The tables publish sends by default (the contract's, plus the views' sources). */
export const PUBLISHED = [
  'domains',
  'licenses',
  'payment_methods',
  'domain_sections',
  'enrichment_runs',
  'exports',
  'pipeline_runs',
  'change_log',
  'credit_ledger',
] as const;

/** The PostgreSQL type each kind of mirror column must have (docs/destinations.md "Types"). */
export function expectedType(column: string, sqliteType: string): string {
  if (column === 'at' || column.endsWith('_at')) return 'timestamp with time zone';
  if (['raw_profile', 'profile_extra', 'stats', 'filters', 'fields', 'data', 'raw'].includes(column))
    return 'jsonb';
  if (['served_from_cache', 'billable'].includes(column)) return 'boolean';
  if (sqliteType === 'INTEGER') return 'bigint';
  if (sqliteType === 'REAL') return 'double precision';
  return 'text';
}

export interface PublishWorkspace {
  dir: string;
  dbPath: string;
  configPath: string;
  sim: RunningSimulator;
  schema: string;
  env: Record<string, string>;
  /** Runs the CLI with this workspace's config, `--json`, and `args`. */
  cli(args: readonly string[], extraEnv?: Record<string, string | undefined>): Promise<CliRun>;
}

let schemaCounter = 0;

/** A simulator, a mirror and a config whose destination `warehouse` is a fresh schema of `pg`. */
export async function publishWorkspace(
  pg: TestPostgres,
  options: { domains?: number; destination?: Record<string, unknown>; config?: Record<string, unknown> } = {},
): Promise<PublishWorkspace> {
  const dir = await tempDir('domain-sync-publish-');
  const sim = await startTestSimulator({ domains: options.domains ?? 200, seed: 17 });
  const schema = `pub_${process.pid}_${++schemaCounter}`;
  const configPath = join(dir, 'config.json');
  await writeFile(
    configPath,
    JSON.stringify(
      testConfigFile(dir, {
        ...(options.config ?? {}),
        destinations: {
          warehouse: { type: 'postgres', url: pg.url(), schema, ...(options.destination ?? {}) },
        },
      }),
      null,
      2,
    ),
  );
  const env = {
    DOMAIN_SYNC_API_KEY: sim.apiKey,
    DOMAIN_SYNC_BASE_URL: sim.baseUrl,
    PGPASSWORD: pg.password,
  };
  return {
    dir,
    dbPath: join(dir, 'mirror.sqlite'),
    configPath,
    sim,
    schema,
    env,
    cli: (args, extraEnv = {}) =>
      runCli(['--config', configPath, '--json', ...args], {
        cwd: dir,
        env: { ...env, ...extraEnv },
        isolatedEnv: true,
      }),
  };
}

interface MirrorColumn {
  name: string;
  type: string;
  pk: number;
}

/** The mirror's columns of `table`. */
export function mirrorColumns(dbPath: string, table: string): MirrorColumn[] {
  return readMirror(
    dbPath,
    (db) =>
      db.prepare('SELECT name, type, pk FROM pragma_table_info(?) ORDER BY cid').all(table) as MirrorColumn[],
  );
}

/** A value in a form both sides agree on: instants as ISO text, JSON canonical, integers as text. */
function comparable(value: unknown, pgType: string): unknown {
  if (value === null || value === undefined) return null;
  switch (pgType) {
    case 'timestamp with time zone':
      return new Date(value instanceof Date ? value.getTime() : Date.parse(String(value))).toISOString();
    case 'jsonb':
      return canonicalJson(typeof value === 'string' ? JSON.parse(value) : value);
    case 'boolean':
      return value === true || value === 1 || value === 1n;
    case 'bigint':
      return String(value);
    default:
      return value;
  }
}

/** Rows of `table` by key (JSON of the key values as text), each a comparable object. */
export type KeyedRows = Map<string, Record<string, unknown>>;

function keyed(
  rows: Array<Record<string, unknown>>,
  columns: MirrorColumn[],
  types: Record<string, string>,
): KeyedRows {
  const key = columns.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk);
  const out: KeyedRows = new Map();
  for (const row of rows) {
    const k = JSON.stringify(key.map((c) => String(row[c.name])));
    const value: Record<string, unknown> = {};
    for (const c of columns) value[c.name] = comparable(row[c.name], types[c.name]!);
    out.set(k, value);
  }
  return out;
}

/** The mirror's rows of `table`, comparable with {@link destinationRows}. */
export function mirrorRows(dbPath: string, table: string): KeyedRows {
  const columns = mirrorColumns(dbPath, table);
  const types = Object.fromEntries(columns.map((c) => [c.name, expectedType(c.name, c.type)]));
  const rows = readMirror(
    dbPath,
    (db) =>
      db.prepare(`SELECT ${columns.map((c) => `"${c.name}"`).join(', ')} FROM "${table}"`).all() as Array<
        Record<string, unknown>
      >,
  );
  return keyed(rows, columns, types);
}

/** The destination's rows of `table`, and the type of each column as PostgreSQL reports it. */
export async function destinationRows(
  pg: TestPostgres,
  schema: string,
  table: string,
  dbPath: string,
): Promise<{ rows: KeyedRows; types: Record<string, string> }> {
  const columns = mirrorColumns(dbPath, table);
  const info = await pg.query<{ column_name: string; data_type: string }>(
    'SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2',
    [schema, table],
  );
  const types = Object.fromEntries(info.map((c) => [c.column_name, c.data_type]));
  const rows = await pg.query(
    `SELECT ${columns.map((c) => `"${c.name}"`).join(', ')} FROM "${schema}"."${table}"`,
  );
  return { rows: keyed(rows, columns, types), types };
}

/**
 * Asserts that every published table of the destination equals the mirror row for row (types
 * checked: each column has the type publish promises; timestamps equal as instants). `skip`
 * leaves rows out by key (the publish's own run row, still `running` in its own snapshot).
 */
export async function expectDestinationEqualsMirror(
  pg: TestPostgres,
  ws: { schema: string; dbPath: string },
  options: { tables?: readonly string[]; skipPipelineRunIds?: readonly number[] } = {},
): Promise<void> {
  for (const table of options.tables ?? PUBLISHED) {
    const columns = mirrorColumns(ws.dbPath, table);
    const { rows, types } = await destinationRows(pg, ws.schema, table, ws.dbPath);
    for (const c of columns) {
      expect(types[c.name], `${table}.${c.name}: PostgreSQL type`).toBe(expectedType(c.name, c.type));
    }
    const mirror = mirrorRows(ws.dbPath, table);
    if (table === 'pipeline_runs') {
      for (const id of options.skipPipelineRunIds ?? []) {
        mirror.delete(JSON.stringify([String(id)]));
        rows.delete(JSON.stringify([String(id)]));
      }
    }
    expect(rows.size, `${table}: row count`).toBe(mirror.size);
    for (const [key, row] of mirror) expect(rows.get(key), `${table} ${key}`).toEqual(row);
  }
}

/** Rows of every published table that differ between two reads of a destination (new or changed). */
export function changedRows(
  before: ReadonlyMap<string, KeyedRows>,
  after: ReadonlyMap<string, KeyedRows>,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [table, rows] of after) {
    const old = before.get(table) ?? new Map();
    let n = 0;
    for (const [key, row] of rows) if (canonicalJson(old.get(key) ?? null) !== canonicalJson(row)) n++;
    out[table] = n;
  }
  return out;
}

/** Every published table of the destination, comparable. */
export async function readDestination(
  pg: TestPostgres,
  ws: { schema: string; dbPath: string },
): Promise<Map<string, KeyedRows>> {
  const out = new Map<string, KeyedRows>();
  for (const table of PUBLISHED)
    out.set(table, (await destinationRows(pg, ws.schema, table, ws.dbPath)).rows);
  return out;
}

/** The `--json` summary's destination entry. */
export function destinationSummary(
  run: CliRun,
  name = 'warehouse',
): Record<string, unknown> & {
  status: string;
  rows: number;
  tables: Record<string, { rows: number; mode: string; written: number }>;
  error?: { code: string; message: string };
} {
  const summary = JSON.parse(run.stdout.trim().split('\n').pop() ?? '{}') as {
    stats?: { destinations?: Record<string, unknown> };
  };
  return summary.stats?.destinations?.[name] as ReturnType<typeof destinationSummary>;
}
