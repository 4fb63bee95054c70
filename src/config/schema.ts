import { z } from 'zod';
import { CANONICAL_FILTERS } from './defaults.js';
import { DESTINATION_NAME, destinationSchema } from './destinations.js';

const positiveInt = z.number().int().positive();
const nonNegativeInt = z.number().int().nonnegative();
const duration = z.string().min(1);

/** What `schedule` does at start for a run missed while it was down (docs/operations.md). */
export const CATCH_UP_POLICIES = ['none', 'once'] as const;

/** The steps a named pipeline can run (`pipelines.NAME.steps`, docs/contract.md "Config file"). */
export const STEP_TYPES = ['sync', 'export', 'enrich', 'snapshot', 'publish'] as const;

const stepObject = z.strictObject({
  type: z.enum(STEP_TYPES),
  /** Options of the step, as the command's flags in camelCase (validated when the step runs). */
  options: z.record(z.string(), z.unknown()).optional(),
  continueOnError: z.boolean().optional(),
});

/** Strict schema of the config file: an unknown key or a wrong type is an error naming its path. */
export const configFileSchema = z.strictObject({
  $schema: z.string().optional(),
  api: z
    .strictObject({
      baseUrl: z.string().nullable().optional(),
      timeoutMs: positiveInt.optional(),
      maxRetries: nonNegativeInt.optional(),
      concurrency: positiveInt.optional(),
      requestsPerSecond: z.number().positive().optional(),
      pollIntervalMs: positiveInt.optional(),
      authHeader: z.enum(['x-api-key', 'bearer']).optional(),
      queryParams: z.partialRecord(z.enum(CANONICAL_FILTERS), z.string().min(1)).optional(),
    })
    .optional(),
  database: z.strictObject({ path: z.string().min(1).optional() }).optional(),
  exports: z
    .strictObject({
      dir: z.string().min(1).optional(),
      creditsPerRowGuess: z.number().nonnegative().optional(),
      pollDeadline: duration.optional(),
      retention: duration.optional(),
    })
    .optional(),
  snapshots: z
    .strictObject({
      dir: z.string().min(1).optional(),
      retainDates: nonNegativeInt.optional(),
      /** Destination names (type s3) each snapshot is also uploaded to. */
      to: z.array(z.string().min(1)).optional(),
    })
    .optional(),
  sync: z
    .strictObject({
      perPage: positiveInt.max(500).optional(),
      overlap: duration.optional(),
      concurrency: positiveInt.nullable().optional(),
    })
    .optional(),
  enrich: z
    .strictObject({
      budget: nonNegativeInt.optional(),
      staleAfter: duration.optional(),
      concurrency: positiveInt.optional(),
      strategy: z.string().min(1).optional(),
      wait: duration.optional(),
      failureBackoff: duration.optional(),
      maxPollIntervalMs: positiveInt.optional(),
    })
    .optional(),
  log: z
    .strictObject({ level: z.string().optional(), file: z.string().min(1).nullable().optional() })
    .optional(),
  lock: z.strictObject({ lease: duration.optional(), wait: duration.optional() }).optional(),
  credits: z
    .strictObject({
      maxPerDay: nonNegativeInt.nullable().optional(),
      maxPerMonth: nonNegativeInt.nullable().optional(),
    })
    .optional(),
  destinations: z
    .record(
      z.string().regex(DESTINATION_NAME, 'destination names use letters, digits, - and _'),
      destinationSchema,
    )
    .optional(),
  pipelines: z
    .record(
      z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/, 'pipeline names use letters, digits, - and _'),
      z.strictObject({
        steps: z.array(z.union([z.enum(STEP_TYPES), stepObject])).min(1),
        schedule: z.string().nullable().optional(),
        timezone: z.string().optional(),
        catchUp: z.enum(CATCH_UP_POLICIES).optional(),
      }),
    )
    .optional(),
});

/** The config file as written by a user, after schema validation. */
export type ConfigFile = z.infer<typeof configFileSchema>;
