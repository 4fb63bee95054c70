/**
 * Every resource and field of docs/service-api.md ("Resources and their fields", "Endpoints"), as the
 * table the bad-input matrix is generated from.
 *
 * Presence is decided from docs/service-api.md and docs/contract.md, not from the client's code:
 * - `required`: the field identifies the record (ids, keys such as `domain_normalized`,
 *   `jurisdiction` + `license_number`, `normalized_name`) or decides what the client does next
 *   (statuses, `poll_url`, `enrichment_run_id`, `export_id`, paging `total`/`page`/`per_page`,
 *   the account's credit figures that budgets are computed from). The account is all required:
 *   the spec spells out its one nullable field (`credits_granted`, "integer or null").
 * - `nullable`: required, but `null` is a documented value (`credits_granted`).
 * - `optional`: descriptive; a missing or null value is stored as NULL. Sections of a profile are
 *   "present when section requested" and run/export fields are present only in some states, so
 *   those are optional too.
 * Wrong types are errors naming the field everywhere, except the four profile sections whose
 * fields are not described (`any`): any JSON is kept as sent. Unseen enum values are tolerated
 * (docs/service-api.md "Conventions") and kept verbatim. An extra field is tolerated on every object.
 */

/** Declared type of a field (the "type" column of docs/service-api.md). */
export type FieldType = 'string' | 'timestamp' | 'integer' | 'boolean' | 'object' | 'array' | 'any';

/** How the service's description (and docs/contract.md) treats the field's absence. */
export type Presence = 'required' | 'nullable' | 'optional';

/** One field of a resource. `path` is relative to the resource's root object. */
export interface SpecField {
  path: string;
  type: FieldType;
  presence: Presence;
  /** Values seen in the spec; the matrix adds an unseen one. */
  known?: readonly string[];
}

/** One resource (or nested object) of the spec, as served by one endpoint. */
export interface SpecResource {
  /** Short name used in test names. */
  name: string;
  /** The endpoint that serves it, as error messages name it. */
  endpoint: string;
  /** Where the resource sits in the response body, e.g. `data` or `data.licenses[0]`. */
  root: string;
  fields: readonly SpecField[];
  /** Objects (relative to root, '' = root) that get an extra, unknown field. */
  objects: readonly string[];
}

const JURISDICTIONS = ['mga', 'ukgc', 'curacao', 'anjouan'] as const;
const PAYMENT_CATEGORIES = [
  'card',
  'crypto',
  'ewallet',
  'bank_transfer',
  'open_banking',
  'local_apm',
] as const;

