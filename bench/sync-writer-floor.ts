/**
 * What the sync's mirror writes cost on their own, for the sync benchmark (bench/sync.ts): the
 * same profiles written into an empty mirror with no HTTP and no threads, two ways.
 *
 * - `writer-alone`: the sync's own store functions (each listing page of 500 through
 *   upsertDomainSummaries with the writer thread's HeldListing, then upsertProfiles for each 1,000
 *   profiles, the listing rows still held written before each commit), as a first sync and its
 *   mirror writer thread run them: the secondary indexes set aside first and built at the end
 *   (src/mirror/store/deferred-indexes.ts), the mirror's baseline open (src/mirror/store/
 *   baseline.ts), the writes in one transaction committed every
 *   WRITER_COMMIT_EVERY_PROFILES profiles.
 * - `writer-alone-indexed`: the same with every index kept up to date row by row, as before the
 *   indexes were set aside: what setting them aside is worth, in the same run.
 * - `writer-alone-per-batch`: the same, committed after every listing page and every 1,000
 *   profiles, as the writer thread did before it held its transaction open across batches (so
 *   each listing page written by upsertDomainSummaries, as then): what the commit interval is
 *   worth, in the same run.
 * - `writer-alone-4k`: the same into a mirror file of 4 KiB pages, as one made before new mirrors
 *   got 8 KiB pages (NEW_MIRROR_PAGE_SIZE) has: what the page size is worth, in the same run.
 * - `bare-sqlite`: the floor under any writer of these rows: plain prepared INSERTs of exactly the
 *   rows a first sync keeps for a new domain (the domain row with its profile_extra, each licence
 *   and payment method, the 4 section rows; no change_log rows, since a first sync is the mirror's
 *   baseline: src/mirror/store/baseline.ts), into the same schema, in domain order within each 1,000, committed as often as the writer
 *   thread commits (WRITER_COMMIT_EVERY_PROFILES), with the same indexes set aside first and
 *   built at the end as `writer-alone` does.
 *   Every value is computed before the clock starts: only SQLite's work is measured.
 * - `writer-alone-key-order` and `bare-sqlite-key-order`: `writer-alone` and `bare-sqlite` with the
 *   profiles (and their listing rows) in domain order instead of listing order, as if the service
 *   listed the catalogue sorted by domain: what the order of the writes is worth, in the same run.
 *   The tables' keys, which stay during a load, take a domain's rows where its key sorts; in
 *   listing order each lands on a page of its own once the mirror is large.
 * - `bare-sqlite-contract`: the floor under any tool that keeps the contract's mirror tables: the
 *   same plain INSERTs, of only the columns the product's contract requires of `domains`,
 *   `licenses`, `payment_methods` and `domain_sections` (so none of our own: no profile_extra, no
 *   listing or mirror timestamps, no change_seq), into a file of those four tables with their keys
 *   and no other index, made with the mirror's page size and the writer thread's pragmas.
 *
 * Both read the profiles from a mirror a full sync filled (rebuilt from its columns and rows, in
 * listing order: readSource) and count only the CPU of the writes.
 */
import Database from 'better-sqlite3';
import { CONTRACT_TABLE_SQL } from './contract-tables.js';
import type { ContractTable } from './contract-tables.js';
import { PROFILE_BATCH_SIZE as BATCH } from '../pipelines/sync.js';
import { DEFAULTS } from '../src/config/defaults.js';
import { mirrorInternals, NEW_MIRROR_PAGE_SIZE, openMirror } from '../src/mirror/database.js';
import type { DomainProfileInput, DomainSummaryInput } from '../src/mirror/inputs.js';
import { WRITER_CACHE_SIZE_KIB, WRITER_COMMIT_EVERY_PROFILES } from '../src/mirror/profile-writer.js';
import { applyWriterPragmas } from '../src/mirror/profile-writer-apply.js';
import { openBaselineIfFirstLoad } from '../src/mirror/store/baseline.js';
import { buildDeferredIndexes, deferIndexesForBulkLoad } from '../src/mirror/store/deferred-indexes.js';
import { upsertDomainSummaries } from '../src/mirror/store/domains.js';
import { HeldListing } from '../src/mirror/store/held-listing.js';
import type { LicenceRow, PaymentMethodRow } from '../src/mirror/store/profile-fields.js';
import { LICENCES, PAYMENT_METHODS, PROFILE_SECTIONS } from '../src/mirror/store/profile-fields.js';
import { upsertProfiles } from '../src/mirror/store/profiles.js';
import { childRows } from '../src/mirror/store/child-history.js';
import { compareKeys } from '../src/mirror/store/values.js';

