/**
 * One meaning per option (re-exports only): the schema of each step type in `steps.ts`, the
 * normaliser both the commands' flags and the named pipelines' steps go through in `schema.ts`,
 * the value checks in `checks.ts` and `filters.ts`.
 */
export {
  ENRICH_SCHEMA,
  EXPORT_SCHEMA,
  PUBLISH_SCHEMA,
  SNAPSHOT_SCHEMA,
  STEP_SCHEMAS,
  SYNC_SCHEMA,
} from './steps.js';
export { flagIssueMessage, normaliseStepOptions, stepIssueMessage, stepOptionKeys } from './schema.js';
export type {
  FlagSyntax,
  Normalised,
  NormaliseEnv,
  OptionIssue,
  OptionSource,
  OptionSpec,
  StepSchema,
  StepType,
} from './schema.js';
