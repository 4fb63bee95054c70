import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startSimulator } from '../../../src/simulator/index.js';
import { hashString, Prng } from '../../../src/simulator/prng.js';
import type {
  FaultRule,
  RunningSimulator,
  SimulatorOptions,
  UsageEntry,
} from '../../../src/simulator/index.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { scale } from '../mode.js';
import { testConfigFile } from '../../helpers/test-context.js';
import { describeRun, runCli, summaryOf } from '../../helpers/cli.js';
import type { CliRun, KillTrigger } from '../../helpers/cli.js';
import { clockAheadImport } from './clock-ahead.js';
import {
  FINAL_EXPORT_FILE,
  killStage,
  listFiles,
  nonFinalFiles,
  brokenSnapshotFiles,
} from './mirror-checks.js';
import type { KillStage } from './mirror-checks.js';
import { integrityCheck, queryMirror } from '../../helpers/mirror.js';

/**
 * The seed of every random choice of the crash matrix (kill points: trigger and value). Fixed so a
 * failure is reproducible; `CRASH_SEED=n` explores other points. Printed in every summary line.
 */
export const CRASH_SEED = Number(process.env.CRASH_SEED ?? 8_001);

/** Seed of the simulators' catalogues (every workspace of a pipeline gets the same one). */
const CATALOGUE_SEED = 8;

/**
 * How far "later" a later run is: beyond the 10 minutes after which an unresolved enrichment
 * intent is checked against the domain's profile (DEFAULT_INTENT_LAPSE_MS in
 * pipelines/enrich/options.ts).
 */
export const LATER_MS = 11 * 60_000;

/** One pipeline's own directory, mirror, config and simulator. */
export interface Workspace {
  dir: string;
  dbPath: string;
  exportsDir: string;
  snapshotsDir: string;
  configPath: string;
  sim: RunningSimulator;
  env: Record<string, string>;
}

/**
 * - `request`: SIGKILL once the simulator has received the k-th API request of this process
 *   (with the latency faults, that request and the others in flight are still unanswered);
 * - `time`: SIGKILL t ms after spawn, between the fault-free run's start of work and its end
 *   (covers purely local stages: loading a file, writing Parquet, committing);
 * - `file`: SIGKILL 0–20 ms after a temporary file first appears in exports.dir or
 *   snapshots.dir (mid-write).
 */
export type TriggerKind = 'request' | 'time' | 'file';

/** A drawn kill point. */
export interface KillPoint {
  kind: TriggerKind;
  value: number;
}

/** What {@link runCrashMatrix} needs to know about one pipeline. */
export interface CrashScenario {
  /** Name in the summary: `sync`, `export`, `enrich`, `snapshot`, `run nightly`. */
  pipeline: string;
  /** The command and its flags (global flags are added). */
  args: readonly string[];
  /** Simulator options of every workspace (the catalogue seed is added). */
  sim: SimulatorOptions;
  /** Faults of every simulator, the fault-free run's included (latency, so kills land mid-request). */
  faults: readonly FaultRule[];
  /** Config overrides on top of the test defaults and the short lock lease. */
  config?: Record<string, unknown>;
  triggers: readonly TriggerKind[];
  /** Credits the pipeline may spend in a trial (the killed attempts and the recovery together). */
  budget: number;
  /** Builds the mirror every workspace starts from, in its own workspace (copied, not rebuilt). */
  prepare?: (ws: Workspace) => Promise<void>;
  /**
   * Runs in every workspace once it is ready (its config written, the template mirror copied),
   * before any command, the template's own workspace (before `prepare`) included: e.g. points
   * the config at a destination of the workspace's own.
   */
  setUp?: (ws: Workspace) => Promise<void>;
  /** True when the product documents that only a later run converges (enrich's open intents). */
  needsLaterRun?: (ws: Workspace) => boolean;
  /** Compares a recovered workspace with the fault-free one; asserts, and classifies the result. */
  verify: (ctx: VerifyContext) => Promise<TrialVerdict> | TrialVerdict;
}

export interface VerifyContext {
  trial: Workspace;
  baseline: Workspace;
  /** The last run (the one that went to the end). */
  final: CliRun;
  /** Every run of the trial, killed ones first. */
  runs: CliRun[];
  /** Assertion message prefix naming the seed, trial and kill points. */
  where: string;
}

export interface TrialVerdict {
  /** True when the mirror equals the fault-free result; false for a documented refusal. */
  recovered: boolean;
  /** Why not recovered (documented behaviour, asserted by the scenario). */
  refusal?: string;
  /** Counts worth reporting, summed over the trials (e.g. unattributed enrichments). */
  notes?: Record<string, number>;
}

