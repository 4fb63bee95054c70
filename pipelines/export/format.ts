import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { parse as parseCsv } from 'csv-parse';
import type { ExportFormat } from '../../src/api/index.js';
import { PROFILE_SECTIONS } from '../../src/mirror/store/profile-fields.js';
import type { ExportRowInput } from '../../src/mirror/store/export-load.js';
import { errorCode } from '../../src/runtime/run.js';
import { ExportError } from './errors.js';

/*
 * The export file format: how the rows of a downloaded export file (CSV with a header row, or
 * NDJSON) become mirror rows. The service does not document the columns of an export file
 * (docs/service-api.md), so columns are mapped by name and the plausible variants listed in
 * docs/exports.md "Layouts accepted" are accepted; the simulator's choice is in
 * docs/simulator.md "Export files". This module and csv-order.ts (for the records its
 * own splitter leaves to it) are the only users of `csv-parse`.
 */

/** The format of a stored export: its recorded format, else guessed from the file name. */
export function fileFormat(format: string | null, path: string): ExportFormat {
  if (format === 'csv' || format === 'json') return format;
  return /\.csv$/i.test(path) ? 'csv' : 'json';
}

/** How one column (or NDJSON key) maps onto a profile. */
type ColumnRole =
  | { kind: 'key' }
  | { kind: 'top'; field: 'domain' | 'status' | 'last_enriched_at' }
  | { kind: 'company' }
  | { kind: 'operator'; field: 'name' | 'legal_entity_name' | 'country_of_incorporation' }
  | { kind: 'brand'; field: 'name' | 'slug' }
  | { kind: 'object'; field: 'operator' | 'brand' | 'meta' }
  | { kind: 'section'; field: string }
  | { kind: 'unknown'; name: string };

/** Column names accepted for the key, `domain_normalized`. */
export const DOMAIN_KEY_COLUMNS = ['domain_normalized', 'normalized_domain', 'domainNormalized'] as const;

// A lookup table: its entries share a shape (flat and dotted spellings of one field) by design.
const NAMED_ROLES: Record<string, ColumnRole> = {
  domain: { kind: 'top', field: 'domain' },
  status: { kind: 'top', field: 'status' },
  last_enriched_at: { kind: 'top', field: 'last_enriched_at' },
  company_name: { kind: 'company' },
  operator_name: { kind: 'operator', field: 'name' },
  'operator.name': { kind: 'operator', field: 'name' },
  operator_legal_entity_name: { kind: 'operator', field: 'legal_entity_name' },
  'operator.legal_entity_name': { kind: 'operator', field: 'legal_entity_name' },
  operator_country: { kind: 'operator', field: 'country_of_incorporation' },
  operator_country_of_incorporation: { kind: 'operator', field: 'country_of_incorporation' },
  'operator.country_of_incorporation': { kind: 'operator', field: 'country_of_incorporation' },
  brand_name: { kind: 'brand', field: 'name' },
  'brand.name': { kind: 'brand', field: 'name' },
  brand_slug: { kind: 'brand', field: 'slug' },
  'brand.slug': { kind: 'brand', field: 'slug' },
  operator: { kind: 'object', field: 'operator' },
  brand: { kind: 'object', field: 'brand' },
  meta: { kind: 'object', field: 'meta' },
};
for (const key of DOMAIN_KEY_COLUMNS) NAMED_ROLES[key] = { kind: 'key' };
for (const section of PROFILE_SECTIONS) NAMED_ROLES[section] = { kind: 'section', field: section };
NAMED_ROLES.licenses = { kind: 'section', field: 'licenses' };
NAMED_ROLES.payment_methods = { kind: 'section', field: 'payment_methods' };

function roleOf(name: string): ColumnRole {
  const trimmed = name.trim();
  return Object.hasOwn(NAMED_ROLES, trimmed) ? NAMED_ROLES[trimmed]! : { kind: 'unknown', name: trimmed };
}

/**
 * Maps one record of an export file onto an {@link ExportRowInput}. `textCells` is true for CSV:
 * an empty cell is null, and object/section cells hold JSON text. Unknown columns are kept as
 * extra keys of the profile (so they land in `domains.profile_extra`). Throws
 * `ERR_EXPORT_FILE_INVALID` naming `where` and the column for a cell that is not valid JSON.
 */