/** docs/service-api.md "Resources and their fields" + "Endpoints", success bodies. */
export const SPEC_RESOURCES: readonly SpecResource[] = [
  {
    name: 'success envelope',
    endpoint: 'GET /account',
    root: '',
    fields: [
      { path: 'success', type: 'boolean', presence: 'optional' },
      // `message` is only on the two 202 answers: see the two "(202)" resources below.
      { path: 'data', type: 'object', presence: 'required' },
    ],
    objects: [''],
  },
  {
    name: 'account',
    endpoint: 'GET /account',
    root: 'data',
    fields: [
      { path: 'plan', type: 'string', presence: 'required' },
      { path: 'credits_granted', type: 'integer', presence: 'nullable' },
      { path: 'credits_used', type: 'integer', presence: 'required' },
      { path: 'credits_reserved', type: 'integer', presence: 'required' },
      { path: 'available_credits', type: 'integer', presence: 'required' },
    ],
    objects: [''],
  },
  {
    name: 'domain listing page',
    endpoint: 'GET /domains',
    root: 'data',
    fields: [
      { path: 'domains', type: 'array', presence: 'required' },
      { path: 'total', type: 'integer', presence: 'required' },
      { path: 'page', type: 'integer', presence: 'required' },
      { path: 'per_page', type: 'integer', presence: 'required' },
    ],
    objects: [''],
  },
  {
    name: 'domain summary',
    endpoint: 'GET /domains',
    root: 'data.domains[1]',
    fields: [
      { path: 'domain_normalized', type: 'string', presence: 'required' },
      { path: 'company_name', type: 'string', presence: 'optional' },
      { path: 'last_enriched_at', type: 'timestamp', presence: 'optional' },
    ],
    objects: [''],
  },
  {
    name: 'domain profile',
    endpoint: 'GET /domains/:domain',
    root: 'data',
    fields: [
      { path: 'domain', type: 'string', presence: 'optional' },
      { path: 'domain_normalized', type: 'string', presence: 'required' },
      { path: 'status', type: 'string', presence: 'optional', known: ['enriched'] },
      { path: 'last_enriched_at', type: 'timestamp', presence: 'optional' },
      { path: 'operator', type: 'object', presence: 'optional' },
      { path: 'operator.name', type: 'string', presence: 'optional' },
      { path: 'operator.legal_entity_name', type: 'string', presence: 'optional' },
      { path: 'operator.country_of_incorporation', type: 'string', presence: 'optional' },
      { path: 'brand', type: 'object', presence: 'optional' },
      { path: 'brand.name', type: 'string', presence: 'optional' },
      { path: 'brand.slug', type: 'string', presence: 'optional' },
      { path: 'licenses', type: 'array', presence: 'optional' },
      { path: 'payment_methods', type: 'array', presence: 'optional' },
      { path: 'game_providers', type: 'any', presence: 'optional' },
      { path: 'affiliate_programs', type: 'any', presence: 'optional' },
      { path: 'geo', type: 'any', presence: 'optional' },
      { path: 'related_domains', type: 'any', presence: 'optional' },
      { path: 'meta', type: 'object', presence: 'optional' },
      { path: 'meta.freshness_age_seconds', type: 'integer', presence: 'optional' },
      { path: 'meta.served_from_cache', type: 'boolean', presence: 'optional' },
      { path: 'meta.billable', type: 'boolean', presence: 'optional' },
      { path: 'meta.observed_at', type: 'timestamp', presence: 'optional' },
    ],
    objects: ['', 'operator', 'brand', 'meta'],
  },
  {
    name: 'licence',
    endpoint: 'GET /domains/:domain',
    root: 'data.licenses[0]',
    fields: [
      { path: 'jurisdiction', type: 'string', presence: 'required', known: JURISDICTIONS },
      { path: 'license_number', type: 'string', presence: 'required' },
      { path: 'status', type: 'string', presence: 'optional', known: ['active'] },
      { path: 'source_url', type: 'string', presence: 'optional' },
      { path: 'first_seen_at', type: 'timestamp', presence: 'optional' },
      { path: 'last_confirmed_at', type: 'timestamp', presence: 'optional' },
    ],
    objects: [''],
  },
  {
    name: 'payment method',
    endpoint: 'GET /domains/:domain',
    root: 'data.payment_methods[0]',
    fields: [
      { path: 'normalized_name', type: 'string', presence: 'required' },
      { path: 'category', type: 'string', presence: 'optional', known: PAYMENT_CATEGORIES },
      { path: 'confidence', type: 'string', presence: 'optional', known: ['high'] },
      { path: 'first_seen_at', type: 'timestamp', presence: 'optional' },
      { path: 'last_confirmed_at', type: 'timestamp', presence: 'optional' },
    ],
    objects: [''],
  },
  {
    name: 'enrichment cached (200)',
    endpoint: 'POST /enrichments',
    root: 'data',
    fields: [
      { path: 'domain', type: 'string', presence: 'required' },
      { path: 'status', type: 'string', presence: 'optional', known: ['enriched'] },
      { path: 'last_enriched_at', type: 'timestamp', presence: 'optional' },
      { path: 'meta', type: 'object', presence: 'optional' },
      { path: 'meta.served_from_cache', type: 'boolean', presence: 'optional' },
      { path: 'meta.billable', type: 'boolean', presence: 'optional' },
    ],
    objects: ['', 'meta'],
  },
  {
    name: 'enrichment started (202)',
    endpoint: 'POST /enrichments',
    root: '',
    fields: [
      { path: 'message', type: 'string', presence: 'optional' },
      { path: 'data.enrichment_run_id', type: 'integer', presence: 'required' },
      { path: 'data.poll_url', type: 'string', presence: 'required' },
      { path: 'data.cached', type: 'boolean', presence: 'optional' },
      { path: 'data.billable', type: 'boolean', presence: 'optional' },
    ],
    objects: ['data'],
  },
  {
    name: 'enrichment run (completed)',
    endpoint: 'GET /enrichment_runs/:id',
    root: 'data',
    fields: [
      { path: 'id', type: 'integer', presence: 'required' },
      { path: 'status', type: 'string', presence: 'required', known: ['pending', 'completed', 'failed'] },
      { path: 'domain', type: 'string', presence: 'optional' },
      { path: 'strategy', type: 'string', presence: 'optional', known: ['full'] },
      { path: 'started_at', type: 'timestamp', presence: 'optional' },
      { path: 'completed_at', type: 'timestamp', presence: 'optional' },
      { path: 'enrichment', type: 'object', presence: 'optional' },
      { path: 'enrichment.domain_normalized', type: 'string', presence: 'optional' },
      { path: 'enrichment.status', type: 'string', presence: 'optional', known: ['enriched'] },
      { path: 'enrichment.last_enriched_at', type: 'timestamp', presence: 'optional' },
    ],
    objects: ['', 'enrichment'],
  },
  {
    name: 'enrichment run (failed)',
    endpoint: 'GET /enrichment_runs/:id',
    root: 'data',
    fields: [
      { path: 'error_details', type: 'object', presence: 'optional' },
      { path: 'error_details.error', type: 'string', presence: 'optional' },
      { path: 'error_details.error_type', type: 'string', presence: 'optional', known: ['timeout'] },
    ],
    objects: ['error_details'],
  },
  {
    name: 'export created (202)',
    endpoint: 'POST /exports',
    root: '',
    fields: [
      { path: 'message', type: 'string', presence: 'optional' },
      { path: 'data.export_id', type: 'integer', presence: 'required' },
      { path: 'data.poll_url', type: 'string', presence: 'required' },
    ],
    objects: ['data'],
  },
  {
    name: 'export (completed)',
    endpoint: 'GET /exports/:id',
    root: 'data',
    fields: [
      { path: 'id', type: 'integer', presence: 'required' },
      { path: 'status', type: 'string', presence: 'required', known: ['completed'] },
      { path: 'format', type: 'string', presence: 'optional', known: ['csv', 'json'] },
      { path: 'download_url', type: 'string', presence: 'optional' },
      { path: 'total_rows', type: 'integer', presence: 'optional' },
      { path: 'credits_used', type: 'integer', presence: 'optional' },
      { path: 'expires_at', type: 'timestamp', presence: 'optional' },
    ],
    objects: [''],
  },
];

