import { createHash } from 'node:crypto';
import type { ExportFormat } from '../../src/api/index.js';
import { checkAllowance, type AllowanceState, type AllowanceStatus } from '../../src/runtime/allowance.js';
import type { ExportIntent } from './intent.js';

/*
 * Everything the export decides before it pays, as pure functions (no I/O, no clock): the
 * parameters' hash, the price per row, the estimate, and the checks that may refuse to create an
 * export. The run (run.ts) reads the mirror and the account, asks these, and acts on the answer.
 */

/**
 * Hash identifying an export's parameters (filters in canonical names, format, fields), so a
 * re-run with the same parameters finds the unfinished export. Filter and field order do not
 * matter; "all sections" (fields not given) differs from an explicit list.
 */
export function exportParamsHash(params: {
  filters: Readonly<Record<string, unknown>>;
  format: ExportFormat;
  fields: readonly string[] | undefined;
}): string {
  const filters = Object.keys(params.filters)
    .sort()
    .map((k) => [k, params.filters[k]]);
  const fields = params.fields === undefined ? null : [...new Set(params.fields)].sort();
  return createHash('sha256')
    .update(JSON.stringify({ filters, format: params.format, fields }))
    .digest('hex');
}

/**
 * Estimated credits of an export: `ceil(rows × creditsPerRow)`. The service does not publish its
 * formula (docs/service-api.md), so the price per row is learned from past exports.
 */
export function estimateExportCredits(rows: number, creditsPerRow: number): number {
  // toPrecision trims float noise (0.1 × 30 = 3.0000000000000004 must not become 4).
  return Math.ceil(Number((rows * creditsPerRow).toPrecision(12)));
}

/** The price per row: learned from past exports when there are any, else the configured guess. */
export function pricePerRow(
  learned: { creditsPerRow: number; exports: number } | undefined,
  guess: number,
): { creditsPerRow: number; priceSource: string } {
  return learned
    ? { creditsPerRow: learned.creditsPerRow, priceSource: `learned from ${learned.exports} export(s)` }
    : { creditsPerRow: guess, priceSource: 'guess (exports.creditsPerRowGuess)' };
}

/** A price for messages: at most 4 significant digits. */
export function formatPrice(price: number): string {
  return Number(price.toPrecision(4)).toString();
}

/** Message of an export whose file expired before it was downloaded. */
export function expiredMessage(id: number, expiresAt: string | null | undefined): string {
  return (
    `the file of export ${id} has expired (expires_at ${expiresAt ?? 'unknown'}) before it was downloaded; ` +
    'run again with --recreate-expired to pay for a new export with the same parameters'
  );
}

/**
 * Whether the last export with the same parameters expired before it was loaded, and creating
 * another one (which costs credits again) must be refused: the user asks for that with
 * `--recreate-expired`, it never happens silently. Returns the refusal's message, or null.
 */
export function expiredRefusal(
  latest:
    | { id: number; loadedAt: string | null; downloadStatus: string | null; expiresAt: string | null }
    | undefined,
  recreateExpired: boolean,
): string | null {
  if (latest === undefined || latest.loadedAt !== null || latest.downloadStatus !== 'expired') return null;
  return recreateExpired ? null : expiredMessage(latest.id, latest.expiresAt);
}

/** What to do about an earlier POST /exports with the same parameters whose outcome is unknown. */
export type UnknownOutcomeDecision =
  /** There is none. */
  | { kind: 'none' }
  /** The account's used+reserved credits did not move since: it was not billed; create. */
  | { kind: 'not_billed'; requestedAt: string }
  /** It may have been billed, and `--forget-unknown` says to create anyway. */
  | { kind: 'forgotten'; requestedAt: string }
  /** It may have been billed: refuse (`ERR_OUTCOME_UNKNOWN`). */
  | { kind: 'refuse'; message: string };

/**
 * Decides about the saved intent. `spentNow` is the account's `credits_used + credits_reserved`
 * now; an intent saved with the same figure proves the POST was not billed.
 */
export function decideUnknownOutcome(
  intent: ExportIntent | null,
  spentNow: number,
  forgetUnknown: boolean,
): UnknownOutcomeDecision {
  if (intent?.state !== 'requested') return { kind: 'none' };
  const { requestedAt, creditsSpentBefore } = intent;
  if (creditsSpentBefore !== null && creditsSpentBefore === spentNow)
    return { kind: 'not_billed', requestedAt };
  if (forgetUnknown) return { kind: 'forgotten', requestedAt };
  return {
    kind: 'refuse',
    message:
      `an earlier POST /exports with the same parameters (sent ${requestedAt}) has an unknown outcome, ` +
      `and the account's used+reserved credits moved from ${creditsSpentBefore ?? 'unknown'} to ${spentNow} since: ` +
      'it may have been billed. Its export id is unknown, so it cannot be resumed. Check the account usage; ' +
      'run again with --forget-unknown to create a new export anyway',
  };
}

/** Inputs of {@link checkEstimate}. */
export interface EstimateInput {
  /** `total` of `GET /domains` with the export's filters. */
  matchingDomains: number;
  creditsPerRow: number;
  priceSource: string;
  /** `--max-credits`, or undefined for no limit. */
  maxCredits: number | undefined;
  /** The account's available credits, or null when it has no quota. */
  availableCredits: number | null;
  /** The credit allowances now, or null when none is configured. */
  allowance?: AllowanceStatus | null;
}

/** The estimate and whether it allows creating the export. */
export type EstimateDecision =
  | { kind: 'within'; estimatedCredits: number }
  /** Over `--max-credits`: the run ends `budget_reached` (`ERR_OVER_MAX_CREDITS`), nothing spent. */
  | { kind: 'over_max_credits'; estimatedCredits: number; message: string }
  /** Over what the credit allowances leave: ends `budget_reached` (`ERR_OVER_ALLOWANCE`), nothing spent. */
  | { kind: 'over_allowance'; estimatedCredits: number; stoppedBy: AllowanceState }
  /** Over the account's available credits: `ERR_INSUFFICIENT_CREDITS`, nothing spent. */
  | { kind: 'insufficient_credits'; estimatedCredits: number; message: string };

/**
 * Estimates the export's cost and checks it against `--max-credits` first, then the credit
 * allowances, then the account. Equal to a limit is within it.
 */
export function checkEstimate(input: EstimateInput): EstimateDecision {
  const { matchingDomains, creditsPerRow, priceSource, maxCredits, availableCredits } = input;
  const estimatedCredits = estimateExportCredits(matchingDomains, creditsPerRow);
  const cost = `estimated cost ${estimatedCredits} credits (${matchingDomains} matching domains × ${formatPrice(creditsPerRow)} credits per row`;
  if (maxCredits !== undefined && estimatedCredits > maxCredits) {
    return {
      kind: 'over_max_credits',
      estimatedCredits,
      message: `${cost}, ${priceSource}) exceeds --max-credits ${maxCredits}; nothing was spent`,
    };
  }
  const allowance = input.allowance ? checkAllowance(input.allowance, estimatedCredits) : null;
  if (allowance !== null && !allowance.ok) {
    return { kind: 'over_allowance', estimatedCredits, stoppedBy: allowance.stoppedBy };
  }
  if (availableCredits !== null && estimatedCredits > availableCredits) {
    return {
      kind: 'insufficient_credits',
      estimatedCredits,
      message: `${cost}) exceeds the account's ${availableCredits} available credits; nothing was spent`,
    };
  }
  return { kind: 'within', estimatedCredits };
}
