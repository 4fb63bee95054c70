export type { Config, ApiConfig, PipelineConfig, PipelineStepConfig } from './config.js';
export { CANONICAL_FILTERS, DEFAULTS, DEFAULT_CONFIG_FILE, type CanonicalFilter } from './defaults.js';
export { configFileSchema, STEP_TYPES, type ConfigFile } from './schema.js';
export {
  BASE_PATH,
  checkBaseUrl,
  configFileWarnings,
  loadConfig,
  readApiKey,
  type LoadConfigOptions,
  type LoadConfigResult,
} from './load.js';
export {
  DEFAULT_POSTGRES_SCHEMA,
  type DestinationConfig,
  type PostgresDestinationConfig,
  type S3DestinationConfig,
} from './destinations.js';