/** Figures of one pipeline's matrix, printed as one line. */
export interface MatrixFigures {
  pipeline: string;
  seed: number;
  trials: number;
  killsInjected: number;
  killsMidRun: number;
  killsAtStartup: number;
  killsAfterFinish: number;
  /** Kills after which a temporary file was on disk (the process died mid-write). */
  killsMidWrite: number;
  notInjected: number;
  byTrigger: Record<TriggerKind, number>;
  recovered: number;
  refused: Record<string, number>;
  notes: Record<string, number>;
  laterRuns: number;
  paidTwice: number;
  maxCredits: number;
  budget: number;
  creditsChecked: number;
}

/** Builds a fresh workspace: simulator with the scenario's catalogue and faults, config, template mirror. */
export async function openWorkspace(scenario: CrashScenario, templateDb?: string): Promise<Workspace> {
  const dir = await tempDir('domain-sync-crash-');
  const sim = await startSimulator({ ...scenario.sim, seed: CATALOGUE_SEED });
  onTestFinished(() => sim.close());
  sim.control.setFaults([...scenario.faults]);
  const configPath = join(dir, 'config.json');
  const body = testConfigFile(dir, {
    ...(scenario.config ?? {}),
    // A killed process cannot release the mirror lock. The defaults (60 s lease, no wait) on
    // purpose: every restart below must take the dead holder's lock over at once, since its pid
    // is gone from this host (docs/operations.md "The mirror lock"); waiting would fail it with
    // ERR_LOCKED.
    lock: { lease: '60s', wait: '0s' },
  });
  await writeFile(configPath, JSON.stringify(body, null, 2));
  const ws: Workspace = {
    dir,
    dbPath: join(dir, 'mirror.sqlite'),
    exportsDir: join(dir, 'exports'),
    snapshotsDir: join(dir, 'snapshots'),
    configPath,
    sim,
    env: { DOMAIN_SYNC_API_KEY: sim.apiKey, DOMAIN_SYNC_BASE_URL: sim.baseUrl },
  };
  if (templateDb !== undefined) await copyFile(templateDb, ws.dbPath);
  await scenario.setUp?.(ws);
  return ws;
}

/** Runs the scenario's command in `ws` to its end, or until `trigger` kills it. */
export function runPipelineChild(
  scenario: CrashScenario,
  ws: Workspace,
  options: { trigger?: KillTrigger; clockAheadMs?: number } = {},
): Promise<CliRun> {
  return runCli(['--config', ws.configPath, '--json', '--log-level', 'info', ...scenario.args], {
    cwd: ws.dir,
    // Exactly the workspace's variables (plus PATH): nothing inherited from the test process.
    env: ws.env,
    isolatedEnv: true,
    ...(options.trigger ? { killWhen: options.trigger } : {}),
    ...(options.clockAheadMs ? { nodeArgs: ['--import', clockAheadImport(options.clockAheadMs)] } : {}),
  });
}

/** Folds the WAL into the file and copies it, so a template is one self-contained file. */
async function saveTemplate(dbPath: string, to: string): Promise<void> {
  const db = new Database(dbPath);
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
  await mkdir(join(to, '..'), { recursive: true });
  await copyFile(dbPath, to);
}

/** Credit figures of one simulator's usage log. */
export interface CreditFigures {
  /** Credits billed net of refunds. */
  spent: number;
  /** Domains billed for more than one enrichment (net of refunds), with their counts. */
  enrichedTwice: Array<[string, number]>;
  /** Billed `POST /exports` requests. */
  exportsBilled: number;
}

/** Reads the credit figures from the simulator's usage log. */
export function creditFigures(usage: readonly UsageEntry[]): CreditFigures {
  const perDomain = new Map<string, number>();
  let spent = 0;
  let exportsBilled = 0;
  for (const u of usage) {
    const net = u.credits - (u.refundedCredits ?? 0);
    spent += net;
    if (u.endpoint === 'POST /enrichments' && net > 0) {
      const domain = u.domain ?? '?';
      perDomain.set(domain, (perDomain.get(domain) ?? 0) + 1);
    }
    if (u.endpoint === 'POST /exports' && net > 0) exportsBilled += 1;
  }
  return {
    spent,
    enrichedTwice: [...perDomain].filter(([, n]) => n > 1),
    exportsBilled,
  };
}

/**
 * The crash matrix of one pipeline: a fault-free run first (its request count and duration bound
 * the kill points), then trials until `requiredKills` SIGKILLs have landed mid-run. A trial is a
 * fresh workspace identical to the fault-free one, the command killed at a seeded random point
 * (every third trial, its first recovery killed too), then run again to the end. After each kill and after
 * the recovery, the checks below run; the scenario then compares the result with the fault-free
 * one. Returns the figures (also printed as one line).
 */
