import { DomainSyncError } from '../../src/util/domain-sync-error.js';

/** Stable errors of the export pipeline (matched on `code`, see docs/exports.md "Failures"). */
export class ExportError extends DomainSyncError {}
