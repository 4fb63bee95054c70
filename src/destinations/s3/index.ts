/** S3-compatible destinations of `snapshot --to` (re-exports only; README.md says what is where). */
export { DESTINATION_ERROR_CODES, DestinationError } from './errors.js';
export type { DestinationFailureKind } from './errors.js';
export { dataKey, destinationUrl, manifestKey, SHA256_METADATA_KEY } from './layout.js';
export { planRemoteRetention, planUploadDates } from './plan.js';
export type { RemoteRemoval, UploadDatesInput } from './plan.js';
export { DEFAULT_RETRY_POLICY, RetryBudget, retryPolicyFor } from './retry.js';
export type { RetryPolicy } from './retry.js';
// store.ts (the AWS SDK) is not re-exported, so importing this barrel does not load the SDK.
export type { ObjectHead, OpenS3StoreOptions, S3Store } from './store.js';
export { sha256OfFile, uploadSnapshot } from './upload.js';
export type {
  LocalSnapshotDate,
  LocalSnapshotFile,
  SnapshotUploadResult,
  UploadedObject,
  UploadSnapshotOptions,
  UploadSnapshotOutcome,
} from './upload.js';
