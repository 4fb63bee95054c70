import type { Mirror } from '../mirror/database.js';
import { inImmediateTransaction } from '../mirror/database.js';
import { committedCredits } from '../mirror/store/allowance.js';
import { isoFromMs } from '../util/time.js';

/*
 * Credit allowances (docs/credits.md): `credits.maxPerDay` and `credits.maxPerMonth` cap what
 * every run of every process sharing the mirror may spend per UTC calendar day and month. A
 * budget is per invocation; an allowance is shared, so it is counted from the mirror (ledger plus
 * paid requests in flight or unknown, store/allowance.ts) and checked in the same write
 * transaction that records the request's intent, which makes the check atomic across processes.
 * The decisions are pure functions of the limits, the usage and the clock.
 */

/** `credits.maxPerDay` / `credits.maxPerMonth`; null is no allowance. */
export interface AllowanceLimits {
  maxPerDay: number | null;
  maxPerMonth: number | null;
}

/** The config key of an allowance, as summaries and messages name it. */
export type AllowanceKey = 'credits.maxPerDay' | 'credits.maxPerMonth';

/** The UTC day and month that contain a moment, as ISO 8601 bounds (start inclusive). */
export interface AllowanceWindows {
  dayStart: string;
  /** Start of the next day: when the day's allowance resets. */
  dayEnd: string;
  monthStart: string;
  /** Start of the next month. */
  monthEnd: string;
}

/** Credits committed in each window (settled plus unsettled). */
export interface AllowanceUsage {
  day: number;
  month: number;
}

/** One allowance at one moment. */
export interface AllowanceState {
  key: AllowanceKey;
  /** What it allows per window. */
  allows: number;
  /** Committed in the current window. */
  used: number;
  /** `max(0, allows − used)`. */
  remaining: number;
  /** When the window ends and the allowance starts again from 0 (ISO 8601 UTC). */
  resetsAt: string;
}

/** Both allowances at one moment; `remaining` is the smaller one's, null with no allowance. */
export interface AllowanceStatus {
  day: AllowanceState | null;
  month: AllowanceState | null;
  remaining: number | null;
}

/** The UTC day and month containing `nowMs`. */
export function allowanceWindows(nowMs: number): AllowanceWindows {
  const now = new Date(nowMs);
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const d = now.getUTCDate();
  return {
    dayStart: isoFromMs(Date.UTC(y, m, d)),
    dayEnd: isoFromMs(Date.UTC(y, m, d + 1)),
    monthStart: isoFromMs(Date.UTC(y, m, 1)),
    monthEnd: isoFromMs(Date.UTC(y, m + 1, 1)),
  };
}

/** Both allowances given the usage of their windows. */
export function allowanceStatus(
  limits: AllowanceLimits,
  usage: AllowanceUsage,
  windows: AllowanceWindows,
): AllowanceStatus {
  const state = (key: AllowanceKey, allows: number | null, used: number, resetsAt: string) =>
    allows === null ? null : { key, allows, used, remaining: Math.max(0, allows - used), resetsAt };
  const day = state('credits.maxPerDay', limits.maxPerDay, usage.day, windows.dayEnd);
  const month = state('credits.maxPerMonth', limits.maxPerMonth, usage.month, windows.monthEnd);
  const remaining = [day, month].reduce<number | null>(
    (least, s) => (s === null ? least : least === null ? s.remaining : Math.min(least, s.remaining)),
    null,
  );
  return { day, month, remaining };
}

/**
 * Whether `cost` more credits fit both allowances. Equal to an allowance is within it. When both
 * refuse, the one that resets later is named: waiting for the other would not help.
 */
export function checkAllowance(
  status: AllowanceStatus,
  cost: number,
): { ok: true } | { ok: false; stoppedBy: AllowanceState } {
  const refusing = [status.month, status.day].filter(
    (s): s is AllowanceState => s !== null && s.used + cost > s.allows,
  );
  return refusing.length === 0 ? { ok: true } : { ok: false, stoppedBy: refusing[0]! };
}

/** One line for people: `credits.maxPerDay (500 credits) …: 500 committed; resets at …`. */
export function allowanceMessage(state: AllowanceState, cost: number): string {
  const period = state.key === 'credits.maxPerDay' ? 'today (UTC)' : 'this month (UTC)';
  return (
    `${state.key} allows ${state.allows} credits and ${state.used} are spent or in flight ${period}; ` +
    `${cost} more would exceed it. It resets at ${state.resetsAt}`
  );
}

/** `credits.maxPerDay leaves 120 of 500 (resets 2026-11-25T00:00:00.000Z); …` for people. */
export function describeAllowance(status: AllowanceStatus): string {
  const part = (s: AllowanceState) => `${s.key} leaves ${s.remaining} of ${s.allows} (resets ${s.resetsAt})`;
  const parts = [status.day, status.month].filter((s): s is AllowanceState => s !== null).map(part);
  return parts.length === 0 ? 'no credit allowance is set' : `allowances: ${parts.join('; ')}`;
}

/** The allowances as `status`, `--dry-run` and the export estimate report them (no lock taken). */
export function readAllowance(mirror: Mirror, limits: AllowanceLimits, nowMs: number): AllowanceStatus {
  const windows = allowanceWindows(nowMs);
  return allowanceStatus(limits, usageOf(mirror, windows), windows);
}

/** Whether any allowance is configured. */
export function hasAllowance(limits: AllowanceLimits): boolean {
  return limits.maxPerDay !== null || limits.maxPerMonth !== null;
}

/**
 * Runs `record` (which writes the paid request's intent) only when `cost` fits both allowances,
 * in one immediate write transaction with the check, so two processes can never both take the
 * last credits. Without allowances it only runs `record`.
 */
export function reserveWithinAllowance<T>(
  mirror: Mirror,
  limits: AllowanceLimits,
  nowMs: number,
  cost: number,
  record: () => T,
): { ok: true; value: T } | { ok: false; stoppedBy: AllowanceState } {
  if (!hasAllowance(limits)) return { ok: true, value: record() };
  return inImmediateTransaction(mirror, () => {
    const status = readAllowance(mirror, limits, nowMs);
    const check = checkAllowance(status, cost);
    if (!check.ok) return check;
    return { ok: true as const, value: record() };
  });
}

function usageOf(mirror: Mirror, windows: AllowanceWindows): AllowanceUsage {
  const day = committedCredits(mirror, windows.dayStart);
  const month = windows.monthStart === windows.dayStart ? day : committedCredits(mirror, windows.monthStart);
  return { day: day.settled + day.unsettled, month: month.settled + month.unsettled };
}
