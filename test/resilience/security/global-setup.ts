/**
 * vitest global setup of the suite-wide key scan (see `artifacts.ts`).
 *
 * Setup creates the artifact directory and exposes it to the workers in ARTIFACTS_ENV. Teardown
 * searches every kept child process output for every registered key, collects the temp dir scans, prints
 * the figures, and throws when a key was found anywhere, which makes `vitest run` fail. The
 * message names file, offset, key id (a hash prefix) and form, never the key. The artifact
 * directory is removed after a clean scan and kept after a failed one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ARTIFACTS_ENV, scanArtifacts } from './artifacts.js';

export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'domain-sync-key-scan-'));
  process.env[ARTIFACTS_ENV] = dir;
  return () => {
    const started = Date.now();
    const report = scanArtifacts(dir);
    const ms = Date.now() - started;
    const mb = (n: number): string => (n / 1024 / 1024).toFixed(1);
    const line =
      `key scan: ${report.keys} API keys (${report.forms} byte forms; ${report.keysTooShort} shorter than 8 chars not searched), ` +
      `${report.cliRuns} child processes (${report.cliFiles} stdout/stderr files, ${mb(report.cliBytes)} MB), ` +
      `${report.dirs} temp dirs (${report.dirFiles} files, ${mb(report.dirBytes)} MB, scanned in ${report.dirScanMs} ms of worker time): ` +
      `${report.hits.length} hits; end-of-suite part ${ms} ms`;
    process.stderr.write(`\n${line}\n`);
    if (report.hits.length > 0) {
      // vitest reports a teardown error as "error during close" but still exits 0; the exit
      // status is what CI reads, so set it as well as throwing.
      process.exitCode = 1;
      throw new Error(
        `An API key was found in test outputs (artifacts kept in ${dir}):\n${report.hits.slice(0, 50).join('\n')}` +
          (report.hits.length > 50 ? `\n… and ${report.hits.length - 50} more` : ''),
      );
    }
    rmSync(dir, { recursive: true, force: true });
  };
}