/** Listing page size of the sync. */
const PAGE = DEFAULTS.sync.perPage;

/** The modes of {@link runWriterFloor}, which bench/sync-child.ts hands to it. */
export const WRITER_FLOOR_MODES = [
  'writer-alone',
  'writer-alone-indexed',
  'writer-alone-4k',
  'writer-alone-per-batch',
  'bare-sqlite',
  'bare-sqlite-contract',
  'writer-alone-key-order',
  'bare-sqlite-key-order',
] as const;
export type WriterFloorMode = (typeof WRITER_FLOOR_MODES)[number];

export function isWriterFloorMode(mode: string): mode is WriterFloorMode {
  return (WRITER_FLOOR_MODES as readonly string[]).includes(mode);
}

export interface WriterFloorResult {
  profiles: number;
  /** Rows written per profile (bare-sqlite only; the writer writes the same rows). */
  rowsPerProfile: number | null;
  cpuMs: number;
  elapsedMs: number;
}

interface SourceRow {
  domain_normalized: string;
  company_name: string | null;
  listing_last_enriched_at: string | null;
  /** The profile as the service sent it, rebuilt from the mirror's columns and rows (JSON). */
  profile: string;
  /** Its `profile_extra`, as the sync stored it. */
  profile_extra: string;
}

/**
 * The profiles a full sync wrote into `sourcePath`, in the order the listing gave them, each
 * rebuilt from what the mirror keeps of it (since migration 0010 it no longer stores the whole
 * profile): its columns, its licences and payment methods, its sections, and `profile_extra`
 * merged over them.
 */
async function readSource(sourcePath: string, keyOrder = false): Promise<SourceRow[]> {
  const source = await openMirror(sourcePath, { readonly: true });
  const section = (name: string): string =>
    `'${name}', json((SELECT s.data FROM domain_sections s WHERE s.domain_normalized = d.domain_normalized AND s.section = '${name}'))`;
  try {
    return mirrorInternals(source)
      .sqlite.prepare(
        `SELECT domain_normalized, company_name, listing_last_enriched_at, profile_extra,
           json_patch(json_object(
             'domain', domain, 'domain_normalized', domain_normalized, 'status', status,
             'last_enriched_at', last_enriched_at,
             'operator', json_object('name', operator_name, 'legal_entity_name', operator_legal_entity_name,
                                     'country_of_incorporation', operator_country),
             'brand', json_object('name', brand_name, 'slug', brand_slug),
             -- A subquery's JSON is text to json_object: json() makes it JSON again.
             'licenses', json((SELECT json_group_array(json_object('jurisdiction', jurisdiction,
                            'license_number', license_number, 'status', status, 'source_url', source_url,
                            'first_seen_at', first_seen_at, 'last_confirmed_at', last_confirmed_at))
                          FROM licenses l WHERE l.domain_normalized = d.domain_normalized AND removed_at IS NULL)),
             'payment_methods', json((SELECT json_group_array(json_object('normalized_name', normalized_name,
                            'category', category, 'confidence', confidence, 'first_seen_at', first_seen_at,
                            'last_confirmed_at', last_confirmed_at))
                          FROM payment_methods m WHERE m.domain_normalized = d.domain_normalized AND removed_at IS NULL)),
             ${['game_providers', 'affiliate_programs', 'geo', 'related_domains'].map(section).join(',\n             ')},
             'meta', json_object('freshness_age_seconds', freshness_age_seconds,
                                 'served_from_cache', json(CASE served_from_cache WHEN 1 THEN 'true' WHEN 0 THEN 'false' END),
                                 'billable', json(CASE billable WHEN 1 THEN 'true' WHEN 0 THEN 'false' END),
                                 'observed_at', observed_at)
           ), coalesce(profile_extra, '{}')) AS profile
         FROM domains d WHERE profile_synced_at IS NOT NULL
         ORDER BY ${keyOrder ? 'domain_normalized' : 'rowid'}`,
      )
      .all() as SourceRow[];
  } finally {
    await source.close();
  }
}

