/**
 * Entry point for programmatic use (package.json "main"). Re-exports only, no logic: the
 * API client and its errors, config loading, the mirror, the run context, the pipelines and the
 * simulator. The CLI (`domain-sync`) is the main interface; see README.md.
 *
 * @example
 * const { config } = loadConfig({ env: process.env, cwd: process.cwd() });
 * const ctx = await openRunContext({ config: config!, apiKey: process.env.DOMAIN_SYNC_API_KEY! });
 * try { console.log(await syncPipeline(ctx, {})); } finally { await ctx.close(); }
 */
export * from './api/index.js';
export { DEFAULTS, loadConfig, readApiKey } from './config/index.js';
export type { Config, LoadConfigOptions, LoadConfigResult } from './config/index.js';
export { migrateMirror, openMirror } from './mirror/index.js';
export type { Mirror, OpenMirrorOptions } from './mirror/index.js';
export { openRunContext } from './runtime/run-context.js';
export type { ItemFailure, RunResult, RunStatus } from './runtime/run-result.js';
export type { OpenRunContextOptions, OwnedRunContext, RunContext } from './runtime/run-context.js';
export { startSimulator } from './simulator/index.js';
export type { FaultRule, RunningSimulator, SimulatorOptions } from './simulator/index.js';
export {
  enrichPipeline,
  exportPipeline,
  publishPipeline,
  runNamedPipeline,
  snapshotPipeline,
  syncPipeline,
} from '../pipelines/index.js';
export type {
  EnrichOptions,
  ExportOptions,
  PublishOptions,
  PublishStats,
  SnapshotOptions,
  SyncOptions,
  SyncStats,
} from '../pipelines/index.js';
