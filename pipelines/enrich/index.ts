/**
 * The `enrich` pipeline (re-exports only). The invocation's phases are in `run.ts`; the planner
 * (pure) in `plan.ts` and its mirror reads in `plan-input.ts`; options and fixed figures in
 * `options.ts`; the budget gate before each POST in `gate.ts`; POSTing and following runs in
 * `worker.ts`; lapsed intents in `intents.ts`; the end-of-run credit reconciliation (pure) in
 * `reconcile.ts`.
 */
export { enrichPipeline } from './run.js';
export {
  DEFAULT_INTENT_LAPSE_MS,
  ENRICH_FILTERS,
  ENRICHMENT_COST_CREDITS,
  MAX_PLANNED_DOMAINS,
} from './options.js';
export type { EnrichOptions, EnrichSelection } from './options.js';
export { planEnrichment } from './plan.js';
export type { EnrichmentPlan, PlanCandidate, PlanEntry, PlanInput, PlanReason, SkipReason } from './plan.js';
export { readPlanInput } from './plan-input.js';
export { reconcileCredits } from './reconcile.js';
export type {
  AccountFigures,
  ReconcileDecision,
  ReconcileInput,
  Reconciliation,
  ReconciliationExplanation,
} from './reconcile.js';
export type { EnrichStats } from './stats.js';
