/**
 * The pipelines, by name: what `run NAME` and `schedule` use. Re-exports only;
 * the step registry is in `registry.ts`, named runs in `named.ts`.
 */
export { syncPipeline } from './sync.js';
export type { SyncOptions, SyncStats } from './sync.js';
export { exportPipeline } from './export/index.js';
export type { ExportOptions, ExportStats } from './export/index.js';
export { enrichPipeline } from './enrich/index.js';
export type { EnrichOptions, EnrichStats } from './enrich/index.js';
export { snapshotPipeline } from './snapshot.js';
export type { SnapshotOptions, SnapshotStats } from './snapshot.js';
export { publishPipeline } from './publish.js';
export type { DestinationPublishStats, PublishOptions, PublishStats } from './publish.js';
export { STEP_DEFINITIONS, prepareStep } from './registry.js';
export type { PreparedStep, StepContext, StepType } from './registry.js';
export { prepareNamedPipeline, runNamedPipeline } from './named.js';
export type { NamedPipelineStats, PreparedPipeline, StepOutcome } from './named.js';