/** The kinds of bad input of the matrix. */
export type BadKind = 'missing' | 'null' | 'wrong type' | 'unseen enum value' | 'extra field';

/** What a case expects. */
export type Expectation =
  /** The response is accepted; the field reads back as `value` (`undefined` = absent). */
  | { outcome: 'tolerated'; value: unknown }
  /** A `ProtocolError` (`ERR_PROTOCOL`, failure `schema`) whose field path is exactly `fieldPath`. */
  | { outcome: 'error'; fieldPath: string; expected: string };

/** One row of the matrix. */
export interface MatrixCase {
  resource: SpecResource;
  kind: BadKind;
  /** Full path in the body, e.g. `data.licenses[0].status`. */
  path: string;
  /** Human label of the bad value. */
  label: string;
  /** Applies the bad input to a parsed body (in place). */
  apply: (body: unknown) => void;
  expect: Expectation;
}

/** The extra field added by the `extra field` kind. */
export const EXTRA_KEY = 'x_bad_input_extra';
/** Its value: nested, with a null, so "kept" means kept as is. */
export const EXTRA_VALUE = { nested: [1, 'two', null], flag: true };

/** `data.licenses[0].status` → `['data', 'licenses', 0, 'status']`. */
export function parsePath(path: string): Array<string | number> {
  const out: Array<string | number> = [];
  for (const part of path.split('.')) {
    if (part === '') continue;
    const match = /^([^[]+)((?:\[\d+\])*)$/.exec(part);
    if (!match) throw new Error(`bad path ${path}`);
    out.push(match[1]!);
    for (const index of match[2]!.matchAll(/\[(\d+)\]/g)) out.push(Number(index[1]));
  }
  return out;
}

/** Joins a root and a relative path (`data` + `meta.billable`). */
export function joinPath(root: string, relative: string): string {
  if (root === '') return relative;
  if (relative === '') return root;
  return `${root}.${relative}`;
}

/** The value at `path`, or `undefined`. */
export function getAt(body: unknown, path: string): unknown {
  let current: unknown = body;
  for (const key of parsePath(path)) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}

function parentOf(
  body: unknown,
  path: string,
): { parent: Record<string | number, unknown>; key: string | number } {
  const keys = parsePath(path);
  const last = keys.pop()!;
  let current: unknown = body;
  for (const key of keys) {
    current = (current as Record<string | number, unknown>)[key];
    if (current === null || typeof current !== 'object')
      throw new Error(`no object at ${path} in the real body`);
  }
  return { parent: current as Record<string | number, unknown>, key: last };
}

/** Sets (or, with `undefined`, deletes) the value at `path`; the parent must exist. */
export function setAt(body: unknown, path: string, value: unknown): void {
  const { parent, key } = parentOf(body, path);
  if (!(key in parent)) throw new Error(`${path} is not in the real body; the matrix row would test nothing`);
  if (value === undefined) delete parent[key];
  else parent[key] = value;
}

/** How a schema mismatch names the declared type (`expected <word>, got …`). */
function typeWord(type: FieldType): string {
  if (type === 'timestamp') return 'string';
  if (type === 'integer') return 'number';
  return type;
}

/** Wrong-typed values for a declared type, with a label and the exact message tail each. */
export function wrongValues(type: FieldType): Array<{ label: string; value: unknown; expected: string }> {
  switch (type) {
    case 'string':
      return [{ label: 'number 12345', value: 12345, expected: 'expected string, got number' }];
    case 'timestamp':
      return [
        { label: 'number 1767225600', value: 1767225600, expected: 'expected string, got number' },
        { label: 'string "yesterday"', value: 'yesterday', expected: 'expected an ISO 8601 timestamp' },
      ];
    case 'integer':
      return [
        { label: 'string "7"', value: '7', expected: 'expected number, got string "7"' },
        { label: 'fraction 1.5', value: 1.5, expected: 'expected integer, got non-integer number' },
      ];
    case 'boolean':
      return [{ label: 'string "true"', value: 'true', expected: 'expected boolean, got string "true"' }];
    case 'object':
      return [
        { label: 'string', value: 'not an object', expected: 'expected object, got string "not an object"' },
      ];
    case 'array':
      return [{ label: 'object {}', value: {}, expected: 'expected array, got object' }];
    case 'any':
      return [{ label: 'number 42', value: 42, expected: '' }];
  }
}

/** Every row of the matrix for `resources` (default: the whole spec). */
export function matrixCases(resources: readonly SpecResource[] = SPEC_RESOURCES): MatrixCase[] {
  const cases: MatrixCase[] = [];
  for (const resource of resources) {
    for (const field of resource.fields) {
      const path = joinPath(resource.root, field.path);
      const missingOk = field.presence === 'optional';
      const nullOk = field.presence !== 'required';
      cases.push({
        resource,
        kind: 'missing',
        path,
        label: 'missing',
        apply: (body) => setAt(body, path, undefined),
        expect: missingOk
          ? { outcome: 'tolerated', value: undefined }
          : { outcome: 'error', fieldPath: path, expected: `expected ${typeWord(field.type)}, got missing` },
      });
      cases.push({
        resource,
        kind: 'null',
        path,
        label: 'null',
        apply: (body) => setAt(body, path, null),
        expect: nullOk
          ? { outcome: 'tolerated', value: null }
          : { outcome: 'error', fieldPath: path, expected: `expected ${typeWord(field.type)}, got null` },
      });
      for (const wrong of wrongValues(field.type)) {
        cases.push({
          resource,
          kind: 'wrong type',
          path,
          label: wrong.label,
          apply: (body) => setAt(body, path, wrong.value),
          expect:
            field.type === 'any'
              ? { outcome: 'tolerated', value: wrong.value }
              : { outcome: 'error', fieldPath: path, expected: wrong.expected },
        });
      }
      if (field.known) {
        const unseen = `x_unseen_${field.path.replace(/\W/g, '_')}`;
        cases.push({
          resource,
          kind: 'unseen enum value',
          path,
          label: JSON.stringify(unseen),
          apply: (body) => setAt(body, path, unseen),
          expect: { outcome: 'tolerated', value: unseen },
        });
      }
    }
    for (const object of resource.objects) {
      const path = joinPath(joinPath(resource.root, object), EXTRA_KEY);
      cases.push({
        resource,
        kind: 'extra field',
        path,
        label: 'extra field',
        apply: (body) => {
          const target = getAt(body, joinPath(resource.root, object));
          if (target === null || typeof target !== 'object')
            throw new Error(`no object at ${joinPath(resource.root, object)} in the real body`);
          (target as Record<string, unknown>)[EXTRA_KEY] = EXTRA_VALUE;
        },
        expect: { outcome: 'tolerated', value: EXTRA_VALUE },
      });
    }
  }
  return cases;
}

/** `[resource] path: kind (label)` for test names. */
export function caseName(c: MatrixCase): string {
  return `${c.resource.name} · ${c.path} · ${c.kind}${c.label !== c.kind ? ` (${c.label})` : ''}`;
}

/**
 * The rows run through a whole pipeline into the mirror. `npm run test:resilience` runs every row;
 * `npm test` runs one row per field (its kind rotating from field to field, so every kind and
 * every field is covered), because a pipeline run per row costs ~100× a client call. Every row
 * still runs at the client (client-matrix.test.ts) in both modes.
 */
export function pipelineRows(cases: readonly MatrixCase[], full: boolean): MatrixCase[] {
  if (full) return [...cases];
  const byField = new Map<string, MatrixCase[]>();
  for (const c of cases) {
    const key = c.kind === 'extra field' ? c.path : `${c.resource.name}:${c.path}`;
    byField.set(key, [...(byField.get(key) ?? []), c]);
  }
  return [...byField.values()].map((rows, i) => rows[i % rows.length]!);
}
