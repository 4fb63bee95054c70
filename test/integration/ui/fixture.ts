/**
 * A mirror for the dashboard's tests, filled the way a user fills it, through the real commands
 * (run in-process) against a simulator: two syncs with changes between them (a licence suspended,
 * a licence removed, a payment method dropped and one added, a domain added), an enrich run that
 * spends credits, an export, a snapshot, an `account` answer, a failed run and a held lock. The
 * catalogue carries markup where a careless page would run it: a company name with
 * `<img onerror>`, a licence status with `<script>`, a payment method named with `<svg onload>`.
 *
 * Built once per test file (`beforeAll`), so it does not use the per-test helpers that register
 * `onTestFinished`; `close()` releases everything.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { addDomainWhere } from '../../helpers/change-log.js';
import { runCli } from '../../../src/cli/program.js';
import { loadConfig } from '../../../src/config/load.js';
import type { Config } from '../../../src/config/config.js';
import { openMirror } from '../../../src/mirror/database.js';
import { tryAcquireLock } from '../../../src/mirror/store/locks.js';
import { finishPipelineRun, startPipelineRun } from '../../../src/mirror/store/runs.js';
import { startSimulator } from '../../../src/simulator/index.js';
import type { RunningSimulator } from '../../../src/simulator/index.js';
import { registerKey } from '../../resilience/security/artifacts.js';
import { testConfigFile } from '../../helpers/test-context.js';

/** Markup planted in the catalogue; each must show as text, never as an element. */
export const PROBES = {
  companyName: `Probe <img src=x onerror="document.title='xss-company'"> & Co`,
  licenceStatus: `<script>document.title='xss-licence'</script>`,
  paymentMethod: `<svg onload="document.title='xss-payment'">`,
  paymentCategory: `x"><b>bold</b>`,
} as const;

/** The lock token the fixture holds: a holder's secret, never to be shown. */
export const LOCK_TOKEN = 'ui-fixture-lock-token-7f3a9c';

/** The fixture: its dir, config, mirror path, simulator and the domains it changed. */
export interface UiFixture {
  dir: string;
  configPath: string;
  config: Config;
  mirrorPath: string;
  sim: RunningSimulator;
  /** The domain whose company name, licence status and payment method carry the probes. */
  probeDomain: string;
  /** A domain with a licence whose status changed between the syncs (its history has 2 rows). */
  licenceDomain: string;
  /** The licence number that changed there. */
  licenceNumber: string;
  /** That licence's status in the first sync and in the second. */
  licenceStatuses: [string, string];
  /**
   * A domain the second sync found new, with a licence in the changed licence's jurisdiction: its
   * licences and payment methods are logged as added (the first sync's were its baseline).
   */
  addedDomain: string;
  /** A domain the quirky catalogue names with non-ASCII letters (its URL is percent-encoded). */
  unicodeDomain: string | undefined;
  /** Runs a command in-process against the fixture's simulator and mirror; throws unless it exits 0. */
  cli(argv: string[]): Promise<number>;
  close(): Promise<void>;
}

async function cli(
  argv: string[],
  cwd: string,
  env: Record<string, string>,
  allowed: readonly number[] = [0],
): Promise<number> {
  const sink = new PassThrough();
  const err: Buffer[] = [];
  const errSink = new PassThrough();
  sink.resume();
  errSink.on('data', (b: Buffer) => err.push(b));
  const code = await runCli(argv, { stdout: sink, stderr: errSink, env, cwd }, new AbortController().signal);
  if (!allowed.includes(code))
    throw new Error(
      `fixture: domain-sync ${argv.join(' ')} exited ${code}: ${Buffer.concat(err).toString().slice(-2000)}`,
    );
  return code;
}

