import { describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { diffMirrorWithTruth } from '../../helpers/mirror-truth.js';
import { queryMirror } from '../../helpers/mirror.js';
import { startTestSimulator } from '../../helpers/start-simulator.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { writeTestConfig } from '../../helpers/test-context.js';

/*
 * Regression test for a bug the chaos soak found, fixed in
 * pipelines/export/transfer.ts, verifiedFile (a file whose load failed is downloaded again).
 * Before the fix: a download answered with a malformed body (200, `Content-Type:
 * application/json`, no `Content-Disposition`, not the file) is saved as the export's file with
 * its checksum; loading it fails (ERR_EXPORT_FILE_INVALID), and every later run loads the same
 * saved file again instead of downloading it again, although the export has not expired. The
 * paid export never reached the mirror without a manual step (deleting the file).
 */
describe('chaos: a malformed export download', () => {
  it('is downloaded again and loaded by a later run, without paying again', async () => {
    const sim = await startTestSimulator({ domains: 60, seed: 3, timeScale: 0.01 });
    const dir = await tempDir('domain-sync-chaos-');
    const { path: configPath, config } = await writeTestConfig(dir, { api: { pollIntervalMs: 20 } });
    sim.control.setFaults([{ kind: 'malformed', method: 'GET', path: '/exports/1/download', times: 1 }]);
    const args = ['export', '--filter', 'jurisdiction=mga', '--json', '--config', configPath];
    const env = { DOMAIN_SYNC_API_KEY: sim.apiKey, DOMAIN_SYNC_BASE_URL: sim.baseUrl };
    const exits: number[] = [];
    for (let n = 0; n < 4 && exits.at(-1) !== 0; n++) {
      const run = await runCli(args, { env, cwd: dir });
      exits.push(run.code ?? -1);
    }
    expect(sim.control.faultStats().injected).toEqual({ malformed: 1 });
    expect(exits.at(-1), `exit statuses of the runs: ${exits.join(', ')}`).toBe(0);
    // Nothing bought twice: one billed POST /exports, and its export is the one loaded.
    const billed = sim.control.usage().filter((u) => u.endpoint === 'POST /exports' && u.credits > 0);
    expect(billed.map((u) => u.exportId)).toEqual([1]);
    const [row] = queryMirror<{ loaded_at: string | null }>(
      config.database.path,
      'SELECT loaded_at FROM exports WHERE id = 1',
    );
    expect(row?.loaded_at).toEqual(expect.any(String));
    const matching = sim.control.truth.listDomains({ jurisdiction: 'mga' });
    expect(matching.length).toBeGreaterThan(0);
    expect(diffMirrorWithTruth(config.database.path, sim, matching)).toEqual([]);
  });
});
