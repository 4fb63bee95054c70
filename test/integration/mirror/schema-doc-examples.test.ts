import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { writeSnapshot } from '../../../src/warehouse/index.js';
import { recordCredits } from '../../../src/mirror/store/credits.js';
import { upsertDomainSummaries } from '../../../src/mirror/store/domains.js';
import { upsertProfiles } from '../../../src/mirror/store/profiles.js';
import { finishPipelineRun, startPipelineRun } from '../../../src/mirror/store/runs.js';
import {
  describeTable,
  iterateTableRows,
  SNAPSHOT_TABLES,
  tableRowCount,
} from '../../../src/mirror/store/snapshot.js';
import type { Mirror } from '../../../src/mirror/database.js';
import { isoFromMs } from '../../../src/util/time.js';
import { duckdbQuery } from '../../helpers/read-parquet.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { licence, paymentMethod, profile, summary } from './builders.js';
import { tempMirror } from './helpers.js';

/** The fenced ```sql blocks preceded by `<!-- example: kind -->` in docs/schema.md. */
async function examples(kind: 'sqlite' | 'duckdb'): Promise<string[]> {
  const text = await readFile(new URL('../../../docs/schema.md', import.meta.url), 'utf8');
  const pattern = new RegExp(`<!-- example: ${kind} -->\\s*\`\`\`sql\\n([\\s\\S]*?)\`\`\``, 'g');
  return [...text.matchAll(pattern)].map((m) => m[1]!.trim());
}

/** A small mirror in which every documented query finds something. */
async function fixtureMirror(): Promise<Mirror> {
  const mirror = await tempMirror();
  const day = 86_400_000;
  // Relative to now: the examples filter on "last 30 days" and on age.
  const now = Date.now();
  const t = (daysAgo: number): string => isoFromMs(now - daysAgo * day);
  upsertDomainSummaries(
    mirror,
    [
      summary('alpha.example', { company_name: 'Alpha Ltd' }),
      summary('bücher.example', { company_name: 'Bücher GmbH' }),
      summary('gamma.example'),
    ],
    { listedAt: t(10) },
  );
  const run = startPipelineRun(mirror, { pipeline: 'sync', startedAt: t(10) });
  upsertProfiles(
    mirror,
    [
      profile('alpha.example', { last_enriched_at: t(60) }),
      profile('bücher.example', {
        last_enriched_at: t(5),
        operator: { name: 'Bücher', legal_entity_name: 'Bücher GmbH', country_of_incorporation: 'DE' },
        licenses: [licence({ jurisdiction: 'ukgc', license_number: '000-42' })],
        payment_methods: [paymentMethod({ normalized_name: 'paypal', category: 'ewallet' })],
      }),
      profile('gamma.example', {
        last_enriched_at: t(40),
        game_providers: [{ name: 'pragmatic' }, { name: 'netent' }],
      }),
    ],
    { syncedAt: t(10) },
  );
  finishPipelineRun(mirror, run, { status: 'done', finishedAt: t(10), stats: { profilesFetched: 3 } });
  // A licence status change and a removed payment method, for the history examples.
  upsertProfiles(
    mirror,
    [
      profile('alpha.example', {
        last_enriched_at: t(60),
        licenses: [licence({ status: 'suspended' }), licence({ license_number: 'MGA/2' })],
        payment_methods: [paymentMethod()],
      }),
    ],
    { syncedAt: t(2) },
  );
  const enrich = startPipelineRun(mirror, { pipeline: 'enrich', startedAt: t(1) });
  recordCredits(mirror, {
    at: t(1),
    operation: 'enrichment',
    credits: 10,
    pipelineRunId: enrich,
    domain: 'gamma.example',
    runId: 1,
  });
  recordCredits(mirror, {
    at: t(1),
    operation: 'enrichment_cached',
    credits: 0,
    pipelineRunId: enrich,
    domain: 'alpha.example',
  });
  finishPipelineRun(mirror, enrich, { status: 'done', finishedAt: t(1) });
  return mirror;
}

describe('docs/schema.md examples', () => {
  it('every sqlite example runs and returns rows on a fixture mirror', async () => {
    const queries = await examples('sqlite');
    expect(queries.length).toBeGreaterThanOrEqual(5);
    const mirror = await fixtureMirror();
    for (const query of queries) {
      const result = await sql.raw(query.replace(/;\s*$/, '')).execute(mirror.db);
      expect(result.rows.length, query).toBeGreaterThan(0);
    }
  });

  it('every duckdb example runs and returns rows on snapshots of the fixture mirror', async () => {
    const queries = await examples('duckdb');
    expect(queries.length).toBeGreaterThanOrEqual(2);
    const mirror = await fixtureMirror();
    const dir = join(await tempDir('snapshots-'), 'data', 'snapshots');
    await writeSnapshot({
      dir,
      tables: SNAPSHOT_TABLES.map((table) => ({
        table,
        columns: describeTable(mirror, table),
        rows: iterateTableRows(mirror, table),
        rowCount: tableRowCount(mirror, table),
      })),
    });
    for (const query of queries) {
      const result = await duckdbQuery(query.replaceAll("'data/snapshots/", `'${dir}/`));
      expect(result.rows.length, query).toBeGreaterThan(0);
    }
  });
});