/** Builds the fixture; see the file comment. */
export async function buildUiFixture(options: { domains?: number } = {}): Promise<UiFixture> {
  const dir = await mkdtemp(join(tmpdir(), 'ui-fixture-'));
  const sim = await startSimulator({
    domains: options.domains ?? 240,
    seed: 7,
    quirks: true,
    timeScale: 0.002,
    cacheWindowMs: 0,
    runFailureRate: 0.2,
  });
  registerKey(sim.apiKey, 'simulator-default');
  try {
    const configPath = join(dir, 'config.json');
    await writeFile(
      configPath,
      JSON.stringify(
        testConfigFile(dir, {
          api: { baseUrl: sim.baseUrl },
          log: { level: 'warn' },
          credits: { maxPerDay: 500, maxPerMonth: 5000 },
          destinations: {
            warehouse: { type: 'postgres', url: 'postgres://analyst@db.example.internal:5432/catalogue' },
            lake: { type: 's3', url: 's3://example-bucket/domain-sync', region: 'eu-west-1' },
          },
          // No snapshots.to: the fixture's snapshot would upload to a bucket no test serves. The
          // Snapshots page lists the destinations from the config all the same.
        }),
        null,
        2,
      ),
    );
    const loaded = loadConfig({ env: {}, cwd: dir, configPath });
    if (loaded.config === null) throw new Error(`fixture config: ${loaded.errors.join('; ')}`);
    const config = loaded.config;
    const env = { DOMAIN_SYNC_API_KEY: sim.apiKey, DOMAIN_SYNC_CONFIG: configPath };
    await cli(['account'], dir, env);
    await cli(['sync'], dir, env);

    const all = sim.control.truth.listDomains();
    const withLicences = all.filter((d) => (sim.control.truth.profile(d)?.licenses.length ?? 0) > 1);
    const probeDomain = withLicences[0]!;
    const licenceDomain = withLicences[1]!;
    const probe = sim.control.truth.profile(probeDomain)!;
    sim.control.mutate.setCompanyName(probeDomain, PROBES.companyName);
    sim.control.mutate.setLicenceStatus(probeDomain, probe.licenses[0]!.license_number, PROBES.licenceStatus);
    sim.control.mutate.addPaymentMethod(probeDomain, {
      normalized_name: PROBES.paymentMethod,
      category: PROBES.paymentCategory,
    });
    const licence = sim.control.truth.profile(licenceDomain)!.licenses[0]!;
    const licenceStatuses: [string, string] = [
      licence.status,
      licence.status === 'active' ? 'suspended' : 'active',
    ];
    sim.control.mutate.setLicenceStatus(licenceDomain, licence.license_number, licenceStatuses[1]);
    sim.control.mutate.removeLicence(
      licenceDomain,
      sim.control.truth.profile(licenceDomain)!.licenses[1]!.license_number,
    );
    const other = all.find(
      (d) =>
        d !== probeDomain &&
        d !== licenceDomain &&
        (sim.control.truth.profile(d)?.payment_methods.length ?? 0) > 1,
    )!;
    sim.control.mutate.removePaymentMethod(
      other,
      sim.control.truth.profile(other)!.payment_methods[0]!.normalized_name,
    );
    // A domain new to the catalogue after the first sync (the mirror's baseline), holding a
    // licence in the changed licence's jurisdiction: the second sync logs its licences as added.
    const addedDomain = addDomainWhere(
      sim,
      (p) => p.licenses.some((l) => l.jurisdiction === licence.jurisdiction),
      `with a ${licence.jurisdiction} licence`,
    );
    await cli(['sync'], dir, env);
    await cli(
      ['enrich', '--budget', '40', '--domain', all[3]!, '--domain', all[4]!, '--domain', all[5]!],
      dir,
      env,
      [0, 1],
    );
    await cli(['export', '--filter', 'jurisdiction=mga', '--max-credits', '1000'], dir, env);
    await cli(['snapshot'], dir, env);

    // A failed run and a held lock, recorded the way the runtime records them.
    const mirror = await openMirror(config.database.path);
    try {
      const now = Date.now();
      const failed = startPipelineRun(mirror, {
        pipeline: 'sync',
        startedAt: new Date(now - 3_600_000).toISOString(),
        pid: 4242,
      });
      finishPipelineRun(mirror, failed, {
        status: 'failed',
        finishedAt: new Date(now - 3_590_000).toISOString(),
        stats: { pages: 3, failures: 1 },
        error: 'GET /domains?page=4 failed: 503 Service Unavailable after 5 retries',
      });
      tryAcquireLock(mirror, {
        name: 'mirror',
        token: LOCK_TOKEN,
        pipeline: 'nightly',
        pid: 4343,
        hostname: 'batch-host',
        now: new Date(now).toISOString(),
        expiresAt: new Date(now + 3_600_000).toISOString(),
      });
    } finally {
      await mirror.close();
    }
    return {
      dir,
      configPath,
      config,
      mirrorPath: config.database.path,
      sim,
      probeDomain,
      licenceDomain,
      licenceNumber: licence.license_number,
      licenceStatuses,
      addedDomain,
      unicodeDomain: all.find((d) => /[^\p{ASCII}]/u.test(d)),
      cli: (argv) => cli(argv, dir, env),
      async close() {
        await sim.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await sim.close();
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}
