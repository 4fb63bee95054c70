import { z } from 'zod';
import { ProtocolError } from './errors.js';

/**
 * Response schemas of the Domain Enrichment Service (docs/service-api.md "Resources and their
 * fields") and the types inferred from them. Wire names stay snake_case, as the service sends them.
 *
 * Tolerance rules, applied everywhere:
 * - Unknown fields are kept, so a newer service loses nothing on its way to the mirror: the
 *   schemas check only the fields they name ({@link fields}), and {@link parseWire} returns the
 *   parsed body itself, unknown fields included. Nothing here transforms a value, so the body is
 *   exactly what the schema accepted. (`z.looseObject` would keep them too, but copying every
 *   unknown key made validating a profile about 1.6 times as costly.)
 * - Enum-like fields accept any string; their types list the known values plus `string`.
 * - Timestamps must be ISO 8601-like (offsets such as `+00:00` and missing milliseconds are
 *   accepted) but are NOT normalised here: the raw string is passed on and the mirror normalises
 *   (docs/contract.md "Behaviour details"). Use `normalizeTimestamp` from `src/util/time.js`.
 * - Optional parts may be `null` or missing (`nullish`), since realistic data has gaps; the
 *   fields a caller cannot do without (`domain_normalized` of a search item,
 *   `enrichment_run_id` of a 202, ids and statuses) are required, and their absence is a
 *   {@link ProtocolError} naming the endpoint and field path.
 */

/**
 * An object schema that checks the fields it names and lets others through. At run time it is
 * `z.object` (its output drops unknown keys, but {@link parseWire} returns the input); its type
 * is `z.looseObject`'s, because the value a caller gets does carry the unknown fields.
 */
function fields<T extends z.core.$ZodLooseShape>(shape: T): z.ZodObject<T, z.core.$loose> {
  return z.object(shape) as unknown as z.ZodObject<T, z.core.$loose>;
}

/** A string-literal union that also admits values not known today. */
export type Known<T extends string> = T | (string & {});

function known<const T extends readonly string[]>(_values: T) {
  // The values document the type; any string is accepted at run time (unknown enum values).
  // A type-only cast, not a `.transform()`: a transform makes every such field a pipe, which
  // about doubled the cost of validating a profile (the client benchmark, docs/benchmarks.md).
  return z.string() as unknown as z.ZodType<Known<T[number]>, string>;
}

/**
 * ISO 8601 date-time as the service may spell it: `Z`, `+00:00`, `+0000` or no offset, with or
 * without seconds and fraction digits. Field ranges are checked by the pattern; a regex instead
 * of `normalizeTimestamp` keeps validation cheap on the paging path. The mirror normalises with
 * `normalizeTimestamp`, which stores every instant this accepts, a leap second included
 * (test/unit/api/wire.test.ts checks both on the same values); a day its month does not have,
 * such as June 31st, passes this pattern and is refused there, with the field named.
 */
const ISO_TIMESTAMP =
  /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])(?:[T ](?:[01]\d|2[0-3]):[0-5]\d(?::(?:[0-5]\d|60)(?:\.\d+)?)?)?(?:[Zz]|[+-](?:[01]\d|2[0-3]):?[0-5]\d)?$/;

/** An ISO 8601-like timestamp string, kept as sent. */
export const TimestampSchema = z.string().regex(ISO_TIMESTAMP, { message: 'expected an ISO 8601 timestamp' });

const optionalString = z.string().nullish();
const optionalTimestamp = TimestampSchema.nullish();
const optionalInt = z.number().int().nullish();
const optionalBool = z.boolean().nullish();

/** Licence jurisdictions used as filter values (docs/service-api.md "Licence"). */
export const JURISDICTIONS = ['mga', 'ukgc', 'curacao', 'anjouan'] as const;
/** Payment categories (docs/service-api.md "Payment method"). */
export const PAYMENT_CATEGORIES = [
  'card',
  'crypto',
  'ewallet',
  'bank_transfer',
  'open_banking',
  'local_apm',
] as const;
/** Known enrichment run statuses (docs/service-api.md "States and lifecycles"). */
export const RUN_STATUSES = ['pending', 'completed', 'failed'] as const;
/** Profile sections that `include[]` can request (docs/service-api.md "GET /domains/:domain"). */
export const PROFILE_SECTIONS = [
  'licenses',
  'payment_methods',
  'game_providers',
  'affiliate_programs',
  'geo',
  'related_domains',
] as const;
/** A profile section name. */
export type ProfileSection = Known<(typeof PROFILE_SECTIONS)[number]>;

/**
 * Envelope of every success response: `success`, `data`, optional `message`.
 *
 * Compiled (`z.compile`, zod 4.5+): a body that passes takes a generated validator with no
 * per-field dispatch, and one that does not falls back to zod's own parser, so the issues and
 * error messages are the same as uncompiled. This is the client's hot path (every listing page
 * and every profile of a sync): a profile of the simulator validated in 1.3–1.5 µs against
 * 2.9–3.6 µs uncompiled, a listing page of 50 in 2.8–2.9 against 5.9–6.6 µs (Node 24, 2 Intel
 * Xeon cores, 2026-11-27, three rounds of 100,000 in one process). Compile the final schema:
 * one derived from a compiled schema (`.extend()`, `.refine()`) is not compiled.
 */
