// Re-export list only: its type names repeat the imports of catalogue.ts and the other modules.
export { startSimulator } from './server.js';
export { CANONICAL_FILTERS, SECTION_NAMES } from './types.js';
export type {
  CanonicalFilter,
  FaultKind,
  FaultRule,
  RequestEntry,
  RunningSimulator,
  SectionName,
  SimAccount,
  SimulatorControl,
  SimulatorOptions,
  // The barrel names the same truth types catalogue.ts imports: a type list, by design.
  TruthAffiliateProgram,
  TruthGameProvider,
  TruthGeo,
  TruthLicence,
  TruthPaymentMethod,
  TruthProfile,
  TruthRelatedDomain,
  UrlStyle,
  UsageEntry,
} from './types.js';
export type { QuotaExceededBody } from './ledger.js';
export { BASE_PATH } from './service.js';
export { CSV_BASE_COLUMNS } from './export-file.js';
