/**
 * The `export` pipeline (re-exports only): the run's state machine is in `run.ts`; what it decides
 * before paying in `estimate.ts`; the saved POST intent in `intent.ts`; polling and downloading in
 * `transfer.ts` over the generic atomic file writer of `download.ts`; the two-pass load and file
 * retention in `load.ts`; the export-file format (CSV/NDJSON readers, column roles, record
 * mapping) in `format.ts`.
 */
export { exportPipeline } from './run.js';
export type { ExportOptions, ExportStats } from './types.js';
export { ExportError } from './errors.js';
export { estimateExportCredits, exportParamsHash } from './estimate.js';
export { DOMAIN_KEY_COLUMNS, mapExportRecord, readExportRows } from './format.js';