/** An empty SQLite file in WAL with `pageSize`-byte pages, which openMirror then keeps. */
function createWithPageSize(path: string, pageSize: number): void {
  const db = new Database(path);
  try {
    db.pragma(`page_size = ${pageSize}`);
    db.pragma('journal_mode = WAL');
  } finally {
    db.close();
  }
}

const cpuMsSince = (start: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
};

/** The key-order modes: the mode each runs, with the profiles sorted by domain. */
const KEY_ORDER_MODES: Partial<Record<WriterFloorMode, WriterFloorMode>> = {
  'writer-alone-key-order': 'writer-alone',
  'bare-sqlite-key-order': 'bare-sqlite',
};

/** Writes the profiles of `sourcePath` into a new mirror at `targetPath`; see the file comment. */
export async function runWriterFloor(
  requested: WriterFloorMode,
  sourcePath: string,
  targetPath: string,
): Promise<WriterFloorResult> {
  const keyOrderOf = KEY_ORDER_MODES[requested];
  const mode: WriterFloorMode = keyOrderOf ?? requested;
  const source = await readSource(sourcePath, keyOrderOf !== undefined);
  if (mode === 'bare-sqlite-contract') return writeContractRows(source, targetPath);
  if (mode === 'writer-alone-4k') createWithPageSize(targetPath, 4096);
  const mirror = await openMirror(targetPath, {});
  try {
    const { sqlite } = mirrorInternals(mirror);
    const expectedPageSize = mode === 'writer-alone-4k' ? 4096 : NEW_MIRROR_PAGE_SIZE;
    if (sqlite.pragma('page_size', { simple: true }) !== expectedPageSize)
      throw new Error(`${mode}: the mirror's pages are not ${expectedPageSize} bytes`);
    applyWriterPragmas(sqlite, WRITER_CACHE_SIZE_KIB);
    const at = new Date().toISOString();
    // As a first sync does (pipelines/sync.ts): the mirror's baseline opened (no `added`
    // change_log rows), indexes set aside before the load and built after it.
    const setAside = (): void => {
      if (!openBaselineIfFirstLoad(mirror, at, 0)) throw new Error(`${mode}: no baseline was opened`);
      if (mode !== 'writer-alone-indexed' && deferIndexesForBulkLoad(mirror, at).length === 0)
        throw new Error(`${mode}: no index was set aside`);
    };
    if (mode !== 'bare-sqlite') {
      const summaries: DomainSummaryInput[] = source.map((r) => ({
        domain_normalized: r.domain_normalized,
        company_name: r.company_name,
        last_enriched_at: r.listing_last_enriched_at,
      }));
      const profiles = source.map((r) => JSON.parse(r.profile) as DomainProfileInput);
      // As the writer thread does, while it keeps a transaction open: new domains' listing rows
      // held until their profile writes each row once, the rest written before the commit.
      // Committed per batch, as before, there is no open transaction to hold them in.
      const held = mode === 'writer-alone-per-batch' ? undefined : new HeldListing();
      const writeRange = (from: number): void => {
        for (let i = from; i < Math.min(from + WRITER_COMMIT_EVERY_PROFILES, profiles.length); i += BATCH) {
          for (let p = i; p < Math.min(i + BATCH, profiles.length); p += PAGE) {
            const page = summaries.slice(p, Math.min(p + PAGE, i + BATCH));
            upsertDomainSummaries(mirror, page, {
              listedAt: at,
              ...(held === undefined ? {} : { heldListing: held }),
            });
          }
          upsertProfiles(mirror, profiles.slice(i, i + BATCH), {
            syncedAt: at,
            ...(held === undefined ? {} : { heldListing: held }),
          });
        }
        held?.flush(mirror);
      };
      // As the writer thread does: the store calls join one transaction, committed every
      // WRITER_COMMIT_EVERY_PROFILES profiles; per batch, each store call commits on its own.
      const write = held === undefined ? writeRange : sqlite.transaction(writeRange);
      const started = performance.now();
      const cpu = process.cpuUsage();
      setAside();
      for (let i = 0; i < profiles.length; i += WRITER_COMMIT_EVERY_PROFILES) write(i);
      await buildDeferredIndexes(mirror);
      return {
        profiles: profiles.length,
        rowsPerProfile: null,
        cpuMs: cpuMsSince(cpu),
        elapsedMs: performance.now() - started,
      };
    }
    const statements = insertStatements(sqlite, (table) => BARE_COLUMNS[table], true);
    return await timeInserts(sqlite, statements, bareRows(source, at), {
      before: setAside,
      after: () => buildDeferredIndexes(mirror),
    });
  } finally {
    await mirror.close();
  }
}

