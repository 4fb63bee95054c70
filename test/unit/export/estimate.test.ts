import { describe, expect, it } from 'vitest';
import {
  checkEstimate,
  decideUnknownOutcome,
  estimateExportCredits,
  expiredRefusal,
  pricePerRow,
  type EstimateInput,
} from '../../../pipelines/export/estimate.js';
import type { ExportIntent } from '../../../pipelines/export/intent.js';

/*
 * The export's checks before it pays, as tables: every outcome of each pure decision, and the
 * boundaries between them (equal to a limit is within it; one credit more is over).
 */

describe('estimateExportCredits: ceil(rows × creditsPerRow), without float noise', () => {
  it.each([
    { rows: 0, price: 0.1, credits: 0 },
    { rows: 30, price: 0.1, credits: 3 }, // 0.1 × 30 = 3.0000000000000004 in floats
    { rows: 31, price: 0.1, credits: 4 },
    { rows: 1, price: 0.001, credits: 1 },
    { rows: 1000, price: 0.001, credits: 1 },
    { rows: 1001, price: 0.001, credits: 2 },
    { rows: 7, price: 2, credits: 14 },
    { rows: 100, price: 0, credits: 0 },
  ])('$rows rows at $price → $credits', ({ rows, price, credits }) => {
    expect(estimateExportCredits(rows, price)).toBe(credits);
  });
});

describe('pricePerRow', () => {
  it.each([
    {
      learned: undefined,
      guess: 0.5,
      expected: { creditsPerRow: 0.5, priceSource: 'guess (exports.creditsPerRowGuess)' },
    },
    {
      learned: { creditsPerRow: 0.2, exports: 3 },
      guess: 0.5,
      expected: { creditsPerRow: 0.2, priceSource: 'learned from 3 export(s)' },
    },
  ])('learned $learned, guess $guess', ({ learned, guess, expected }) => {
    expect(pricePerRow(learned, guess)).toEqual(expected);
  });
});

describe('expiredRefusal: the last export with the same parameters expired before it was loaded', () => {
  const expired = { id: 7, loadedAt: null, downloadStatus: 'expired', expiresAt: '2026-01-01T00:00:00.000Z' };
  // prettier-ignore
  const rows = [
    { name: 'no earlier export', latest: undefined, recreate: false, refused: false },
    { name: 'expired, not loaded', latest: expired, recreate: false, refused: true },
    { name: 'expired, not loaded, --recreate-expired', latest: expired, recreate: true, refused: false },
    { name: 'expired after it was loaded', latest: { ...expired, loadedAt: '2025-12-31T00:00:00.000Z' }, recreate: false, refused: false },
    { name: 'pending download', latest: { ...expired, downloadStatus: 'pending' }, recreate: false, refused: false },
    { name: 'no download status', latest: { ...expired, downloadStatus: null }, recreate: false, refused: false },
  ];
  it.each(rows)('$name → refused: $refused', ({ latest, recreate, refused }) => {
    const message = expiredRefusal(latest, recreate);
    if (!refused) expect(message).toBeNull();
    else
      expect(message).toBe(
        'the file of export 7 has expired (expires_at 2026-01-01T00:00:00.000Z) before it was downloaded; ' +
          'run again with --recreate-expired to pay for a new export with the same parameters',
      );
  });
});

