import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { duckdbQuery } from '../../helpers/read-parquet.js';
import { documentedColumns, schemaDoc } from './documented-schema.js';
import { buildSnapshotFixture, cli } from './fixture.js';
import type { SnapshotFixture } from './fixture.js';
import { queryMirrorExact } from '../../helpers/mirror.js';

/*
 * docs/schema.md against a mirror filled by syncing the simulator (the stand-in for the demo
 * data): every table, view and column is documented, and every example query returns rows.
 * test/integration/mirror/schema-doc-examples.test.ts runs the same examples on a hand-built
 * fixture; this one runs them on data shaped by the service (quirks included).
 */

let fx: SnapshotFixture;

beforeAll(async () => {
  fx = await buildSnapshotFixture({ domains: 400, seed: 11 });
}, 120_000);

afterAll(async () => {
  await fx?.close();
});

/** The fenced ```sql blocks preceded by `<!-- example: kind -->`. */
function examples(kind: 'sqlite' | 'duckdb'): string[] {
  const pattern = new RegExp(`<!-- example: ${kind} -->\\s*\`\`\`sql\\n([\\s\\S]*?)\`\`\``, 'g');
  return [...schemaDoc().matchAll(pattern)].map((m) => m[1]!.trim());
}

/** SQLite's declared type of each documented type. */
const SQLITE_TYPE: Record<string, string> = {
  text: 'TEXT',
  json: 'TEXT',
  timestamp: 'TEXT',
  integer: 'INTEGER',
  boolean: 'INTEGER',
  real: 'REAL',
};

describe('docs/schema.md on a simulator-synced mirror', () => {
  it('documents every table and view of the mirror with exactly its columns (and each table column’s type)', () => {
    const docs = documentedColumns();
    const objects = queryMirrorExact(
      fx.mirrorPath,
      `SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view')
         AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'kysely_%' ORDER BY name`,
    ) as Array<{ name: string; type: string }>;
    expect(objects.length).toBeGreaterThan(10);
    for (const { name, type } of objects) {
      const documented = docs.get(name);
      expect(documented, `docs/schema.md has no "### \`${name}\`" section`).toBeDefined();
      const actual = queryMirrorExact(
        fx.mirrorPath,
        `SELECT name, type FROM pragma_table_info('${name}') ORDER BY cid`,
      ) as Array<{
        name: string;
        type: string;
      }>;
      expect(documented!.map((c) => c.name).sort(), name).toEqual(actual.map((c) => c.name).sort());
      if (type === 'table') {
        const declared = new Map(actual.map((c) => [c.name, c.type]));
        for (const c of documented!)
          expect(`${name}.${c.name}: ${declared.get(c.name)}`).toBe(
            `${name}.${c.name}: ${SQLITE_TYPE[c.type]}`,
          );
      }
    }
  });

  it('every sqlite example returns rows', () => {
    const queries = examples('sqlite');
    expect(queries.length).toBeGreaterThanOrEqual(5);
    for (const query of queries) {
      expect(queryMirrorExact(fx.mirrorPath, query).length, query).toBeGreaterThan(0);
    }
  });

  it('every duckdb example returns rows on a snapshot written by the CLI', async () => {
    const queries = examples('duckdb');
    expect(queries.length).toBeGreaterThanOrEqual(2);
    const out = join(fx.dir, 'data', 'snapshots');
    const run = await cli(
      ['--config', fx.configPath, '--log-level', 'warn', 'snapshot', '--out', out],
      fx.dir,
    );
    expect(run.exitCode).toBe(0);
    for (const query of queries) {
      const result = await duckdbQuery(query.replaceAll("'data/snapshots/", `'${out}/`));
      expect(result.rows.length, query).toBeGreaterThan(0);
    }
  });
});
