import type { LogicalColumnType } from '../../mirror/store/snapshot.js';

/*
 * How the mirror's column kinds become PostgreSQL types (docs/destinations.md "Types"), and which
 * types an existing table may have instead and still hold the data.
 */

/** The PostgreSQL type `publish` creates for each kind of mirror column. */
export const POSTGRES_TYPE: Readonly<Record<LogicalColumnType, string>> = {
  text: 'text',
  integer: 'bigint',
  real: 'double precision',
  timestamp: 'timestamp with time zone',
  boolean: 'boolean',
  json: 'jsonb',
};

/**
 * Types (as `format_type` spells them) of an existing column that can hold the kind's values
 * without loss. A `timestamp without time zone` is refused on purpose: it would drop the zone of
 * every instant.
 */
export const COMPATIBLE_TYPES: Readonly<Record<LogicalColumnType, readonly string[]>> = {
  text: ['text', 'character varying'],
  integer: ['bigint', 'numeric'],
  real: ['double precision', 'numeric'],
  timestamp: ['timestamp with time zone'],
  boolean: ['boolean'],
  json: ['jsonb', 'json', 'text'],
};

/** What a kind of column holds, for error messages. */
export const KIND_WORDS: Readonly<Record<LogicalColumnType, string>> = {
  text: 'text',
  integer: '64-bit integers',
  real: 'floating-point numbers',
  timestamp: 'timestamps with a time zone',
  boolean: 'booleans',
  json: 'JSON documents',
};
