import { SERVICE_STOP_CODES } from '../runtime/run-result.js';
import { DomainSyncError } from '../util/domain-sync-error.js';

/** Exit statuses of the contract (docs/contract.md "Exit statuses"). */
export const EXIT = {
  /** Done; stopping at the configured budget counts as done. */
  OK: 0,
  /** Failed, or finished with item failures. */
  FAILED: 1,
  /** Bad usage or config. */
  USAGE: 2,
  /** Stopped early by the service (quota exhausted, key rejected), work so far kept. */
  STOPPED_BY_SERVICE: 3,
} as const;

const USAGE_CODES = new Set(['ERR_USAGE', 'ERR_CONFIG', 'ERR_MISSING_API_KEY']);

/** The one place errors become exit statuses. Matches on `code`, never messages. */
export function exitCodeForError(error: unknown): number {
  if (error instanceof DomainSyncError || hasCode(error)) {
    const code = (error as { code: string }).code;
    if (USAGE_CODES.has(code)) return EXIT.USAGE;
    if (SERVICE_STOP_CODES.has(code)) return EXIT.STOPPED_BY_SERVICE;
  }
  return EXIT.FAILED;
}

/** Exit status for a pipeline outcome. */
export function exitCodeForOutcome(status: string, itemFailures: number): number {
  if (status === 'stopped_by_service') return EXIT.STOPPED_BY_SERVICE;
  if (status === 'failed') return EXIT.FAILED;
  if (status === 'interrupted') return EXIT.FAILED;
  return itemFailures > 0 ? EXIT.FAILED : EXIT.OK;
}

function hasCode(error: unknown): boolean {
  return (
    typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string'
  );
}