type Table = 'domain' | 'licence' | 'payment' | 'section';
type BareRow = [Table, unknown[]];

const TABLE_NAMES: Record<Table, ContractTable> = {
  domain: 'domains',
  licence: 'licenses',
  payment: 'payment_methods',
  section: 'domain_sections',
};

/** The mirror's columns that {@link bareRows} fills, in the order of its parameters. */
const BARE_COLUMNS: Record<Table, readonly string[]> = {
  domain: [
    'domain_normalized',
    'domain',
    'company_name',
    'status',
    'last_enriched_at',
    'listing_last_enriched_at',
    'operator_name',
    'operator_legal_entity_name',
    'operator_country',
    'brand_name',
    'brand_slug',
    'profile_extra',
    'first_synced_at',
    'last_synced_at',
    'last_listed_at',
    'profile_synced_at',
  ],
  licence: [
    'domain_normalized',
    'jurisdiction',
    'license_number',
    'status',
    'source_url',
    'first_seen_at',
    'last_confirmed_at',
    'mirror_first_seen_at',
    'mirror_updated_at',
  ],
  payment: [
    'domain_normalized',
    'normalized_name',
    'category',
    'confidence',
    'first_seen_at',
    'last_confirmed_at',
    'mirror_first_seen_at',
    'mirror_updated_at',
  ],
  section: ['domain_normalized', 'section', 'data', 'mirror_first_seen_at', 'mirror_updated_at'],
};

/**
 * The columns of {@link BARE_COLUMNS} that the contract's tables (contract-tables.ts) have: every
 * required column a new row has a value for (`removed_at` is NULL for a new row).
 */
const CONTRACT_COLUMNS: Record<Table, readonly string[]> = {
  domain: BARE_COLUMNS.domain.filter(
    (c) => !['listing_last_enriched_at', 'profile_extra', 'last_listed_at', 'profile_synced_at'].includes(c),
  ),
  licence: BARE_COLUMNS.licence.filter((c) => !c.startsWith('mirror_')),
  payment: BARE_COLUMNS.payment.filter((c) => !c.startsWith('mirror_')),
  section: BARE_COLUMNS.section.filter((c) => !c.startsWith('mirror_')),
};

const TABLES = Object.keys(TABLE_NAMES) as Table[];

/** `make(table)` for each of the four tables. */
function byTable<T>(make: (table: Table) => T): Record<Table, T> {
  return Object.fromEntries(TABLES.map((table) => [table, make(table)])) as Record<Table, T>;
}

/**
 * A prepared `INSERT INTO <table> (<columns>) VALUES (?, …)` per table, with `change_seq` set to 1
 * (the one value of a load's transactions, as the writer thread stamps them) if `withChangeSeq`.
 */
function insertStatements(
  db: Database.Database,
  columns: (table: Table) => readonly string[],
  withChangeSeq: boolean,
): Record<Table, Database.Statement> {
  return byTable((table) =>
    db.prepare(
      `INSERT INTO ${TABLE_NAMES[table]} (${columns(table).join(', ')}${withChangeSeq ? ', change_seq' : ''})
       VALUES (${columns(table)
         .map(() => '?')
         .join(', ')}${withChangeSeq ? ', 1' : ''})`,
    ),
  );
}

/**
 * Runs `statements` over `batches`, committed as often as the writer thread commits
 * (WRITER_COMMIT_EVERY_PROFILES), timing only this, with `before` and `after` inside the clock.
 */
async function timeInserts(
  db: Database.Database,
  statements: Record<Table, Database.Statement>,
  batches: readonly BareRow[][],
  around: { before?: () => void; after?: () => Promise<unknown> } = {},
): Promise<WriterFloorResult> {
  const profiles = batches.reduce((n, b) => n + b.filter(([table]) => table === 'domain').length, 0);
  const rows = batches.reduce((n, b) => n + b.length, 0);
  const perCommit = Math.max(1, Math.round(WRITER_COMMIT_EVERY_PROFILES / BATCH));
  const write = db.transaction((group: readonly BareRow[][]) => {
    for (const batch of group) for (const [table, params] of batch) statements[table].run(params);
  });
  const started = performance.now();
  const cpu = process.cpuUsage();
  around.before?.();
  for (let b = 0; b < batches.length; b += perCommit) write(batches.slice(b, b + perCommit));
  await around.after?.();
  return {
    profiles,
    rowsPerProfile: Math.round((rows / profiles) * 10) / 10,
    cpuMs: cpuMsSince(cpu),
    elapsedMs: performance.now() - started,
  };
}