export async function runCrashMatrix(scenario: CrashScenario, requiredKills: number): Promise<MatrixFigures> {
  const seed = (CRASH_SEED ^ hashString(scenario.pipeline)) >>> 0;
  const prng = new Prng(seed);
  const random = (): number => prng.next();

  let templateDb: string | undefined;
  if (scenario.prepare) {
    const ws = await openWorkspace(scenario);
    await scenario.prepare(ws);
    templateDb = join(ws.dir, 'template', 'mirror.sqlite');
    await saveTemplate(ws.dbPath, templateDb);
  }

  // The fault-free result: same catalogue, same faults, no kill.
  const baseline = await openWorkspace(scenario, templateDb);
  const spawnedAt = Date.now();
  const clean = await runPipelineChild(scenario, baseline);
  expect(clean.code, `fault-free ${scenario.pipeline}: ${describeRun(clean)}`).toBe(0);
  const startedAt = Date.parse(String(summaryOf(clean)?.startedAt));
  const workStartMs = Number.isFinite(startedAt) ? Math.max(0, startedAt - spawnedAt) : 0;
  const cleanRequests = baseline.sim.control.requests().length;
  expect(integrityCheck(baseline.dbPath)).toBe('ok');
  expect(await nonFinalFiles(baseline.exportsDir, baseline.snapshotsDir)).toEqual([]);

  if (process.env.CRASH_DEBUG)
    process.stderr.write(
      `${scenario.pipeline} fault-free: ${Math.round(clean.elapsedMs)} ms, work from ${workStartMs} ms, ${cleanRequests} requests\n`,
    );
  // A time kill point is an offset from when the trial's own work started (its pipeline_runs row
  // appeared), drawn within how long the work took in the fault-free run. Counted from the
  // spawn, as before, it missed the work on a loaded machine, where one run's start-up can
  // outlast another's whole work. A kill that lands after the work, or a run that ends before
  // its kill point, lowers the bound, as for request kill points.
  const upper = {
    request: Math.max(1, cleanRequests),
    time: Math.max(1, clean.elapsedMs - workStartMs),
  };
  const figures: MatrixFigures = {
    pipeline: scenario.pipeline,
    seed: CRASH_SEED,
    trials: 0,
    killsInjected: 0,
    killsMidRun: 0,
    killsAtStartup: 0,
    killsAfterFinish: 0,
    killsMidWrite: 0,
    notInjected: 0,
    byTrigger: { request: 0, time: 0, file: 0 },
    recovered: 0,
    refused: {},
    notes: {},
    laterRuns: 0,
    paidTwice: 0,
    maxCredits: 0,
    budget: scenario.budget,
    creditsChecked: 0,
  };

  const draw = (): KillPoint => {
    const kind = scenario.triggers[Math.floor(random() * scenario.triggers.length)]!;
    if (kind === 'request') return { kind, value: 1 + Math.floor(random() * upper.request) };
    if (kind === 'time') return { kind, value: Math.round(random() * upper.time) };
    return { kind, value: Math.round(random() * 20) };
  };

  const maxAttempts = requiredKills * 4 + 4;
  for (let attempt = 1; figures.killsMidRun < requiredKills; attempt++) {
    expect(
      attempt,
      `${scenario.pipeline}: too many kill points missed (${figures.notInjected}); seed ${CRASH_SEED}`,
    ).toBeLessThanOrEqual(maxAttempts);
    const ws = await openWorkspace(scenario, templateDb);
    const runs: CliRun[] = [];
    const points: string[] = [];
    const where = (): string =>
      `[crash seed ${CRASH_SEED}] ${scenario.pipeline} attempt ${attempt}, kill points ${points.join(' → ')}`;

    // Every third trial also kills the first recovery (a crash while taking over from a crash).
    const killCount = figures.trials % 3 === 2 ? 2 : 1;
    let landed = 0;
    for (let k = 0; k < killCount; k++) {
      const point = draw();
      points.push(`${point.kind}:${point.value}`);
      const before = ws.sim.control.requests().length;
      const outcome = await runPipelineChild(scenario, ws, { trigger: trigger(point, ws, before) });
      runs.push(outcome);
      if (!outcome.killedByUs) {
        // Finished before the kill point: not a kill. The first one teaches an earlier bound.
        figures.notInjected += 1;
        points[points.length - 1] += ' (too late)';
        if (process.env.CRASH_DEBUG) process.stderr.write(`${where()}: finished first\n`);
        if (k === 0) {
          if (point.kind === 'request')
            upper.request = Math.max(1, Math.floor((ws.sim.control.requests().length - before) * 0.9));
          if (point.kind === 'time') upper.time = Math.max(1, point.value * 0.9);
        }
        break;
      }
      expect(outcome.signal, where()).toBe('SIGKILL');
      landed += 1;
      figures.killsInjected += 1;
      figures.byTrigger[point.kind] += 1;
      const stage: KillStage = killStage(ws.dbPath, outcome.pid);
      points[points.length - 1] += ` (${stage})`;
      if (stage === 'mid-run') figures.killsMidRun += 1;
      else if (stage === 'startup') figures.killsAtStartup += 1;
      else figures.killsAfterFinish += 1;
      if (k === 0 && point.kind === 'time' && stage === 'after-finish')
        upper.time = Math.max(1, Math.min(upper.time, point.value));
      if ((await nonFinalFiles(ws.exportsDir, ws.snapshotsDir)).length > 0) {
        figures.killsMidWrite += 1;
        points[points.length - 1] += ' (temp file left)';
      }
      await checkAfterKill(ws, baseline, where());
    }
    if (landed === 0) continue;
    figures.trials += 1;

    // Run again to the end (the last run above may already have been it, if its kill missed).
    let final = runs[runs.length - 1]!;
    if (final.killedByUs) {
      final = await runPipelineChild(scenario, ws);
      runs.push(final);
    }
    if (scenario.needsLaterRun?.(ws)) {
      ws.sim.control.advanceClock(LATER_MS);
      final = await runPipelineChild(scenario, ws, { clockAheadMs: LATER_MS });
      runs.push(final);
      figures.laterRuns += 1;
    }

    // Checks every pipeline shares.
    expect(integrityCheck(ws.dbPath), where()).toBe('ok');
    expect(await nonFinalFiles(ws.exportsDir, ws.snapshotsDir), where()).toEqual([]);
    expect(await brokenSnapshotFiles(ws.snapshotsDir), where()).toEqual([]);
    expect(queryMirror(ws.dbPath, 'SELECT * FROM locks'), `${where()}: lock left after the recovery`).toEqual(
      [],
    );
    expect(
      queryMirror(ws.dbPath, "SELECT id, pipeline, pid FROM pipeline_runs WHERE status = 'running'"),
      `${where()}: runs still marked running after the recovery`,
    ).toEqual([]);
    const credits = creditFigures(ws.sim.control.usage());
    expect(credits.enrichedTwice, `${where()}: enrichments paid twice`).toEqual([]);
    expect(credits.exportsBilled, `${where()}: exports paid`).toBeLessThanOrEqual(1);
    expect(credits.spent, `${where()}: credits over the budget`).toBeLessThanOrEqual(scenario.budget);
    figures.paidTwice += credits.enrichedTwice.length + Math.max(0, credits.exportsBilled - 1);
    figures.maxCredits = Math.max(figures.maxCredits, credits.spent);
    figures.creditsChecked += 1;

    if (process.env.CRASH_DEBUG)
      process.stderr.write(
        `${where()}: runs ${runs.map((r) => `${r.code ?? r.signal}/${Math.round(r.elapsedMs)}ms`).join(', ')}\n`,
      );
    const verdict = await scenario.verify({ trial: ws, baseline, final, runs, where: where() });
    for (const [note, n] of Object.entries(verdict.notes ?? {}))
      figures.notes[note] = (figures.notes[note] ?? 0) + n;
    if (verdict.recovered) figures.recovered += 1;
    else
      figures.refused[verdict.refusal ?? 'refused'] =
        (figures.refused[verdict.refusal ?? 'refused'] ?? 0) + 1;
    await ws.sim.close();
  }

  // eslint-disable-next-line no-console -- the one-line summary is this suite's output (docs/reliability.md)
  console.log(summaryLine(figures));
  return figures;
}

