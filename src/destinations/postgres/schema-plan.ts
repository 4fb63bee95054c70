import type { PublishColumn } from '../../mirror/store/publish.js';
import { COMPATIBLE_TYPES, KIND_WORDS, POSTGRES_TYPE } from './types.js';

/*
 * The pure part of keeping a destination's tables in step with the mirror: given the mirror's
 * tables and what the schema already has, which tables to create, which columns to add, and what
 * stops the publish before anything is written (a column that cannot hold the data, a table
 * without the key the merge needs).
 */

/** A published table as the mirror has it. */
export interface MirrorTableShape {
  table: string;
  columns: readonly PublishColumn[];
}

/** A column of an existing PostgreSQL table. */
export interface ExistingColumn {
  /** `format_type(atttypid, atttypmod)`, e.g. `timestamp with time zone`, `character varying(20)`. */
  type: string;
  notNull: boolean;
  hasDefault: boolean;
}

/** An existing PostgreSQL table of the destination schema. */
export interface ExistingTable {
  columns: ReadonlyMap<string, ExistingColumn>;
  /** Column lists of its primary key and unique indexes (without a predicate). */
  uniqueKeys: readonly (readonly string[])[];
}

/** What a publish must change in the schema, or why it must not start. */
export interface SchemaPlan {
  /** Tables to create. */
  create: MirrorTableShape[];
  /** Columns to add to existing tables (their rows then get sent whole again). */
  addColumns: Array<{ table: string; column: PublishColumn }>;
  /** Problems naming table and column; when any, nothing may be changed. */
  problems: string[];
}

/** `"name"`, with inner quotes doubled. */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** `"schema"."table"`. */
export function qualified(schema: string, table: string): string {
  return `${quoteIdent(schema)}.${quoteIdent(table)}`;
}

/** The key columns of a mirror table, in key order. */
export function keyColumns(shape: MirrorTableShape): string[] {
  return shape.columns
    .filter((c) => c.pk > 0)
    .sort((a, b) => a.pk - b.pk)
    .map((c) => c.name);
}

/**
 * Compares the mirror's tables with the schema's. Never throws: every problem is returned, each
 * naming the schema, table and column, so one run reports them all.
 */
export function planSchema(
  schema: string,
  shapes: readonly MirrorTableShape[],
  existing: ReadonlyMap<string, ExistingTable>,
): SchemaPlan {
  const plan: SchemaPlan = { create: [], addColumns: [], problems: [] };
  for (const shape of shapes) {
    const table = existing.get(shape.table);
    if (table === undefined) {
      plan.create.push(shape);
      continue;
    }
    const where = `table ${schema}.${shape.table}`;
    for (const column of shape.columns) {
      const found = table.columns.get(column.name);
      if (found === undefined) {
        plan.addColumns.push({ table: shape.table, column });
        continue;
      }
      // `character varying(20)` or `numeric(20,0)` hold only some values of their base type, so
      // only the bare names (no modifier) count as compatible.
      if (!COMPATIBLE_TYPES[column.type].includes(found.type)) {
        plan.problems.push(
          `${where}, column ${column.name}: its type ${found.type} cannot hold ${KIND_WORDS[column.type]} ` +
            `(publish creates it as ${POSTGRES_TYPE[column.type]})`,
        );
      }
    }
    const mirrorNames = new Set(shape.columns.map((c) => c.name));
    for (const [name, column] of table.columns) {
      if (!mirrorNames.has(name) && column.notNull && !column.hasDefault) {
        plan.problems.push(
          `${where}, column ${name}: NOT NULL without a default, and the mirror has no such column to fill it`,
        );
      }
    }
    const key = keyColumns(shape);
    const sameSet = (cols: readonly string[]): boolean =>
      cols.length === key.length && key.every((k) => cols.includes(k));
    if (!table.uniqueKeys.some(sameSet)) {
      plan.problems.push(
        `${where}: no primary key or unique index on (${key.join(', ')}), the key publish merges rows by`,
      );
    }
  }
  return plan;
}

/** `CREATE TABLE` of a mirror table: its columns, PostgreSQL types and primary key. */
export function createTableSql(schema: string, shape: MirrorTableShape): string {
  const columns = shape.columns.map(
    (c) => `${quoteIdent(c.name)} ${POSTGRES_TYPE[c.type]}${c.pk > 0 ? ' NOT NULL' : ''}`,
  );
  const key = keyColumns(shape).map(quoteIdent).join(', ');
  return `CREATE TABLE ${qualified(schema, shape.table)} (${columns.join(', ')}, PRIMARY KEY (${key}))`;
}

/** `ALTER TABLE … ADD COLUMN` for a column a later mirror migration added. */
export function addColumnSql(schema: string, table: string, column: PublishColumn): string {
  return `ALTER TABLE ${qualified(schema, table)} ADD COLUMN ${quoteIdent(column.name)} ${POSTGRES_TYPE[column.type]}`;
}

/**
 * The merge of a staged table into its target: insert new keys, update rows whose values differ
 * (an identical row is left alone, so a republish does not rewrite it), delete nothing.
 */
export function mergeSql(schema: string, shape: MirrorTableShape, stage: string): string {
  const names = shape.columns.map((c) => quoteIdent(c.name));
  const key = keyColumns(shape).map(quoteIdent);
  const others = names.filter((n) => !key.includes(n));
  const target = qualified(schema, shape.table);
  const insert = `INSERT INTO ${target} AS t (${names.join(', ')}) SELECT ${names.join(', ')} FROM ${quoteIdent(stage)}`;
  if (others.length === 0) return `${insert} ON CONFLICT (${key.join(', ')}) DO NOTHING`;
  return (
    `${insert} ON CONFLICT (${key.join(', ')}) DO UPDATE SET ` +
    others.map((n) => `${n} = EXCLUDED.${n}`).join(', ') +
    ` WHERE (${others.map((n) => `t.${n}`).join(', ')}) IS DISTINCT FROM (${others.map((n) => `EXCLUDED.${n}`).join(', ')})`
  );
}
