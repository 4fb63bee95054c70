import { html } from './html.js';
import type { SafeHtml } from './html.js';

/*
 * How the dashboard writes values: dates `YYYY-MM-DD`, times `YYYY-MM-DD HH:MM:SS UTC` (the
 * mirror stores UTC; the browser's time zone is never used), whole numbers with thin grouping.
 */

/** `YYYY-MM-DD` of an ISO 8601 timestamp; `–` for none. */
export function formatDate(iso: string | null | undefined): string {
  return iso ? iso.slice(0, 10) : '–';
}

/** `YYYY-MM-DD HH:MM:SS UTC` of a stored timestamp, as a `<time>` element; `–` for none. */
export function formatTime(iso: string | null | undefined): SafeHtml {
  if (!iso) return html`–`;
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return html`${iso}`;
  const text = `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
  return html`<time datetime="${iso}">${text}</time>`;
}

/** A whole number with thousands grouped by a thin space (`1 234 567`); `–` for none. */
export function formatCount(n: number | bigint | null | undefined): string {
  if (n === null || n === undefined) return '–';
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, '\u2009');
}

/** A duration for people: `850 ms`, `42 s`, `3 m 20 s`, `2 h 5 m`, `3 d 4 h`. */
export function formatDurationMs(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} m ${s % 60} s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h} h ${m % 60} m`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

/** How long ago `iso` was at `nowMs`, e.g. `3 d 4 h ago`; `–` for none. */
export function formatAge(iso: string | null | undefined, nowMs: number): string {
  if (!iso) return '–';
  const ms = nowMs - Date.parse(iso);
  if (Number.isNaN(ms)) return '–';
  return ms < 0 ? `in ${formatDurationMs(-ms)}` : `${formatDurationMs(ms)} ago`;
}

/** The CSS class of a run or item status, from a small fixed set (never the status text itself). */
export function statusClass(status: string | null | undefined): string {
  switch (status) {
    case 'done':
    case 'completed':
    case 'active':
    case 'enriched':
    case 'added':
    case 'restored':
      return 'ok';
    case 'budget_reached':
    case 'running':
    case 'pending':
    case 'changed':
    case 'suspended':
      return 'warn';
    case 'failed':
    case 'stopped_by_service':
    case 'interrupted':
    case 'removed':
    case 'revoked':
    case 'expired':
      return 'bad';
    default:
      return 'other';
  }
}

/** A status as a badge. */
export function badge(status: string | null | undefined): SafeHtml {
  return html`<span class="badge ${statusClass(status)}">${status ?? '–'}</span>`;
}