function envelope<T extends z.ZodType>(data: T) {
  return z.compile(
    fields({
      // The spec says `success` is true on success; its absence (or a null) is tolerated, the
      // status decides. A null is treated like a missing value here as for every optional field.
      success: z.boolean().nullish(),
      message: z.string().nullish(),
      data,
    }),
  );
}

/** Item of `GET /domains` (docs/service-api.md "Domain summary"). */
export const DomainSummarySchema = fields({
  domain_normalized: z.string(),
  company_name: optionalString,
  last_enriched_at: optionalTimestamp,
});
/** Item of `GET /domains`. */
export type DomainSummary = z.infer<typeof DomainSummarySchema>;

// One schema per response shape, written in the same style by design (fields, tolerant enums).
/** `data` of `GET /domains`. */
export const DomainSearchDataSchema = fields({
  domains: z.array(DomainSummarySchema),
  total: z.number().int(),
  page: z.number().int(),
  per_page: z.number().int(),
});
/** One page of `GET /domains`: `{ domains, total, page, per_page }` plus unknown fields. */
export type DomainSearchPage = z.infer<typeof DomainSearchDataSchema>;
/** Response envelope of `GET /domains`. */
export const DomainSearchResponseSchema = envelope(DomainSearchDataSchema);

/** `operator` of a profile; `legal_entity_name` may be null in real data. */
export const OperatorSchema = fields({
  name: optionalString,
  legal_entity_name: optionalString,
  country_of_incorporation: optionalString,
});
/** `brand` of a profile. */
export const BrandSchema = fields({ name: optionalString, slug: optionalString });

/** A licence (docs/service-api.md "Licence"); only `status` `active` is documented, others accepted. */
export const LicenceSchema = fields({
  jurisdiction: known(JURISDICTIONS),
  license_number: z.string(),
  status: known(['active'] as const).nullish(),
  source_url: optionalString,
  first_seen_at: optionalTimestamp,
  last_confirmed_at: optionalTimestamp,
});
/** A licence of a profile. */
export type Licence = z.infer<typeof LicenceSchema>;

/** A payment method (docs/service-api.md "Payment method"); `confidence` other than `high` accepted. */
export const PaymentMethodSchema = fields({
  normalized_name: z.string(),
  category: known(PAYMENT_CATEGORIES).nullish(),
  confidence: known(['high'] as const).nullish(),
  first_seen_at: optionalTimestamp,
  last_confirmed_at: optionalTimestamp,
});
/** A payment method of a profile. */
export type PaymentMethod = z.infer<typeof PaymentMethodSchema>;

/** `meta` of a profile. */
export const ProfileMetaSchema = fields({
  // docs/service-api.md "Domain profile": an integer. A fraction is refused here, naming the field, rather
  // than later by the mirror's integer column with a less precise path.
  freshness_age_seconds: optionalInt,
  served_from_cache: optionalBool,
  billable: optionalBool,
  observed_at: optionalTimestamp,
});

/** Domain profile (docs/service-api.md "Domain profile"). */
export const DomainProfileSchema = fields({
  domain: optionalString,
  domain_normalized: z.string(),
  status: known(['enriched'] as const).nullish(),
  last_enriched_at: optionalTimestamp,
  operator: OperatorSchema.nullish(),
  brand: BrandSchema.nullish(),
  licenses: z.array(LicenceSchema).nullish(),
  payment_methods: z.array(PaymentMethodSchema).nullish(),
  // Fields of these four sections are not described (docs/service-api.md); kept as unknown JSON.
  game_providers: z.unknown().optional(),
  affiliate_programs: z.unknown().optional(),
  geo: z.unknown().optional(),
  related_domains: z.unknown().optional(),
  meta: ProfileMetaSchema.nullish(),
});
/** A domain profile, unknown fields kept. */
export type DomainProfile = z.infer<typeof DomainProfileSchema>;
/** Response envelope of `GET /domains/:domain`. */
export const DomainProfileResponseSchema = envelope(DomainProfileSchema);

/** `data` of a 200 (cached) `POST /enrichments`. */
export const EnrichmentCachedDataSchema = fields({
  domain: z.string(),
  status: known(['enriched'] as const).nullish(),
  last_enriched_at: optionalTimestamp,
  meta: fields({ served_from_cache: optionalBool, billable: optionalBool }).nullish(),
});
/** Response envelope of a 200 `POST /enrichments`. */
export const EnrichmentCachedResponseSchema = envelope(EnrichmentCachedDataSchema);

/** `data` of a 202 (new run) `POST /enrichments`. */
export const EnrichmentStartedDataSchema = fields({
  enrichment_run_id: z.number().int(),
  poll_url: z.string(),
  cached: optionalBool,
  billable: optionalBool,
});
/** Response envelope of a 202 `POST /enrichments`. */
export const EnrichmentStartedResponseSchema = envelope(EnrichmentStartedDataSchema);

