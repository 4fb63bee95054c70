import type { UsageEntry } from '../../../src/simulator/index.js';

/* The records the chaos soak (soak.ts) keeps, apart from it so that it stays under 500 lines. */

/** One pipeline invocation of the soak, with the slice of the simulator's logs it produced. */
export interface Invocation {
  pipeline: string;
  via: 'cli' | 'in-process';
  exitCode: number;
  status: string;
  error: { code: string; message: string } | undefined;
  failures: Array<{ item: string; code: string; message: string }>;
  stats: Record<string, unknown>;
  /** Usage entries of this invocation (the simulator's log between its start and end). */
  usage: UsageEntry[];
  /** Domains of the `POST /enrichments` requests it sent, faulted or not. */
  enrichmentPostDomains: string[];
  /** `POST /exports` requests it sent, faulted or not. */
  exportPosts: number;
}

/** Counts of one soak, printed as its summary line. */
export interface SoakCounts {
  rounds: number;
  invocations: Record<string, number>;
  /** Invocations that ended non-zero (or `failed`) and were run again. */
  reruns: Record<string, number>;
  /** Enrich invocations that ended with item failures (a failed run, an unknown outcome): not rerun. */
  enrichItemFailures: number;
  /** `--forget-unknown` given after the product refused because a lost POST /exports was billed. */
  exportOverrides: number;
  mutations: number;
  /** Wall time spent in each pipeline's invocations, ms. */
  pipelineWallMs: Record<string, number>;
}