export function mapExportRecord(
  names: readonly string[],
  values: readonly unknown[],
  roles: readonly ColumnRole[],
  textCells: boolean,
  where: string,
): ExportRowInput {
  const profile: Record<string, unknown> = {};
  let operator: Record<string, unknown> | undefined;
  let brand: Record<string, unknown> | undefined;
  let companyName: string | null | undefined;
  for (let i = 0; i < roles.length; i++) {
    const role = roles[i]!;
    let value = values[i];
    if (textCells && value === '') value = null;
    switch (role.kind) {
      case 'key':
        profile.domain_normalized = value;
        break;
      case 'top':
        profile[role.field] = value;
        break;
      case 'company':
        companyName = value as string | null;
        break;
      case 'operator':
        (operator ??= {})[role.field] = value;
        break;
      case 'brand':
        (brand ??= {})[role.field] = value;
        break;
      case 'object': {
        const parsed = typeof value === 'string' ? parseJsonCell(value, where, names[i]!) : value;
        if (parsed === null || parsed === undefined) break;
        // Flat columns (operator_name) win over a nested object when a file has both.
        if (role.field === 'operator') operator = { ...(parsed as object), ...operator };
        else if (role.field === 'brand') brand = { ...(parsed as object), ...brand };
        else profile.meta = parsed;
        break;
      }
      case 'section': {
        const parsed = typeof value === 'string' ? parseJsonCell(value, where, names[i]!) : value;
        // An empty cell or null = section not in the file: the stored rows are left alone.
        if (parsed !== null && parsed !== undefined) profile[role.field] = parsed;
        break;
      }
      case 'unknown':
        if (value !== undefined) profile[role.name] = value;
        break;
    }
  }
  if (operator !== undefined) profile.operator = operator;
  if (brand !== undefined) profile.brand = brand;
  return {
    profile: profile as unknown as ExportRowInput['profile'],
    ...(companyName === undefined ? {} : { companyName }),
  };
}

function parseJsonCell(text: string, where: string, column: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ExportError(
      'ERR_EXPORT_FILE_INVALID',
      `${where}, column ${column}: not valid JSON (${JSON.stringify(text.slice(0, 40))}…); nothing was loaded`,
    );
  }
}

/** A file whose columns cannot be mapped: names the columns found. */
function layoutError(path: string, columns: readonly string[]): ExportError {
  const shown =
    columns.slice(0, 30).join(', ') + (columns.length > 30 ? `, … (${columns.length} in all)` : '');
  return new ExportError(
    'ERR_EXPORT_LAYOUT',
    `${path}: cannot map this export file: no ${DOMAIN_KEY_COLUMNS[0]} column (also accepted: ${DOMAIN_KEY_COLUMNS.slice(1).join(', ')}); ` +
      `columns found: ${shown || '(none)'}; nothing was loaded`,
  );
}

/**
 * Streams the rows of an export file (CSV with a header row, or NDJSON) as mapped rows, with
 * memory flat whatever the file size. `where` names the line for error messages. Throws
 * `ERR_EXPORT_LAYOUT` when the header (or the first NDJSON object) has no key column, and
 * `ERR_EXPORT_FILE_INVALID` for a line that cannot be parsed.
 */
export async function* readExportRows(
  path: string,
  format: ExportFormat,
  options: { unknownColumns?: Set<string> } = {},
): AsyncGenerator<{ row: ExportRowInput; where: string }> {
  if (format === 'csv') yield* readCsvRows(path, options);
  else yield* readNdjsonRows(path, options);
}

async function* readCsvRows(
  path: string,
  options: { unknownColumns?: Set<string> },
): AsyncGenerator<{ row: ExportRowInput; where: string }> {
  let header: CsvHeader | null = null;
  let row = 0;
  try {
    for await (const record of readCsvRecords(path)) {
      if (header === null) {
        header = csvHeader(path, record, options.unknownColumns);
        continue;
      }
      row += 1;
      const where = csvWhere(path, row);
      yield { row: mapExportRecord(header.names, record, header.roles, true, where), where };
    }
  } catch (error) {
    throw unreadableCsv(path, row + 1, error);
  }
  if (header === null) throw layoutError(path, []);
}

/**
 * The records of a CSV file, header row included, as arrays of cell text: streamed, a byte-order
 * mark dropped, empty lines skipped, and a record with a different number of cells an error.
 */
export async function* readCsvRecords(path: string): AsyncGenerator<string[]> {
  yield* csvRecordsOf(createReadStream(path));
}

/**
 * How csv-parse reads an export file: a byte-order mark dropped, empty lines skipped, every record
 * with the header's number of cells.
 */
export const CSV_OPTIONS = { bom: true, skip_empty_lines: true, relax_column_count: false } as const;

/**
 * The records of CSV bytes from `source`, read as {@link readCsvRecords} reads a file; `to`: only
 * that many records, the rest not parsed.
 */
export async function* csvRecordsOf(
  source: Readable,
  options: { to?: number } = {},
): AsyncGenerator<string[]> {
  const parser = parseCsv({ ...CSV_OPTIONS, ...options });
  source.on('error', (error) => parser.destroy(error));
  source.pipe(parser);
  try {
    yield* parser as AsyncIterable<string[]>;
  } finally {
    source.destroy();
  }
}

/** The columns of a CSV export file, from its header record, as rows are mapped with them. */
export interface CsvHeader {
  names: string[];
  roles: ColumnRole[];
  /** The column whose cell is the key: the last one naming it, as mapExportRecord keeps the last. */
  keyColumn: number;
}

