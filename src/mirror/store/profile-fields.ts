import type { DomainProfileInput } from '../inputs.js';
import type { KeyedChildTable } from './child-history.js';

/*
 * Where each field of a full profile lives in the mirror: the sections kept as JSON in
 * `domain_sections`, the keyed child tables (licences, payment methods) with their columns, and
 * what is left for `domains.profile_extra` (migration 0010). The writer is profiles.ts.
 */

/** The profile sections stored as JSON in `domain_sections` (fields not described, docs/service-api.md). */
export const PROFILE_SECTIONS = ['game_providers', 'affiliate_programs', 'geo', 'related_domains'] as const;

export interface LicenceRow {
  jurisdiction: string;
  license_number: string;
  status: string | null;
  source_url: string | null;
  first_seen_at: string | null;
  last_confirmed_at: string | null;
}

export interface PaymentMethodRow {
  normalized_name: string;
  category: string | null;
  confidence: string | null;
  first_seen_at: string | null;
  last_confirmed_at: string | null;
}

/** Licences: keyed by jurisdiction and number; `change_log` keeps the status (as the 0001 triggers did). */
export const LICENCES: KeyedChildTable<LicenceRow> = {
  table: 'licenses',
  keyColumns: ['jurisdiction', 'license_number'],
  comparedColumns: ['status', 'source_url', 'first_seen_at', 'last_confirmed_at'],
  timestampColumns: ['first_seen_at', 'last_confirmed_at'],
  itemKey: (l) => `${l.jurisdiction}:${l.license_number}`,
  loggedValue: (l) => l.status,
};

/** Payment methods: keyed by normalised name; `change_log` keeps `category/confidence` (as the 0001 triggers did). */
export const PAYMENT_METHODS: KeyedChildTable<PaymentMethodRow> = {
  table: 'payment_methods',
  keyColumns: ['normalized_name'],
  comparedColumns: ['category', 'confidence', 'first_seen_at', 'last_confirmed_at'],
  timestampColumns: ['first_seen_at', 'last_confirmed_at'],
  itemKey: (m) => m.normalized_name,
  loggedValue: (m) => `${m.category ?? ''}/${m.confidence ?? ''}`,
};

/** Fields of a profile stored in their own columns or rows, by object (`profileExtra` leaves them out). */
const STORED_FIELDS = {
  profile: new Set([
    'domain',
    'domain_normalized',
    'status',
    'last_enriched_at',
    'operator',
    'brand',
    'meta',
    'licenses',
    'payment_methods',
    ...PROFILE_SECTIONS,
  ]),
  operator: new Set(['name', 'legal_entity_name', 'country_of_incorporation']),
  brand: new Set(['name', 'slug']),
  meta: new Set(['freshness_age_seconds', 'served_from_cache', 'billable', 'observed_at']),
  // The columns of their tables, so a column added there is left out of profile_extra too.
  licenses: new Set<string>([...LICENCES.keyColumns, ...LICENCES.comparedColumns]),
  payment_methods: new Set<string>([...PAYMENT_METHODS.keyColumns, ...PAYMENT_METHODS.comparedColumns]),
} as const;

/**
 * What of `value` the mirror has no column for: its fields not in `stored` when it is an object
 * (undefined when there are none), the value itself when it is something else but null.
 */
function extraFields(value: unknown, stored: ReadonlySet<string>): unknown {
  if (value === null || value === undefined) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) return value;
  let extra: Record<string, unknown> | undefined;
  for (const [k, v] of Object.entries(value)) {
    if (!stored.has(k)) (extra ??= {})[k] = v;
  }
  return extra;
}

/** The child table of each profile list whose items profile_extra names by their key. */
const LISTS = { licenses: LICENCES, payment_methods: PAYMENT_METHODS } as const;

/**
 * The items of a licence or payment-method list that have fields their table has no column for,
 * each as its key fields (`keys`, so it can be told which row it belongs to) and those fields.
 * Undefined when no item has any: the usual case.
 */
function listExtras(
  items: unknown,
  keys: readonly string[],
  stored: ReadonlySet<string>,
): Array<Record<string, unknown>> | undefined {
  if (!Array.isArray(items)) return undefined;
  let extras: Array<Record<string, unknown>> | undefined;
  for (const item of items) {
    if (item === null || typeof item !== 'object') continue;
    let extra: Record<string, unknown> | undefined;
    for (const k in item) {
      if (stored.has(k)) continue;
      if (extra === undefined) {
        extra = {};
        for (const key of keys) extra[key] = (item as Record<string, unknown>)[key];
      }
      extra[k] = (item as Record<string, unknown>)[k];
    }
    if (extra !== undefined) (extras ??= []).push(extra);
  }
  return extras;
}

/**
 * What a profile has beyond what the mirror stores in columns and rows, for `profile_extra`
 * (migration 0010): unknown top-level fields, unknown fields of `operator`, `brand` and `meta`
 * (under those names; the value whole when it is not an object), and under `licenses` and
 * `payment_methods` the items with fields their table has no column for, each as its key fields
 * and those fields (listExtras). `{}` when there is nothing else: the usual case. Timestamps are
 * stored normalised and null and absent alike as NULL, so neither spelling is kept.
 */
export function profileExtra(p: DomainProfileInput): Record<string, unknown> {
  const extra: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(p)) {
    if (!STORED_FIELDS.profile.has(k)) extra[k] = v;
  }
  for (const k of ['operator', 'brand', 'meta'] as const) {
    const fields = extraFields(p[k], STORED_FIELDS[k]);
    if (fields !== undefined) extra[k] = fields;
  }
  for (const k of ['licenses', 'payment_methods'] as const) {
    const items = listExtras(p[k], LISTS[k].keyColumns, STORED_FIELDS[k]);
    if (items !== undefined) extra[k] = items;
  }
  return extra;
}
