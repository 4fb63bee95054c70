import type { Catalogue } from './catalogue.js';
import type { ExportRecord } from './jobs.js';
import type { Renderer } from './render.js';
import type { TruthProfile } from './types.js';
import { SECTION_NAMES } from './types.js';

/**
 * Flat CSV columns before the section columns (the service does not describe the file layout,
 * docs/service-api.md; the simulator's layout is documented in docs/simulator.md "Export files").
 */
export const CSV_BASE_COLUMNS = [
  'domain_normalized',
  'domain',
  'company_name',
  'status',
  'last_enriched_at',
  'operator_name',
  'operator_legal_entity_name',
  'operator_country',
  'brand_name',
  'brand_slug',
] as const;

const ROWS_PER_CHUNK = 250;

/** File name of an export's download (`export-<id>.csv` or `export-<id>.ndjson`). */
export function exportFileName(record: ExportRecord): string {
  return `export-${record.id}.${record.format === 'csv' ? 'csv' : 'ndjson'}`;
}

/** Content-Type of an export's download. */
export function exportContentType(record: ExportRecord): string {
  return record.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8';
}

/** Quotes a CSV cell when needed (RFC 4180); null becomes an empty cell. */
export function csvCell(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * The rows of a completed export, generated on the fly in chunks from the snapshot taken at
 * completion, so a million-row file never sits in memory.
 */
export async function* exportChunks(
  record: ExportRecord,
  catalogue: Catalogue,
  renderer: Renderer,
  quirks: boolean,
): AsyncGenerator<string> {
  const ids = record.ids ?? new Int32Array(0);
  const snapshot = record.snapshot ?? new Map<number, TruthProfile>();
  const sections = SECTION_NAMES.filter((s) => record.fields.includes(s));
  let chunk = '';
  if (record.format === 'csv') {
    const header: string[] = [...CSV_BASE_COLUMNS, ...sections];
    if (quirks) header.push('x_sim_revision');
    chunk = `${header.join(',')}\r\n`;
  }
  for (let i = 0; i < ids.length; i++) {
    const p = catalogue.profileFrom(snapshot, ids[i] as number);
    if (record.format === 'csv') {
      const cells: Array<string | number | null> = [
        p.domain_normalized,
        p.domain_normalized,
        p.company_name,
        p.status,
        renderer.ts(p.last_enriched_at),
        p.operator.name,
        p.operator.legal_entity_name,
        p.operator.country_of_incorporation,
        p.brand.name,
        p.brand.slug,
        ...sections.map((s) => JSON.stringify(renderer.section(p, s))),
      ];
      if (quirks) cells.push(i % 7);
      chunk += `${cells.map(csvCell).join(',')}\r\n`;
    } else {
      const body = renderer.profileBody(p, sections, p.domain_normalized);
      chunk += `${JSON.stringify({ ...body, company_name: p.company_name })}\n`;
    }
    if ((i + 1) % ROWS_PER_CHUNK === 0) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk) yield chunk;
}