/**
 * The highest pipeline_runs id in the mirror; 0 when there is none, no mirror or table yet, or
 * the child holds it locked while it creates the schema (read again on the next tick). One
 * connection per call: the kill trigger calls this every millisecond until the work starts.
 */
function lastRunId(dbPath: string): number {
  if (!existsSync(dbPath)) return 0;
  try {
    return queryMirror<{ id: number | null }>(dbPath, 'SELECT max(id) AS id FROM pipeline_runs')[0]?.id ?? 0;
  } catch {
    return 0; // no such table yet, or locked
  }
}

function trigger(point: KillPoint, ws: Workspace, requestsBefore: number): KillTrigger {
  if (point.kind === 'request') return () => ws.sim.control.requests().length - requestsBefore >= point.value;
  if (point.kind === 'time') {
    // The trial's run is the first pipeline_runs row after the ones already there.
    const runsBefore = lastRunId(ws.dbPath);
    let workSeenAt: number | null = null;
    return (elapsedMs) => {
      if (workSeenAt === null) {
        if (lastRunId(ws.dbPath) <= runsBefore) return false;
        workSeenAt = elapsedMs;
      }
      return elapsedMs - workSeenAt >= point.value;
    };
  }
  // Only a temporary file this process made counts: a killed predecessor may have left one.
  let existing: Set<string> | null = null;
  let seenAt: number | null = null;
  return async (elapsedMs) => {
    if (seenAt === null) {
      const temporary = [
        ...(await listFiles(ws.exportsDir)).map((f) => `exports/${f}`),
        ...(await listFiles(ws.snapshotsDir)).map((f) => `snapshots/${f}`),
      ].filter(isTemporary);
      if (existing === null) existing = new Set(temporary);
      else if (temporary.some((f) => !existing!.has(f))) seenAt = elapsedMs;
    }
    return seenAt !== null && elapsedMs - seenAt >= point.value;
  };
}

