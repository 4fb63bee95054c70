import { PROFILE_SECTIONS } from '../../src/mirror/store/profile-fields.js';
import { ENRICH_FILTERS, type EnrichOptions } from '../enrich/options.js';
import type { ExportOptions } from '../export/types.js';
import type { PublishOptions } from '../publish.js';
import type { SnapshotOptions } from '../snapshot.js';
import { resolvePublishTables, resolveSnapshotTables } from '../tables.js';
import type { SyncOptions } from '../sync.js';
import {
  booleanValue,
  destinationNames,
  durationMs,
  nameList,
  nonBlankText,
  nonNegativeInt,
  oneOf,
  path,
  positiveInt,
} from './checks.js';
import { filterObject } from './filters.js';
import type { StepSchema, StepType } from './schema.js';

/*
 * The schema of each step type: which flags its command has, the step option each one is, the
 * check both go through, and how the checked values become the pipeline's options. Options not
 * given are left out, so the pipeline applies its own default (mostly from the config); a
 * switch's default is written out, so both spellings give the same options object.
 */

/** `sync [--filter NAME=VALUE]… [--full] [--no-profiles] [--concurrency N]`. */
export const SYNC_SCHEMA: StepSchema<SyncOptions> = {
  type: 'sync',
  options: {
    filters: {
      flag: '--filter',
      syntax: 'nameValue',
      check: filterObject({ type: 'sync', forbid: ['page'] }),
    },
    full: { flag: '--full', syntax: 'value', check: booleanValue },
    profiles: { flag: '--no-profiles', syntax: 'value', check: booleanValue },
    concurrency: { flag: '--concurrency', syntax: 'value', check: positiveInt },
  },
  build: (v) => ({
    filters: (v.filters ?? {}) as SyncOptions['filters'],
    full: (v.full ?? false) as boolean,
    profiles: (v.profiles ?? true) as boolean,
    ...(v.concurrency === undefined ? {} : { concurrency: v.concurrency as number }),
  }),
};

/** Section names `--fields` accepts: the profile's sections, licences and payment methods. */
const EXPORT_SECTIONS = ['licenses', 'payment_methods', ...PROFILE_SECTIONS];

/** `export [--filter NAME=VALUE]… [--format csv|json] [--fields a,b] [--max-credits N] [--no-load] …`. */
export const EXPORT_SCHEMA: StepSchema<ExportOptions> = {
  type: 'export',
  options: {
    filters: {
      flag: '--filter',
      syntax: 'nameValue',
      check: filterObject({ type: 'export', forbid: ['page', 'per_page'] }),
    },
    format: { flag: '--format', syntax: 'value', check: oneOf(['csv', 'json']) },
    fields: { flag: '--fields', syntax: 'commaList', check: nameList('section', { known: EXPORT_SECTIONS }) },
    maxCredits: { flag: '--max-credits', syntax: 'value', check: nonNegativeInt },
    load: { flag: '--no-load', syntax: 'value', check: booleanValue },
    recreateExpired: { flag: '--recreate-expired', syntax: 'value', check: booleanValue },
    forgetUnknown: {
      flag: '--forget-unknown',
      syntax: 'value',
      check: booleanValue,
      commandOnly:
        'it overrides, once, the refusal to pay again for a POST that may have been billed; ' +
        'a scheduled step would override it on every run',
    },
  },
  build: (v) => ({
    filters: (v.filters ?? {}) as ExportOptions['filters'],
    format: (v.format ?? 'csv') as NonNullable<ExportOptions['format']>,
    ...(v.fields === undefined ? {} : { fields: v.fields as string[] }),
    ...(v.maxCredits === undefined ? {} : { maxCredits: v.maxCredits as number }),
    load: (v.load ?? true) as boolean,
    recreateExpired: (v.recreateExpired ?? false) as boolean,
    forgetUnknown: (v.forgetUnknown ?? false) as boolean,
  }),
};

// Declarations like EXPORT_SCHEMA's: each step declares its own flags, same-shape by design.
/**
 * `enrich [--budget N] [--stale-after D] [--domain D]… [--filter NAME=VALUE]… [--concurrency N]
 * [--strategy S] [--wait D] [--dry-run]`.
 */
