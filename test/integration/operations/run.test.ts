import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startTestSimulator } from '../../helpers/start-simulator.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { runCli } from '../../helpers/cli.js';
import { runsAndLocks, simEnv, writeOperationsConfig } from './helpers.js';

interface StepSummary {
  index: number;
  type: string;
  status: string;
  runId: number | null;
}

describe('domain-sync run NAME', () => {
  it('exits 2 for an unknown name, listing the configured pipelines', async () => {
    const dir = await tempDir();
    await writeOperationsConfig(dir, { pipelines: { hourly: { steps: ['sync'] } } });
    const result = await runCli(['--json', 'run', 'nope'], { cwd: dir });
    expect(result.code).toBe(2);
    const summary = JSON.parse(result.stdout) as { error: { code: string; message: string } };
    expect(summary.error.code).toBe('ERR_USAGE');
    expect(summary.error.message).toBe(
      'no pipeline named "nope" in the config; configured pipelines: hourly, nightly, sync-publish, weekly-reenrich',
    );
  });

  it('exits 2 before running anything when a step option is unknown or wrong, naming its key path', async () => {
    const dir = await tempDir();
    await writeOperationsConfig(dir, {
      pipelines: {
        typo: {
          steps: [
            'snapshot',
            { type: 'snapshot', options: { tabels: ['domains'] } },
            { type: 'enrich', options: { budget: -1, staleAfter: 'a month' } },
          ],
        },
      },
    });
    const result = await runCli(['run', 'typo'], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'pipelines.typo.steps[1].options.tabels: unknown option of a snapshot step (valid: out, tables, to)',
    );
    expect(result.stderr).toContain('pipelines.typo.steps[2].options.budget: expected a whole number ≥ 0');
    expect(result.stderr).toContain('pipelines.typo.steps[2].options.staleAfter: expected a duration');
  });

  it('a failing step stops the steps after it; each step is recorded under the parent run', async () => {
    const dir = await tempDir();
    // A snapshot directory below a regular file cannot be created: the step fails.
    const blocker = join(dir, 'not-a-dir');
    await writeFile(blocker, 'x');
    await writeOperationsConfig(dir, {
      pipelines: {
        brittle: { steps: [{ type: 'snapshot', options: { out: join(blocker, 'snaps') } }, 'snapshot'] },
      },
    });
    // Snapshot-only pipelines need no API key or base URL.
    const result = await runCli(['--json', 'run', 'brittle'], { cwd: dir });
    expect(result.code).toBe(1);
    const summary = JSON.parse(result.stdout) as {
      runId: number;
      status: string;
      error: { code: string; message: string };
      stats: { steps: StepSummary[] };
    };
    expect(summary.status).toBe('failed');
    expect(summary.error.message).toMatch(/^step 0 \(snapshot, run \d+\) of brittle: /);
    expect(summary.stats.steps.map((s) => [s.index, s.status])).toEqual([
      [0, 'failed'],
      [1, 'skipped'],
    ]);

    const { runs } = runsAndLocks(join(dir, 'mirror.sqlite'));
    const parent = runs.find((r) => r.id === summary.runId)!;
    expect(parent).toMatchObject({ pipeline: 'brittle', status: 'failed' });
    expect((JSON.parse(parent.stats!) as { steps: StepSummary[] }).steps).toEqual(summary.stats.steps);
    expect(runs.map((r) => [r.pipeline, r.status])).toEqual([
      ['brittle', 'failed'],
      ['snapshot', 'failed'],
    ]);
  });

  it('with continueOnError the next steps still run, and the exit status is still the worst outcome', async () => {
    const dir = await tempDir();
    const blocker = join(dir, 'not-a-dir');
    await writeFile(blocker, 'x');
    await writeOperationsConfig(dir, {
      pipelines: {
        tolerant: {
          steps: [
            { type: 'snapshot', options: { out: join(blocker, 'snaps') }, continueOnError: true },
            { type: 'snapshot', options: { tables: ['pipeline_runs'] } },
          ],
        },
      },
    });
    const result = await runCli(['--json', 'run', 'tolerant'], { cwd: dir });
    expect(result.code).toBe(1);
    const summary = JSON.parse(result.stdout) as { status: string; stats: { steps: StepSummary[] } };
    expect(summary.status).toBe('failed');
    expect(summary.stats.steps.map((s) => s.status)).toEqual(['failed', 'done']);
    expect(result.stdout).not.toContain('skipped');
  });

  it('runs nightly (sync then snapshot); pipeline log lines carry their run id; log.file gets the JSON logs', async () => {
    const sim = await startTestSimulator({ domains: 25 });
    const dir = await tempDir();
    await writeOperationsConfig(dir, { log: { file: 'logs/domain-sync.log' } });
    const result = await runCli(['--json', 'run', 'nightly'], { cwd: dir, env: simEnv(sim) });
    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout) as { runId: number; stats: { steps: StepSummary[] } };
    expect(summary.stats.steps.map((s) => [s.type, s.status])).toEqual([
      ['sync', 'done'],
      ['snapshot', 'done'],
    ]);

    const lines = (await readFile(join(dir, 'logs', 'domain-sync.log'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const started = lines.filter((l) => l.msg === 'pipeline started');
    expect(started.map((l) => [l.pipeline, l.runId])).toEqual([
      ['nightly', summary.runId],
      ['sync', summary.stats.steps[0]!.runId],
      ['snapshot', summary.stats.steps[1]!.runId],
    ]);
    // Step lines name their own run and the parent run (never two runIds on one line).
    for (const line of lines.filter((l) => l.pipeline === 'sync' || l.pipeline === 'snapshot')) {
      expect(line.runId).toBeTypeOf('number');
      expect(line.parentRunId).toBe(summary.runId);
    }
    const { runs } = runsAndLocks(join(dir, 'mirror.sqlite'));
    expect(runs.map((r) => [r.id, r.pipeline, r.status])).toEqual([
      [summary.runId, 'nightly', 'done'],
      [summary.stats.steps[0]!.runId, 'sync', 'done'],
      [summary.stats.steps[1]!.runId, 'snapshot', 'done'],
    ]);
  });
});
