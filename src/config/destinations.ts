import { z } from 'zod';
import { parseDuration } from '../util/duration.js';

/**
 * Destinations (docs/contract.md "Destinations"): where `publish` and `snapshot --to` deliver the
 * mirror. A destination holds no secret: a PostgreSQL password comes from `PGPASSWORD`,
 * `~/.pgpass` or libpq's `PG*` variables, S3 credentials from the AWS SDK's default chain.
 */

/** A destination's name: the key under `destinations` in the config. */
export const DESTINATION_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

const postgresDestination = z.strictObject({
  type: z.literal('postgres'),
  /** `postgres://user@host:5432/db?sslmode=…&connect_timeout=…`, without a password. */
  url: z.string().min(1),
  /** Schema the tables are published into. @default 'domain_sync' */
  schema: z
    .string()
    .regex(/^[a-z_][a-z0-9_]*$/, 'lower-case letters, digits and _, not starting with a digit')
    .max(63)
    .optional(),
});

const s3Destination = z.strictObject({
  type: z.literal('s3'),
  /** `s3://bucket/prefix` (the prefix may be empty). */
  url: z.string().min(1),
  region: z.string().min(1).optional(),
  /** For S3-compatible stores (MinIO, Ceph, R2, …): their endpoint URL. */
  endpoint: z.string().min(1).optional(),
  forcePathStyle: z.boolean().optional(),
  /** How long a destination that keeps failing is retried before it is given up. @default '60s' */
  giveUpAfter: z.string().min(1).optional(),
});

/** Schema of one `destinations.NAME` entry, by its `type`. */
export const destinationSchema = z.discriminatedUnion('type', [postgresDestination, s3Destination]);
export type DestinationFile = z.infer<typeof destinationSchema>;

/** A PostgreSQL destination, normalised. */
export interface PostgresDestinationConfig {
  type: 'postgres';
  name: string;
  /** The url as written (it carries no password: one that does is refused at load). */
  url: string;
  schema: string;
}

/** An S3-compatible destination, normalised. */
export interface S3DestinationConfig {
  type: 's3';
  name: string;
  bucket: string;
  /** Key prefix without leading or trailing `/`; '' for the bucket's root. */
  prefix: string;
  region: string | null;
  endpoint: string | null;
  forcePathStyle: boolean;
  /** A destination that keeps failing is given up after this long, retries included. @default 60000 */
  giveUpAfterMs: number;
}

export type DestinationConfig = PostgresDestinationConfig | S3DestinationConfig;

export const DEFAULT_POSTGRES_SCHEMA = 'domain_sync';

/** Default of an s3 destination's `giveUpAfter` (docs/contract.md: given up within about a minute). */
export const DEFAULT_GIVE_UP_AFTER = '60s';

/**
 * Normalises one destination; problems are pushed to `errors` with the key path named
 * (`destinations.NAME.url: …`). A url carrying a password is refused: secrets never live in
 * the config file.
 */
export function resolveDestination(
  name: string,
  input: DestinationFile,
  errors: string[],
): DestinationConfig | null {
  const key = `destinations.${name}`;
  if (input.type === 'postgres') {
    const url = parseUrl(input.url);
    if (url === null || (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')) {
      errors.push(`${key}.url: must be a postgres://user@host:port/database URL`);
      return null;
    }
    if (url.password !== '') {
      errors.push(
        `${key}.url: must not carry a password; set PGPASSWORD or use ~/.pgpass (the config file holds no secret)`,
      );
      return null;
    }
    for (const param of ['password', 'passfile']) {
      if (url.searchParams.has(param)) {
        errors.push(`${key}.url: must not carry "${param}"; set PGPASSWORD or use ~/.pgpass`);
        return null;
      }
    }
    return { type: 'postgres', name, url: input.url, schema: input.schema ?? DEFAULT_POSTGRES_SCHEMA };
  }
  const url = parseUrl(input.url);
  if (url === null || url.protocol !== 's3:' || url.hostname === '') {
    errors.push(`${key}.url: must be an s3://bucket/prefix URL`);
    return null;
  }
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    errors.push(`${key}.url: must be s3://bucket/prefix, without credentials, query or fragment`);
    return null;
  }
  let endpoint: string | null = null;
  if (input.endpoint !== undefined) {
    const parsed = parseUrl(input.endpoint);
    if (parsed === null || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
      errors.push(`${key}.endpoint: must be an http or https URL`);
      return null;
    }
    if (parsed.username !== '' || parsed.password !== '') {
      errors.push(`${key}.endpoint: must not carry credentials (the AWS SDK's default chain provides them)`);
      return null;
    }
    endpoint = input.endpoint;
  }
  const giveUpAfterMs = parseDuration(input.giveUpAfter ?? DEFAULT_GIVE_UP_AFTER);
  if (giveUpAfterMs === null || giveUpAfterMs < 1_000 || giveUpAfterMs > 3_600_000) {
    errors.push(`${key}.giveUpAfter: expected a duration from 1s to 1h such as 60s or 5m`);
    return null;
  }
  return {
    type: 's3',
    name,
    bucket: url.hostname,
    prefix: decodeURIComponent(url.pathname).replace(/^\/+|\/+$/g, ''),
    region: input.region ?? null,
    endpoint,
    forcePathStyle: input.forcePathStyle ?? false,
    giveUpAfterMs,
  };
}

/**
 * The AWS secrets in the environment (the SDK's default chain reads them itself), so the CLI can
 * register them for redaction like the API key: the secret key and the session token.
 */
export function awsSecretsFromEnv(env: Readonly<Record<string, string | undefined>>): string[] {
  return [env.AWS_SECRET_ACCESS_KEY, env.AWS_SESSION_TOKEN].filter(
    (value): value is string => typeof value === 'string' && value !== '',
  );
}

function parseUrl(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}