function isTemporary(relativePath: string): boolean {
  const name = relativePath.split('/').pop() ?? '';
  return name.startsWith('.') || name.endsWith('.part') || name.includes('.tmp');
}

/**
 * Right after a kill: the mirror (if the process got as far as creating it) passes
 * `PRAGMA integrity_check`, every Parquet file and manifest under a final name is whole, and
 * every export file under a final name is byte for byte the fault-free run's file.
 */
async function checkAfterKill(ws: Workspace, baseline: Workspace, where: string): Promise<void> {
  if (existsSync(ws.dbPath)) expect(integrityCheck(ws.dbPath), `${where}: right after the kill`).toBe('ok');
  expect(await brokenSnapshotFiles(ws.snapshotsDir), `${where}: right after the kill`).toEqual([]);
  for (const file of await listFiles(ws.exportsDir)) {
    if (!FINAL_EXPORT_FILE.test(file)) continue;
    expect(sha256(join(ws.exportsDir, file)), `${where}: ${file} right after the kill`).toBe(
      sha256(join(baseline.exportsDir, file)),
    );
  }
}

function sha256(path: string): string | null {
  if (!existsSync(path)) return null;
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** The one-line summary of a pipeline's matrix. */
export function summaryLine(f: MatrixFigures): string {
  const refused = Object.entries(f.refused)
    .map(([why, n]) => `${n} ${why}`)
    .join(', ');
  return (
    `crash matrix [seed ${f.seed}] ${f.pipeline}: ${f.killsInjected} kills injected in ${f.trials} trials ` +
    `(${f.killsMidRun} mid-run, ${f.killsAtStartup} at start-up, ${f.killsAfterFinish} after the work; ` +
    `${f.killsMidWrite} left a temporary file behind; ` +
    `by trigger request ${f.byTrigger.request} / time ${f.byTrigger.time} / file ${f.byTrigger.file}; ` +
    `${f.notInjected} kill points too late, not counted); ` +
    `${f.recovered}/${f.trials} recovered to the fault-free result` +
    (refused ? `, ${refused}` : '') +
    (f.laterRuns ? `, ${f.laterRuns} needed the documented later run` : '') +
    Object.entries(f.notes)
      .map(([note, n]) => `, ${n} ${note}`)
      .join('') +
    `; credits checked in ${f.creditsChecked} trials: paid twice ${f.paidTwice}, max ${f.maxCredits} of budget ${f.budget}`
  );
}

/** Kills per pipeline: one under `npm test`, ten under `npm run test:resilience`. */
export const REQUIRED_KILLS = scale(1, 10);

/**
 * The one test of a pipeline's crash matrix: enough kills landed mid-run, and every trial
 * recovered to the fault-free result, or (only where `allowRefusals`) ended in a refusal the
 * scenario asserted as documented.
 */
export function describeCrashMatrix(
  scenario: CrashScenario,
  title: string,
  options: { allowRefusals?: boolean } = {},
): void {
  describe(`crash matrix: ${scenario.pipeline}`, () => {
    it(
      `killed with SIGKILL at seeded random points, then run again: ${title}`,
      async () => {
        const figures = await runCrashMatrix(scenario, REQUIRED_KILLS);
        expect(figures.killsMidRun).toBeGreaterThanOrEqual(REQUIRED_KILLS);
        if (!options.allowRefusals) expect(figures.recovered).toBe(figures.trials);
      },
      scale(120_000, 600_000),
    );
  });
}