/**
 * The columns of a CSV file's header record. Throws `ERR_EXPORT_LAYOUT` when none is the key;
 * adds the columns no role maps to `unknownColumns`.
 */
export function csvHeader(path: string, record: readonly string[], unknownColumns?: Set<string>): CsvHeader {
  const names = record.map((n) => n.trim());
  const roles = names.map(roleOf);
  const keyColumn = roles.map((r) => r.kind).lastIndexOf('key');
  if (keyColumn < 0) throw layoutError(path, names);
  for (const role of roles) if (role.kind === 'unknown') unknownColumns?.add(role.name);
  return { names, roles, keyColumn };
}

/** How an error names data row `row` (1-based, the header not counted) of a CSV file. */
export function csvWhere(path: string, row: number): string {
  return `${path} row ${row} (line ${row + 1})`;
}

/** A CSV parser's own error (bad quoting, a record with another number of cells) as the load's. */
export function unreadableCsv(path: string, row: number, error: unknown): Error {
  const code = errorCode(error);
  if (code === 'ERR_EXPORT_LAYOUT' || code === 'ERR_EXPORT_FILE_INVALID') return error as Error;
  return new ExportError(
    'ERR_EXPORT_FILE_INVALID',
    `${path}: not a readable CSV file near line ${row + 1}: ${(error as Error).message}; nothing was loaded`,
    { cause: error },
  );
}

async function* readNdjsonRows(
  path: string,
  options: { unknownColumns?: Set<string> },
): AsyncGenerator<{ row: ExportRowInput; where: string }> {
  const reader = new NdjsonRowReader(path, options);
  let line = 0;
  for await (const text of readLines(path)) {
    line += 1;
    const row = reader.row(text, line);
    if (row !== null) yield { row, where: reader.where(line) };
  }
  // An empty NDJSON file is an export of 0 rows (a filter that matched nothing); the load checks
  // that against the export's total_rows.
}

/**
 * Turns the lines of one NDJSON export file into mapped rows, in any order: the first non-blank
 * line it is given must name the key (`ERR_EXPORT_LAYOUT` otherwise), and every unknown key it
 * meets is added to `unknownColumns`. Used line by line by {@link readExportRows}, and by the
 * key-ordered reader (ndjson-order.ts), whose scan checks the file's first row.
 */
export class NdjsonRowReader {
  private readonly roleCache = new Map<string, ColumnRole>();
  private first: boolean;
  private readonly path: string;
  private readonly options: { unknownColumns?: Set<string>; layoutChecked?: boolean };

  /** `layoutChecked`: the file's first row was checked already (by the scan of ndjson-order.ts). */
  constructor(path: string, options: { unknownColumns?: Set<string>; layoutChecked?: boolean } = {}) {
    this.path = path;
    this.options = options;
    this.first = options.layoutChecked !== true;
  }

  /** How an error names line `line` of the file. */
  where(line: number): string {
    return `${this.path} line ${line}`;
  }

  /**
   * The row of line `line` (1-based; its text without the newline), or null for a blank line.
   * Throws `ERR_EXPORT_FILE_INVALID` for a line that is not one JSON object.
   */
  row(text: string, line: number): ExportRowInput | null {
    const trimmed = line === 1 ? text.replace(/^\uFEFF/, '').trim() : text.trim();
    if (trimmed === '') return null;
    const where = this.where(line);
    let object: unknown;
    try {
      object = JSON.parse(trimmed);
    } catch {
      throw new ExportError(
        'ERR_EXPORT_FILE_INVALID',
        `${where}: not a JSON object (${JSON.stringify(trimmed.slice(0, 40))}…); nothing was loaded`,
      );
    }
    if (object === null || typeof object !== 'object' || Array.isArray(object)) {
      throw new ExportError(
        'ERR_EXPORT_FILE_INVALID',
        `${where}: expected one JSON object per line; nothing was loaded`,
      );
    }
    const names = Object.keys(object);
    const values = names.map((n) => (object as Record<string, unknown>)[n]);
    const roles = names.map((n) => {
      let role = this.roleCache.get(n);
      if (role === undefined) {
        role = roleOf(n);
        this.roleCache.set(n, role);
        if (role.kind === 'unknown') this.options.unknownColumns?.add(role.name);
      }
      return role;
    });
    if (this.first) {
      if (!roles.some((r) => r.kind === 'key')) throw layoutError(this.path, names);
      this.first = false;
    }
    return mapExportRecord(names, values, roles, false, where);
  }
}

/** Lines of a UTF-8 file, streamed (a multi-byte character split across chunks stays whole). */
async function* readLines(path: string): AsyncGenerator<string> {
  const stream = createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 20 });
  let rest = '';
  for await (const chunk of stream as AsyncIterable<string>) {
    const text = rest + chunk;
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      yield text.slice(start, nl);
      start = nl + 1;
    }
    rest = text.slice(start);
  }
  if (rest !== '') yield rest;
}
