/** Cron scheduling of named pipelines (the only place that imports node-cron). Re-exports only. */
export { PipelineScheduler, checkSchedules } from './scheduler.js';
export type {
  PipelineSchedulerOptions,
  RunReason,
  ScheduledPipeline,
  ScheduledPipelineStats,
} from './scheduler.js';
export { MAX_CATCH_UP_LOOKBACK_MS, checkCronExpression, lastOccurrenceBetween } from './cron.js';
