/**
 * `npm run demo`: the whole product against the bundled simulator, offline, with no API key.
 * Starts the simulator on a free loopback port, then runs the real CLI commands a user would
 * run (printed as they go), and finishes with a few analyst queries on the mirror.
 */
import { rm, mkdir, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { runCli } from '../src/cli/program.js';
import { openMirror } from '../src/mirror/database.js';
import { queryReadOnly } from '../src/mirror/store/adhoc.js';
import { startSimulator } from '../src/simulator/index.js';

const root = resolve(import.meta.dirname, '..', '..');
const demoDir = join(root, 'data', 'demo');
const DOMAINS = 5000;
const API_KEY = 'client_demo_key';

async function main(): Promise<number> {
  const started = Date.now();
  await rm(demoDir, { recursive: true, force: true });
  await mkdir(demoDir, { recursive: true });
  const sim = await startSimulator({
    domains: DOMAINS,
    seed: 1,
    timeScale: 0.01,
    credits: 2000,
    apiKeys: [API_KEY],
  });
  const configPath = join(demoDir, 'config.json');
  await writeFile(
    configPath,
    `${JSON.stringify(
      {
        api: { baseUrl: sim.baseUrl, requestsPerSecond: 2000, pollIntervalMs: 200 },
        database: { path: join(demoDir, 'mirror.sqlite') },
        exports: { dir: join(demoDir, 'exports') },
        snapshots: { dir: join(demoDir, 'snapshots') },
        log: { level: 'error' },
      },
      null,
      2,
    )}\n`,
  );
  const env = { ...process.env, DOMAIN_SYNC_API_KEY: API_KEY, DOMAIN_SYNC_CONFIG: configPath };
  const io = { stdout: process.stdout, stderr: process.stderr, env, cwd: root };
  const signal = new AbortController().signal;
  const say = (text: string): void => void process.stdout.write(`${text}\n`);
  const step = async (title: string, argv: string[]): Promise<number> => {
    say(`\n━━ ${title}\n$ domain-sync ${argv.join(' ')}`);
    const code = await runCli(argv, io, signal);
    if (code !== 0) say(`(exit status ${code})`);
    return code;
  };

  say(
    `domain-sync demo — simulator on ${sim.baseUrl}, ${DOMAINS} synthetic domains, no network, no real key`,
  );
  say(`config: ${relative(root, configPath)}`);
  let failures = 0;
  failures += (await step('Plan and credit balance (0 credits)', ['account'])) === 0 ? 0 : 1;
  failures +=
    (await step('First sync: list every domain, fetch every profile (0 credits)', ['sync'])) === 0 ? 0 : 1;

  // A day passes upstream: some domains are re-enriched, one licence is suspended.
  sim.control.advanceClock(86_400_000);
  const domains = sim.control.truth.listDomains();
  for (const domain of domains.slice(100, 125)) sim.control.mutate.reenrich(domain);
  const withLicence = domains.find((d) => (sim.control.truth.profile(d)?.licenses.length ?? 0) > 0);
  if (withLicence) {
    const licence = sim.control.truth.profile(withLicence)!.licenses[0]!;
    sim.control.mutate.setLicenceStatus(withLicence, licence.license_number, 'suspended');
  }
  // The demo is a script of same-shape steps (title, command, count a failure), by design.
  failures += (await step('A day later: incremental sync fetches only what changed', ['sync'])) === 0 ? 0 : 1;
  failures +=
    (await step('What a budgeted re-enrichment would do (spends nothing)', [
      'enrich',
      '--budget',
      '100',
      '--stale-after',
      '180d',
      '--dry-run',
    ])) === 0
      ? 0
      : 1;
  failures +=
    (await step('Re-enrich the stalest domains, never spending more than 100 credits', [
      'enrich',
      '--budget',
      '100',
      '--stale-after',
      '180d',
      '--concurrency',
      '8',
    ])) === 0
      ? 0
      : 1;
  failures +=
    (await step('A bulk export of all MGA-licensed domains is refused before any credit is spent', [
      'export',
      '--filter',
      'jurisdiction=mga',
      '--max-credits',
      '300',
    ])) === 0
      ? 0
      : 1;
  failures +=
    (await step('A narrower export (UKGC licence, targeting GB) fits: created, polled, downloaded, loaded', [
      'export',
      '--filter',
      'jurisdiction=ukgc',
      '--filter',
      'geo=GB',
      '--format',
      'json',
      '--max-credits',
      '400',
    ])) === 0
      ? 0
      : 1;
  failures += (await step('Parquet snapshots of every mirror table', ['snapshot'])) === 0 ? 0 : 1;
  failures += (await step('Mirror status', ['status'])) === 0 ? 0 : 1;

  const mirror = await openMirror(join(demoDir, 'mirror.sqlite'));
  try {
    say('\n━━ A few analyst queries on the mirror (sqlite3 data/demo/mirror.sqlite)');
    const show = (title: string, sql: string): void => {
      say(`\n-- ${title}\n${sql}`);
      console.table(queryReadOnly(mirror, sql));
    };
    show(
      'Domains per active licence jurisdiction',
      `SELECT jurisdiction, count(DISTINCT domain_normalized) AS domains
       FROM licenses WHERE removed_at IS NULL GROUP BY jurisdiction ORDER BY domains DESC`,
    );
    show(
      'Payment categories offered',
      `SELECT category, count(*) AS methods FROM payment_methods WHERE removed_at IS NULL
       GROUP BY category ORDER BY methods DESC`,
    );
    show(
      'Licence changes seen by the mirror',
      `SELECT domain_normalized, jurisdiction, license_number, status FROM licenses
       WHERE status <> 'active' LIMIT 5`,
    );
  } finally {
    await mirror.close();
  }
  const account = sim.control.account();
  await sim.close();
  say(
    `\n━━ Done in ${((Date.now() - started) / 1000).toFixed(1)} s. Credits used on the simulator: ${account.credits_used}.`,
  );
  say(
    `mirror:  ${relative(root, join(demoDir, 'mirror.sqlite'))}  (open it with sqlite3, DuckDB or any SQLite client)`,
  );
  say(
    `parquet: ${relative(root, join(demoDir, 'snapshots'))}/<table>/snapshot_date=YYYY-MM-DD/part-0.parquet`,
  );
  say(
    `duckdb:  SELECT jurisdiction, count(*) FROM read_parquet('${relative(root, join(demoDir, 'snapshots'))}/licenses/*/*.parquet', hive_partitioning = true) GROUP BY 1;`,
  );
  say('schema:  docs/schema.md');
  say(
    `\nTry the dashboard of this mirror (read-only, no API key; Ctrl-C stops it):\n  npx domain-sync --config ${relative(root, configPath)} ui\n  then open http://127.0.0.1:8788/ (docs/ui.md)`,
  );
  return failures === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error('demo failed:', error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
