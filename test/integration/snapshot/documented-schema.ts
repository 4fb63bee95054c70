/**
 * The column tables of docs/schema.md, parsed: what the snapshot and docs tests hold the mirror
 * and the Parquet files to. A section is `### \`name\`` followed by a Markdown table whose first
 * column is the column name in backticks and whose second is its type (`text, key`, `timestamp`…).
 */
import { readFileSync } from 'node:fs';

/** One documented column. */
export interface DocumentedColumn {
  name: string;
  /** `text`, `integer`, `real`, `boolean`, `timestamp` or `json`. */
  type: string;
  /** Part of the table's key. */
  key: boolean;
}

/** DuckDB type of each documented type in a snapshot file (docs/snapshots.md "Types"). */
export const DUCKDB_TYPE: Record<string, string> = {
  text: 'VARCHAR',
  json: 'VARCHAR',
  integer: 'BIGINT',
  real: 'DOUBLE',
  boolean: 'BOOLEAN',
  timestamp: 'TIMESTAMP WITH TIME ZONE',
};

/** docs/schema.md as text. */
export function schemaDoc(): string {
  return readFileSync(new URL('../../../docs/schema.md', import.meta.url), 'utf8');
}

/** Section name (table or view) → its documented columns in order. */
export function documentedColumns(text = schemaDoc()): Map<string, DocumentedColumn[]> {
  const sections = new Map<string, DocumentedColumn[]>();
  let current: DocumentedColumn[] | null = null;
  for (const line of text.split('\n')) {
    const heading = /^###\s+`([a-z_]+)`/.exec(line);
    if (heading) {
      current = [];
      sections.set(heading[1]!, current);
      continue;
    }
    if (/^##\s/.test(line)) current = null;
    const row = /^\|\s*`([a-z_0-9]+)`\s*\|\s*([a-z]+)(,\s*(key|unique))?\s*\|/.exec(line);
    if (row && current) current.push({ name: row[1]!, type: row[2]!, key: row[4] === 'key' });
  }
  return sections;
}