export const ENRICH_SCHEMA: StepSchema<EnrichOptions> = {
  type: 'enrich',
  options: {
    budget: { flag: '--budget', syntax: 'value', check: nonNegativeInt },
    staleAfter: { flag: '--stale-after', syntax: 'value', check: durationMs },
    domains: { flag: '--domain', syntax: 'repeat', check: nameList('domain') },
    filters: {
      flag: '--filter',
      syntax: 'nameValue',
      check: filterObject({
        type: 'enrich',
        forbid: ['page', 'per_page'],
        only: { names: ENRICH_FILTERS, why: 'selects from the mirror' },
      }),
    },
    concurrency: { flag: '--concurrency', syntax: 'value', check: positiveInt },
    strategy: { flag: '--strategy', syntax: 'value', check: nonBlankText },
    wait: { flag: '--wait', syntax: 'value', check: durationMs },
    dryRun: {
      flag: '--dry-run',
      syntax: 'value',
      commandOnly: 'it prints the plan instead of running it; a step runs',
      mode: true,
    },
  },
  build: (v) => {
    const domains = (v.domains ?? []) as string[];
    const filters = (v.filters ?? {}) as Record<string, string | number | boolean>;
    return {
      filters,
      domains,
      // `--domain` alone enriches just those domains; --stale-after or --filter also take the
      // stale domains they select.
      requestedOnly: domains.length > 0 && v.staleAfter === undefined && Object.keys(filters).length === 0,
      ...(v.budget === undefined ? {} : { budget: v.budget as number }),
      ...(v.staleAfter === undefined ? {} : { staleAfterMs: v.staleAfter as number }),
      ...(v.wait === undefined ? {} : { waitMs: v.wait as number }),
      ...(v.concurrency === undefined ? {} : { concurrency: v.concurrency as number }),
      ...(v.strategy === undefined ? {} : { strategy: v.strategy as string }),
    };
  },
};

/** `snapshot [--out DIR] [--tables a,b] [--to NAME]…`. */
export const SNAPSHOT_SCHEMA: StepSchema<SnapshotOptions> = {
  type: 'snapshot',
  options: {
    out: { flag: '--out', syntax: 'value', check: path },
    tables: {
      flag: '--tables',
      syntax: 'commaList',
      check: nameList('table name', { atLeastOne: true, validate: tablesProblem }),
    },
    // A step's `to` (like the flags) replaces `snapshots.to` for that snapshot.
    to: { flag: '--to', syntax: 'repeat', check: destinationNames('s3') },
  },
  build: (v) => ({
    ...(v.out === undefined ? {} : { outDir: v.out as string }),
    ...(v.tables === undefined ? {} : { tables: v.tables as string[] }),
    ...(v.to === undefined ? {} : { to: v.to as string[] }),
  }),
};

function tablesProblem(names: string[]): string | null {
  try {
    resolveSnapshotTables(names);
    return null;
  } catch (error) {
    return (error as Error).message.replace(/^--tables: /, '');
  }
}

/** `publish [--to NAME]… [--tables a,b] [--full]`. */
export const PUBLISH_SCHEMA: StepSchema<PublishOptions> = {
  type: 'publish',
  options: {
    to: { flag: '--to', syntax: 'repeat', check: nameList('destination name', { atLeastOne: true }) },
    tables: {
      flag: '--tables',
      syntax: 'commaList',
      check: nameList('table name', { atLeastOne: true, validate: publishTablesProblem }),
    },
    full: { flag: '--full', syntax: 'value', check: booleanValue },
  },
  build: (v) => ({
    ...(v.to === undefined ? {} : { to: v.to as string[] }),
    ...(v.tables === undefined ? {} : { tables: v.tables as string[] }),
    full: (v.full ?? false) as boolean,
  }),
};

function publishTablesProblem(names: string[]): string | null {
  try {
    resolvePublishTables(names);
    return null;
  } catch (error) {
    return (error as Error).message.replace(/^--tables: /, '');
  }
}

/** The schema of each step type. */
export const STEP_SCHEMAS: { readonly [T in StepType]: StepSchema<Record<string, unknown>> } = {
  sync: SYNC_SCHEMA as StepSchema<Record<string, unknown>>,
  export: EXPORT_SCHEMA as StepSchema<Record<string, unknown>>,
  enrich: ENRICH_SCHEMA as StepSchema<Record<string, unknown>>,
  snapshot: SNAPSHOT_SCHEMA as StepSchema<Record<string, unknown>>,
  publish: PUBLISH_SCHEMA as StepSchema<Record<string, unknown>>,
};