/** An enrichment run (docs/service-api.md "Enrichment run"); unknown statuses accepted. */
export const EnrichmentRunSchema = fields({
  id: z.number().int(),
  status: known(RUN_STATUSES),
  domain: optionalString,
  strategy: optionalString,
  started_at: optionalTimestamp,
  completed_at: optionalTimestamp,
  enrichment: fields({
    domain_normalized: optionalString,
    status: optionalString,
    last_enriched_at: optionalTimestamp,
  }).nullish(),
  error_details: fields({ error: optionalString, error_type: optionalString }).nullish(),
});
/** An enrichment run in any state. */
export type EnrichmentRun = z.infer<typeof EnrichmentRunSchema>;
/** Response envelope of `GET /enrichment_runs/:id`. */
export const EnrichmentRunResponseSchema = envelope(EnrichmentRunSchema);

/** `data` of a 202 `POST /exports`. */
export const ExportCreatedDataSchema = fields({
  export_id: z.number().int(),
  poll_url: z.string(),
});
/** Response envelope of `POST /exports`. */
export const ExportCreatedResponseSchema = envelope(ExportCreatedDataSchema);

/**
 * An export (docs/service-api.md "Export"). Only the completed shape is documented; a pending or
 * failed export's shape is not, so everything but `id` and `status` is optional.
 */
export const ExportInfoSchema = fields({
  id: z.number().int(),
  status: known(['completed'] as const),
  format: optionalString,
  download_url: optionalString,
  total_rows: optionalInt,
  credits_used: optionalInt,
  expires_at: optionalTimestamp,
});
/** An export in any state. */
export type ExportInfo = z.infer<typeof ExportInfoSchema>;
/** Response envelope of `GET /exports/:id`. */
export const ExportInfoResponseSchema = envelope(ExportInfoSchema);

/** The account (docs/service-api.md "Account"); `credits_granted` null means no quota. */
export const AccountSchema = fields({
  plan: z.string(),
  credits_granted: z.number().int().nullable(),
  credits_used: z.number().int(),
  credits_reserved: z.number().int(),
  available_credits: z.number().int(),
});
/** The account's plan and credit balance. */
export type Account = z.infer<typeof AccountSchema>;
/** Response envelope of `GET /account`. */
export const AccountResponseSchema = envelope(AccountSchema);

/** Envelope of the company endpoints, whose payloads are "not shown": `data` is kept as is. */
export const CompanyResponseSchema = fields({
  success: z.boolean().optional(),
  message: z.string().nullish(),
  data: z.unknown().optional(),
});
/** A company endpoint's response: the envelope with `data` unvalidated. */
export type CompanyResponse = z.infer<typeof CompanyResponseSchema>;

function describe(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number' && !Number.isInteger(value)) return 'non-integer number';
  if (typeof value === 'string') return value.length > 40 ? 'string' : `string ${JSON.stringify(value)}`;
  return typeof value;
}

/** `['data', 'domains', 3, 'x']` → `data.domains[3].x`. */
export function formatFieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out || '(body)';
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current: unknown = root;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

/**
 * Parses a response body's text. A text that is not JSON is a {@link ProtocolError} of kind
 * `json`: usually a transport fault (a body cut short with a consistent Content-Length, or garbled
 * bytes), so it is retryable for safe requests.
 */
export function parseJsonText(text: string, method: string, path: string, status?: number): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new ProtocolError(
      { method, path, status, body: text, cause: error },
      'json',
      `response is not valid JSON (${text.length} chars)`,
    );
  }
}

/**
 * Validates a parsed body against `schema`; on mismatch throws a {@link ProtocolError} whose
 * message names the endpoint and the first offending field, e.g.
 * `GET /domains: data.domains[3].domain_normalized: expected string, got missing`.
 * `path` should be given without its query string (errors name the endpoint, not the page).
 */
export function parseWire<T extends z.ZodType>(
  schema: T,
  body: unknown,
  method: string,
  path: string,
  status?: number,
): z.output<T> {
  const result = schema.safeParse(body);
  // The body itself, not `result.data`: the schemas strip the fields they do not name from
  // their output, and those must reach the caller (see the tolerance rules above).
  if (result.success) return body as z.output<T>;
  const issue = result.error.issues[0];
  const fieldPath = formatFieldPath(issue?.path ?? []);
  let what = issue?.message ?? 'invalid';
  if (issue?.code === 'invalid_type') {
    what = `expected ${issue.expected === 'int' ? 'integer' : issue.expected}, got ${describe(valueAt(body, issue.path))}`;
  }
  const more = result.error.issues.length > 1 ? ` (+${result.error.issues.length - 1} more)` : '';
  throw new ProtocolError(
    { method, path, status, body, cause: result.error },
    'schema',
    `${fieldPath}: ${what}${more}`,
    fieldPath,
  );
}
