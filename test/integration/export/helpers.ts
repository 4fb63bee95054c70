import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import type { Mirror } from '../../../src/mirror/database.js';
import { cachedStatement } from '../../../src/mirror/database.js';
import { markExportDownloaded } from '../../../src/mirror/store/exports.js';
import { openRunContext, type OwnedRunContext } from '../../../src/runtime/run-context.js';
import type { RunningSimulator } from '../../../src/simulator/index.js';
import type { Clock } from '../../../src/util/time.js';

/** Writes a config.json in `dir` (fast polling, exports in `dir/exports`) and returns its path. */
export function writeTestConfig(dir: string, extra: Record<string, unknown> = {}): string {
  const path = join(dir, 'config.json');
  const { api, exports, ...rest } = extra as { api?: object; exports?: object };
  writeFileSync(
    path,
    JSON.stringify({
      api: { pollIntervalMs: 20, maxRetries: 2, ...api },
      database: { path: join(dir, 'mirror.sqlite') },
      exports: { dir: join(dir, 'exports'), ...exports },
      ...rest,
    }),
  );
  return path;
}

/** A run context on the simulator with the config written by {@link writeTestConfig}. */
export async function openTestContext(
  sim: RunningSimulator,
  dir: string,
  options: { extra?: Record<string, unknown>; clock?: Clock } = {},
): Promise<OwnedRunContext> {
  const configPath = writeTestConfig(dir, options.extra);
  const { config, errors } = loadConfig({ env: {}, cwd: dir, configPath });
  if (config === null) throw new Error(errors.join('; '));
  return openRunContext({
    config,
    apiKey: sim.apiKey,
    baseUrl: sim.baseUrl,
    ...(options.clock ? { clock: options.clock } : {}),
  });
}

/** How many `POST /exports` the simulator saw. */
export function exportPosts(sim: RunningSimulator): number {
  return sim.control.usage().filter((u) => u.endpoint === 'POST /exports').length;
}

/** Rows of a mirror query (test-only reads). */
export function rows<T>(mirror: Mirror, sqlText: string, ...params: unknown[]): T[] {
  return cachedStatement(mirror, sqlText).all(...params) as T[];
}

/** sha256 hex of a file. */
export function sha256File(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/**
 * Replaces an export's downloaded file and its recorded checksum, as a service that sent this
 * content would have: lets a test feed the loader a file of its choice through the pipeline.
 */
export function replaceDownloadedFile(mirror: Mirror, id: number, path: string, content: string): void {
  writeFileSync(path, content);
  markExportDownloaded(mirror, id, {
    filePath: path,
    downloadedAt: new Date().toISOString(),
    checksum: sha256File(path),
    byteCount: Buffer.byteLength(content),
  });
}

/**
 * Asserts that the mirror holds exactly the simulator's truth for `domains`: the domain row,
 * current licences and payment methods, and every section's JSON.
 */
export function expectMirrorEqualsTruth(
  sim: RunningSimulator,
  mirror: Mirror,
  domains: readonly string[],
  options: { sections?: boolean } = {},
): void {
  expect(domains.length).toBeGreaterThan(0);
  for (const domain of domains) {
    const truth = sim.control.truth.profile(domain)!;
    const [row] = rows<Record<string, unknown>>(
      mirror,
      'SELECT * FROM domains WHERE domain_normalized = ?',
      domain,
    );
    expect(row, domain).toBeDefined();
    expect({
      domain_normalized: row!.domain_normalized,
      company_name: row!.company_name,
      status: row!.status,
      last_enriched_at: row!.last_enriched_at,
      operator_name: row!.operator_name,
      operator_legal_entity_name: row!.operator_legal_entity_name,
      operator_country: row!.operator_country,
      brand_name: row!.brand_name,
      brand_slug: row!.brand_slug,
    }).toEqual({
      domain_normalized: truth.domain_normalized,
      company_name: truth.company_name,
      status: truth.status,
      last_enriched_at: truth.last_enriched_at,
      operator_name: truth.operator.name,
      operator_legal_entity_name: truth.operator.legal_entity_name,
      operator_country: truth.operator.country_of_incorporation,
      brand_name: truth.brand.name,
      brand_slug: truth.brand.slug,
    });
    const licences = rows<Record<string, unknown>>(
      mirror,
      `SELECT jurisdiction, license_number, status, source_url, first_seen_at, last_confirmed_at
         FROM licenses WHERE domain_normalized = ? AND removed_at IS NULL ORDER BY jurisdiction, license_number`,
      domain,
    );
    const truthLicences = truth.licenses
      .map((l) => ({
        jurisdiction: l.jurisdiction,
        license_number: l.license_number,
        status: l.status,
        source_url: l.source_url,
        first_seen_at: l.first_seen_at,
        last_confirmed_at: l.last_confirmed_at,
      }))
      .sort((a, b) => (a.jurisdiction + a.license_number < b.jurisdiction + b.license_number ? -1 : 1));
    expect(licences, `${domain} licences`).toEqual(truthLicences);
    const methods = rows<Record<string, unknown>>(
      mirror,
      `SELECT normalized_name, category, confidence, first_seen_at, last_confirmed_at
         FROM payment_methods WHERE domain_normalized = ? AND removed_at IS NULL ORDER BY normalized_name`,
      domain,
    );
    const truthMethods = truth.payment_methods
      .map((m) => ({
        normalized_name: m.normalized_name,
        category: m.category,
        confidence: m.confidence,
        first_seen_at: m.first_seen_at,
        last_confirmed_at: m.last_confirmed_at,
      }))
      .sort((a, b) => (a.normalized_name < b.normalized_name ? -1 : 1));
    expect(methods, `${domain} payment methods`).toEqual(truthMethods);
    if (options.sections === false) continue;
    for (const section of ['game_providers', 'affiliate_programs', 'geo', 'related_domains'] as const) {
      const [stored] = rows<{ data: string }>(
        mirror,
        'SELECT data FROM domain_sections WHERE domain_normalized = ? AND section = ?',
        domain,
        section,
      );
      expect(JSON.parse(stored!.data), `${domain} ${section}`).toEqual(truth[section]);
    }
  }
}