describe('decideUnknownOutcome: an earlier POST /exports whose answer was lost', () => {
  const requested = (creditsSpentBefore: number | null): ExportIntent => ({
    state: 'requested',
    requestedAt: '2026-01-01T00:00:00.000Z',
    creditsSpentBefore,
    estimatedCredits: 30,
  });
  const created: ExportIntent = {
    state: 'created',
    exportId: 9,
    requestedAt: '2026-01-01T00:00:00.000Z',
    estimatedCredits: 30,
  };
  // prettier-ignore
  const rows: Array<{ name: string; intent: ExportIntent | null; spentNow: number; forget: boolean; kind: string }> = [
    { name: 'no intent', intent: null, spentNow: 100, forget: false, kind: 'none' },
    { name: 'a created export (its id is known)', intent: created, spentNow: 130, forget: false, kind: 'none' },
    { name: 'used+reserved unchanged', intent: requested(100), spentNow: 100, forget: false, kind: 'not_billed' },
    { name: 'unchanged, with --forget-unknown', intent: requested(100), spentNow: 100, forget: true, kind: 'not_billed' },
    { name: 'moved by one credit', intent: requested(100), spentNow: 101, forget: false, kind: 'refuse' },
    { name: 'moved down (a refund)', intent: requested(100), spentNow: 99, forget: false, kind: 'refuse' },
    { name: 'credits before unknown', intent: requested(null), spentNow: 100, forget: false, kind: 'refuse' },
    { name: 'moved, with --forget-unknown', intent: requested(100), spentNow: 130, forget: true, kind: 'forgotten' },
    { name: 'unknown before, --forget-unknown', intent: requested(null), spentNow: 0, forget: true, kind: 'forgotten' },
  ];
  it.each(rows)('$name → $kind', ({ intent, spentNow, forget, kind }) => {
    const decision = decideUnknownOutcome(intent, spentNow, forget);
    expect(decision.kind).toBe(kind);
    if (decision.kind === 'refuse') {
      expect(decision.message).toContain('(sent 2026-01-01T00:00:00.000Z) has an unknown outcome');
      expect(decision.message).toMatch(new RegExp(`moved from (100|unknown) to ${spentNow} since`));
      expect(decision.message).toContain('--forget-unknown');
    }
  });
});

describe('checkEstimate: --max-credits first, then the account', () => {
  const base: EstimateInput = {
    matchingDomains: 100,
    creditsPerRow: 0.5,
    priceSource: 'guess (exports.creditsPerRowGuess)',
    maxCredits: undefined,
    availableCredits: null,
  };
  // prettier-ignore
  const rows: Array<{ name: string; input: Partial<EstimateInput>; kind: string; estimate: number }> = [
    { name: 'no limit, no quota', input: {}, kind: 'within', estimate: 50 },
    { name: 'estimate equal to --max-credits', input: { maxCredits: 50 }, kind: 'within', estimate: 50 },
    { name: 'one over --max-credits', input: { maxCredits: 49 }, kind: 'over_max_credits', estimate: 50 },
    { name: '--max-credits 0, nothing matches', input: { maxCredits: 0, matchingDomains: 0 }, kind: 'within', estimate: 0 },
    { name: '--max-credits 0, one row', input: { maxCredits: 0, matchingDomains: 1 }, kind: 'over_max_credits', estimate: 1 },
    { name: 'estimate equal to available', input: { availableCredits: 50 }, kind: 'within', estimate: 50 },
    { name: 'one over available', input: { availableCredits: 49 }, kind: 'insufficient_credits', estimate: 50 },
    { name: 'nothing available, nothing to pay', input: { availableCredits: 0, matchingDomains: 0 }, kind: 'within', estimate: 0 },
    { name: 'over both: --max-credits first (budget_reached)', input: { maxCredits: 10, availableCredits: 10 }, kind: 'over_max_credits', estimate: 50 },
    { name: 'within --max-credits, over available', input: { maxCredits: 1000, availableCredits: 10 }, kind: 'insufficient_credits', estimate: 50 },
    { name: 'a fractional estimate rounds up', input: { matchingDomains: 3, creditsPerRow: 0.34 }, kind: 'within', estimate: 2 },
  ];
  it.each(rows)('$name → $kind', ({ input, kind, estimate }) => {
    const decision = checkEstimate({ ...base, ...input });
    expect(decision.kind).toBe(kind);
    expect(decision.estimatedCredits).toBe(estimate);
  });

  it('names the figures in its messages', () => {
    const over = checkEstimate({ ...base, creditsPerRow: 1 / 3, matchingDomains: 30, maxCredits: 5 });
    expect(over).toEqual({
      kind: 'over_max_credits',
      estimatedCredits: 10,
      message:
        'estimated cost 10 credits (30 matching domains × 0.3333 credits per row, guess (exports.creditsPerRowGuess)) ' +
        'exceeds --max-credits 5; nothing was spent',
    });
    const poor = checkEstimate({ ...base, availableCredits: 20 });
    expect(poor).toEqual({
      kind: 'insufficient_credits',
      estimatedCredits: 50,
      message:
        "estimated cost 50 credits (100 matching domains × 0.5 credits per row) exceeds the account's 20 available credits; nothing was spent",
    });
  });
});
