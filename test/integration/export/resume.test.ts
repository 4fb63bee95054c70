import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../../src/simulator/index.js';
import { startCli as startCliProcess, type CliProcess } from '../../helpers/cli.js';
import { startTestSimulator } from '../../helpers/start-simulator.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { exportPosts, writeTestConfig } from './helpers.js';

/** `domain-sync ARGS --config DIR/config.json --json` with the key and base URL of `sim`. */
function startCli(sim: RunningSimulator, dir: string, args: string[]): CliProcess {
  return startCliProcess([...args, '--config', join(dir, 'config.json'), '--json'], {
    cwd: dir,
    env: { DOMAIN_SYNC_API_KEY: sim.apiKey, DOMAIN_SYNC_BASE_URL: sim.baseUrl },
  });
}

/** Waits (polling, no timing assertion) until `condition` holds. */
async function until(condition: () => boolean, what: string, limitMs = 60_000): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > limitMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

describe('export resumes after the process is killed', () => {
  it('killed while polling: the re-run finishes the same export with one POST /exports', async () => {
    // Pending for 10 simulated minutes, so the first process is certainly still polling.
    const sim = await startTestSimulator({ domains: 300, timeScale: 1, exportReadyMs: 600_000 });
    const dir = await tempDir('domain-sync-export-kill-');
    // A killed process leaves its mirror lock behind; with the default lease and no wait, the re-run
    // must take it over at once from the dead holder.
    writeTestConfig(dir, { lock: { lease: '60s', wait: '0s' } });
    const first = startCli(sim, dir, ['export', '--filter', 'jurisdiction=mga', '--format', 'json']);
    await until(
      () => sim.control.usage().some((u) => u.endpoint === 'GET /exports/:id'),
      'a poll of the export',
    );
    first.kill();
    expect((await first.exited).code).toBeNull();
    sim.control.advanceClock(700_000);

    const second = startCli(sim, dir, ['export', '--filter', 'jurisdiction=mga', '--format', 'json']);
    const out = await second.exited;
    expect(out.code, out.stderr).toBe(0);
    const summary = JSON.parse(out.stdout) as {
      stats: { mode: string; rowsLoaded: number; exportId: number };
    };
    expect(summary.stats.mode).toBe('resumed');
    expect(summary.stats.exportId).toBe(1);
    expect(summary.stats.rowsLoaded).toBe(sim.control.truth.listDomains({ jurisdiction: 'mga' }).length);
    expect(exportPosts(sim)).toBe(1);
  });

  it('killed while downloading: the re-run downloads the same export again with one POST /exports', async () => {
    // A large file (every section of 20,000 domains, tens of MB) so the download takes a while.
    const sim = await startTestSimulator({ domains: 20_000, timeScale: 0.001 });
    const dir = await tempDir('domain-sync-export-kill-');
    writeTestConfig(dir, { lock: { lease: '60s', wait: '0s' } });
    const exportsDir = join(dir, 'exports');
    const first = startCli(sim, dir, ['export', '--format', 'csv', '--no-load']);
    let sawPart = false;
    await until(() => {
      sawPart = existsSync(exportsDir) && readdirSync(exportsDir).some((n) => n.endsWith('.part'));
      return sawPart;
    }, 'the download to start');
    first.kill();
    await first.exited;
    // Killed mid-download: only the temporary file exists, never a partial final file.
    expect(readdirSync(exportsDir).filter((n) => !n.endsWith('.part'))).toEqual([]);

    const second = startCli(sim, dir, ['export', '--format', 'csv', '--no-load']);
    const out = await second.exited;
    expect(out.code, out.stderr).toBe(0);
    const summary = JSON.parse(out.stdout) as { stats: { mode: string; exportId: number; filePath: string } };
    expect(summary.stats.mode).toBe('resumed');
    expect(summary.stats.exportId).toBe(1);
    expect(readdirSync(exportsDir)).toEqual(['export-1.csv']);
    expect(exportPosts(sim)).toBe(1);
  }, 120_000);

  it('SIGINT during the load stops it at the next batch (exit 1, interrupted); the re-run loads the file', async () => {
    // Enough rows (40 batches) that the load runs on well after its first batch. The load reads
    // rows synchronously, so this holds only while it lets the event loop turn, where the signal
    // is handled (pipelines/export/key-order.ts): without the turns it ran to the end and exited 0.
    const domains = 10_000;
    const sim = await startTestSimulator({ domains, timeScale: 0.001 });
    const dir = await tempDir('domain-sync-export-sigint-');
    writeTestConfig(dir);
    const first = startCli(sim, dir, ['export', '--format', 'json']);
    await first.waitForEvent((e) => String(e.msg).startsWith('mirror baseline'), 120_000);
    first.kill('SIGINT');
    const stopped = await first.exited;
    expect(stopped.code, stopped.stderr).toBe(1);
    expect(first.summary()).toMatchObject({ status: 'interrupted' });
    expect(first.events().some((e) => e.msg === 'export loaded')).toBe(false);

    const second = startCli(sim, dir, ['export', '--format', 'json']);
    const out = await second.exited;
    expect(out.code, out.stderr).toBe(0);
    expect(second.summary()).toMatchObject({
      status: 'done',
      stats: { mode: 'resumed', rowsLoaded: domains },
    });
    expect(exportPosts(sim)).toBe(1);
  }, 180_000);

  it('--max-credits below the estimate exits 0 with the refusal in the summary and no POST', async () => {
    const sim = await startTestSimulator({ domains: 300, timeScale: 0.01 });
    const dir = await tempDir('domain-sync-export-cli-');
    writeTestConfig(dir);
    const out = await startCli(sim, dir, ['export', '--filter', 'jurisdiction=mga', '--max-credits', '1'])
      .exited;
    expect(out.code).toBe(0);
    const summary = JSON.parse(out.stdout) as { status: string; error: { code: string } };
    expect(summary.status).toBe('budget_reached');
    expect(summary.error.code).toBe('ERR_OVER_MAX_CREDITS');
    expect(exportPosts(sim)).toBe(0);
  });
});