/** `bare-sqlite-contract`: the contract's rows alone, in plain INSERTs; see the file comment. */
async function writeContractRows(
  source: readonly SourceRow[],
  targetPath: string,
): Promise<WriterFloorResult> {
  // As openMirror makes a new mirror, and as the writer thread then sets its connection.
  createWithPageSize(targetPath, NEW_MIRROR_PAGE_SIZE);
  const db = new Database(targetPath);
  try {
    db.pragma('synchronous = NORMAL');
    db.pragma('temp_store = MEMORY');
    applyWriterPragmas(db, WRITER_CACHE_SIZE_KIB);
    for (const table of TABLES) db.exec(CONTRACT_TABLE_SQL[TABLE_NAMES[table]]);
    // Each contract column's place among bareRows' parameters.
    const picks = byTable((table) => CONTRACT_COLUMNS[table].map((c) => BARE_COLUMNS[table].indexOf(c)));
    const batches = bareRows(source, new Date().toISOString()).map((batch) =>
      batch.map(([table, params]): BareRow => [table, picks[table].map((i) => params[i])]),
    );
    const statements = insertStatements(db, (table) => CONTRACT_COLUMNS[table], false);
    const result = await timeInserts(db, statements, batches);
    const written = db.prepare('SELECT count(*) AS n FROM domains').get() as { n: number };
    if (written.n !== source.length)
      throw new Error(`bare-sqlite-contract: ${written.n} domains written of ${source.length}`);
    return result;
  } finally {
    db.close();
  }
}

interface RawProfile {
  domain?: string;
  status?: string;
  last_enriched_at?: string;
  operator?: { name?: string; legal_entity_name?: string; country_of_incorporation?: string };
  brand?: { name?: string; slug?: string };
  licenses?: object[];
  payment_methods?: object[];
  [section: string]: unknown;
}

/** The rows of each transaction, every parameter ready, domains in key order within a batch. */
function bareRows(source: readonly SourceRow[], at: string): BareRow[][] {
  const batches: BareRow[][] = [];
  for (let i = 0; i < source.length; i += BATCH) {
    const batch: BareRow[] = [];
    const sorted = source
      .slice(i, i + BATCH)
      .sort((a, b) => compareKeys(a.domain_normalized, b.domain_normalized));
    for (const r of sorted) {
      const key = r.domain_normalized;
      const p = JSON.parse(r.profile) as RawProfile;
      batch.push([
        'domain',
        [
          key,
          p.domain ?? null,
          r.company_name,
          p.status ?? null,
          p.last_enriched_at ?? null,
          r.listing_last_enriched_at,
          p.operator?.name ?? null,
          p.operator?.legal_entity_name ?? null,
          p.operator?.country_of_incorporation ?? null,
          p.brand?.name ?? null,
          p.brand?.slug ?? null,
          r.profile_extra,
          at,
          at,
          at,
          at,
        ],
      ]);
      // The rows the mirror keeps (one per key, the last one winning), by the store's own conversion.
      const licences = childRows(LICENCES, p.licenses, key) ?? new Map<string, LicenceRow>();
      const payments =
        childRows(PAYMENT_METHODS, p.payment_methods, key) ?? new Map<string, PaymentMethodRow>();
      for (const l of licences.values()) {
        batch.push([
          'licence',
          [
            key,
            l.jurisdiction,
            l.license_number,
            l.status,
            l.source_url,
            l.first_seen_at,
            l.last_confirmed_at,
            at,
            at,
          ],
        ]);
      }
      for (const m of payments.values()) {
        batch.push([
          'payment',
          [key, m.normalized_name, m.category, m.confidence, m.first_seen_at, m.last_confirmed_at, at, at],
        ]);
      }
      for (const section of PROFILE_SECTIONS) {
        if (p[section] !== undefined)
          batch.push(['section', [key, section, JSON.stringify(p[section]), at, at]]);
      }
    }
    batches.push(batch);
  }
  return batches;
}
