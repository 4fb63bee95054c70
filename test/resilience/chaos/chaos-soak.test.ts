import { describe, expect, it } from 'vitest';
import { diffMirrorWithTruth } from '../../helpers/mirror-truth.js';
import { startTestSimulator } from '../../helpers/start-simulator.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { writeTestConfig } from '../../helpers/test-context.js';
import { FULL, scale } from '../mode.js';
import { CHAOS_CONFIG, CHAOS_FAULTS } from './fault-mix.js';
import { ChaosSoak } from './soak.js';

const SEED = 8_002;
/** Rounds at most, and the wall time after which no new round starts. */
const MAX_ROUNDS = scale(2, 40);
const TIME_BUDGET_MS = scale(0, 180_000);
const DOMAINS = scale(250, 1_500);

describe('chaos soak', () => {
  it(
    `every pipeline under combined faults converges to the truth, nothing paid twice (${FULL ? 'full' : 'fast'})`,
    async () => {
      const started = Date.now();
      const sim = await startTestSimulator({
        domains: DOMAINS,
        seed: SEED,
        timeScale: 0.01,
        credits: 10_000_000,
      });
      const dir = await tempDir('domain-sync-chaos-');
      const { path: configPath, config } = await writeTestConfig(dir, CHAOS_CONFIG);
      sim.control.setFaults([...CHAOS_FAULTS]);
      const soak = new ChaosSoak(sim, dir, configPath, config, {
        seed: SEED,
        enrichBudget: scale(60, 100),
        mutationsPerRound: scale(14, 28),
      });

      for (let round = 0; round < MAX_ROUNDS; round++) {
        if (round >= 2 && Date.now() - started > TIME_BUDGET_MS) break;
        await soak.round(round);
      }
      await soak.settlePendingRuns();
      const figures = soak.finalChecks();
      const differences = diffMirrorWithTruth(soak.dbPath, sim);
      const faults = sim.control.faultStats();
      const report = {
        mode: FULL ? 'full' : 'fast',
        seed: SEED,
        domains: DOMAINS,
        soakWallMs: Date.now() - started,
        requests: sim.control.requests().length,
        faultsInjected: faults.injected,
        faultsTotal: faults.total,
        ...soak.counts,
        ...figures,
        converged: differences.length === 0,
      };
      process.stdout.write(`chaos soak: ${JSON.stringify(report)}\n`);

      // The soak must have met every fault kind, including ambiguous POSTs, to mean anything.
      for (const kind of ['status', 'rate_limit', 'reset', 'latency', 'truncate', 'malformed'])
        expect(faults.injected[kind] ?? 0, `faults of kind ${kind}`).toBeGreaterThan(0);
      expect(figures.lostEnrichmentAnswers, 'enrichment POSTs billed with the answer lost').toBeGreaterThan(
        0,
      );
      expect(figures.lostExportAnswers, 'export POSTs billed with the answer lost').toBeGreaterThan(0);
      expect(differences).toEqual([]);
      expect(figures.paidTwice).toBe(0);
    },
    scale(120_000, 600_000),
  );
});
