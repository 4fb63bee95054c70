import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { AbortedError, DomainSyncError } from '../util/domain-sync-error.js';
import { redactText } from '../log/redact.js';
import { DOMAIN_SYNC_VERSION } from '../util/version.js';
import { CommandContext, type CommandResult, type GlobalFlags } from './context.js';
import { EXIT, exitCodeForError } from './exit-codes.js';
import { failureSummary } from './failure-summary.js';
import type { CliIo } from './output.js';

/** A command's action: lazily imported, given the context and its own parsed options. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each command declares its own flag type
export type Action = (ctx: CommandContext, options: any, args: string[]) => Promise<CommandResult>;

const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

function positiveInt(_flag: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n <= 0)
      throw new InvalidArgumentError(`expected a positive integer, got "${value}"`);
    return n;
  };
}

function nonNegativeInt(_flag: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 0)
      throw new InvalidArgumentError(`expected a whole number ≥ 0, got "${value}"`);
    return n;
  };
}

/**
 * Runs the CLI with `argv` (without node and script) and returns the exit status. Never calls
 * process.exit; `main.ts` does. Every error is mapped here, in one place.
 */
export async function runCli(argv: readonly string[], io: CliIo, signal: AbortSignal): Promise<number> {
  let exitCode: number = EXIT.OK;
  let ctx: CommandContext | undefined;
  const jsonRequested = argv.includes('--json');

  const program = new Command('domain-sync')
    .description(
      'Keep a local SQLite mirror, with Parquet snapshots, of the Domain Enrichment Service catalogue.',
    )
    .option('--config <file>', 'config file (default: $DOMAIN_SYNC_CONFIG or ./config.json when present)')
    .option('--db <file>', 'SQLite mirror file (overrides database.path and $DOMAIN_SYNC_DB)')
    .option(
      '--base-url <url>',
      'service base URL ending in /api/v1/igaming (overrides $DOMAIN_SYNC_BASE_URL)',
    )
    .option('--json', 'print one JSON summary object on stdout at the end, nothing else')
    .option('--log-level <level>', 'silent, error, warn, info, debug or trace')
    .version(DOMAIN_SYNC_VERSION, '-V, --version', 'print the version of domain-sync and exit')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({
      // With --json, --version prints a JSON object too (the help stays text: it is for reading).
      writeOut: (text) =>
        io.stdout.write(jsonRequested && text === `${DOMAIN_SYNC_VERSION}\n` ? versionJson() : text),
      writeErr: (text) => io.stderr.write(usageSafe(text)),
    });

  const register = (command: Command, load: () => Promise<Action>): void => {
    command.exitOverride().action(async (...params: unknown[]) => {
      const self = params[params.length - 1] as Command;
      const options = self.opts();
      const args = params.slice(0, -2).filter((p): p is string => typeof p === 'string');
      const flags = self.optsWithGlobals() as GlobalFlags;
      ctx = new CommandContext(io, flags, signal, self.name());
      const action = await load();
      const result = await action(ctx, options, args);
      exitCode = result.exitCode;
      ctx.output.result(
        {
          command: self.name(),
          ok: result.exitCode === EXIT.OK,
          exitCode: result.exitCode,
          ...result.summary,
        },
        result.human,
      );
    });
  };

  declareCommands(program, register);

  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      if (
        error.code === 'commander.helpDisplayed' ||
        error.code === 'commander.version' ||
        error.code === 'commander.help'
      ) {
        return EXIT.OK;
      }
      if (jsonRequested) {
        io.stdout.write(
          `${JSON.stringify({ ok: false, exitCode: EXIT.USAGE, error: { code: 'ERR_USAGE', message: usageSafe(error.message) } })}\n`,
        );
      }
      return EXIT.USAGE;
    }
    exitCode = exitCodeForError(error);
    reportError(error, io, ctx, jsonRequested, exitCode);
  }
  return exitCode;
}

/** What `--json --version` prints: the version in a summary object like every command's. */
function versionJson(): string {
  return `${JSON.stringify({ command: 'version', ok: true, exitCode: EXIT.OK, version: DOMAIN_SYNC_VERSION })}\n`;
}

/** Registers a command's action: how to load it once commander parsed its flags. */
export type RegisterCommand = (command: Command, load: () => Promise<Action>) => void;

/**
 * Declares every command and its flags on `program`, and hands each to `register` with the loader
 * of its action. The table test of the step options (test/unit/cli/step-options.test.ts) parses
 * argv with these same declarations.
 */
export function declareCommands(program: Command, register: RegisterCommand): void {
  // One same-shape commander declaration per command (flags differ); a table would hide the help text.
  register(
    program
      .command('sync')
      .description('page through GET /domains and fetch the profiles of new or changed domains (0 credits)')
      .option('--filter <name=value>', 'filter by a canonical filter name (repeatable)', collect)
      .option('--full', 'fetch every profile, not only new or changed ones')
      .option('--no-profiles', 'store the listing only, fetch no profile')
      .option(
        '--concurrency <n>',
        'profile requests in flight (default: api.concurrency)',
        positiveInt('--concurrency'),
      ),
    async () => (await import('./commands/sync.js')).syncCommand as Action,
  );
  register(
    program
      .command('export')
      .description(
        'create a bulk export, poll it, download it into exports.dir and load it into the mirror (costs credits)',
      )
      .option('--filter <name=value>', 'filter by a canonical filter name (repeatable)', collect)
      .addOption(new Option('--format <format>', 'file format').choices(['csv', 'json']).default('csv'))
      .option('--fields <a,b>', 'sections to include (default: all)')
      .option(
        '--max-credits <n>',
        'refuse when the estimated cost is higher',
        nonNegativeInt('--max-credits'),
      )
      .option('--no-load', 'download only; do not load the file into the mirror')
      .option('--recreate-expired', "when the unfinished export's file has expired, pay for a new one")
      .option(
        '--forget-unknown',
        'create a new export although an earlier POST with the same parameters may have been billed',
      ),
    async () => (await import('./commands/export.js')).exportCommand as Action,
  );
  register(
    program
      .command('enrich')
      .description('re-enrich stale domains under a credit budget (10 credits per run, 0 when cached)')
      .option(
        '--budget <n>',
        'credits this invocation may spend at most (default: enrich.budget)',
        nonNegativeInt('--budget'),
      )
      .option(
        '--stale-after <duration>',
        'a domain is stale when enriched longer ago than this, e.g. 30d (default: enrich.staleAfter)',
      )
      .option('--domain <domain>', 'enrich this domain whatever its freshness (repeatable)', collect)
      .option(
        '--filter <name=value>',
        'narrow the stale domains (jurisdiction, payment_category; repeatable)',
        collect,
      )
      // Option declarations look alike by design: commander's fluent API, one call per flag.
      .option(
        '--concurrency <n>',
        'runs in flight (default: enrich.concurrency)',
        positiveInt('--concurrency'),
      )
      .option('--strategy <s>', 'enrichment strategy (default: enrich.strategy)')
      .option('--wait <duration>', 'how long to wait for started runs (default: enrich.wait, 30m)')
      .option('--dry-run', 'print the plan and its worst-case cost; spend nothing'),
    async () => (await import('./commands/enrich.js')).enrichCommand as Action,
  );
  register(
    program
      .command('snapshot')
      .description('write Parquet snapshots of the mirror tables (Hive-style snapshot_date partitions)')
      .option('--out <dir>', 'snapshot directory (default: snapshots.dir)')
      .option('--tables <a,b>', 'tables to write (default: all mirror tables)')
      .option(
        '--to <name>',
        'also upload the snapshot to this s3 destination (repeatable; default: snapshots.to)',
        collect,
      ),
    async () => (await import('./commands/snapshot.js')).snapshotCommand as Action,
  );
  register(
    program
      .command('publish')
      .description(
        'copy what changed in the mirror since the last publish into PostgreSQL destinations (merged by key)',
      )
      .option(
        '--to <name>',
        'destination to publish to (repeatable; default: every postgres destination)',
        collect,
      )
      .option('--tables <a,b>', 'tables to publish (default: every published table)')
      .option('--full', 'send every row, not only those changed since the last publish'),
    async () => (await import('./commands/publish.js')).publishCommand as Action,
  );
  register(
    program
      .command('run')
      .description('run a pipeline defined in the config by name (e.g. nightly)')
      .argument('<name>', 'pipeline name')
      .option(
        '--wait <duration>',
        'when another process holds the mirror lock, wait this long for it, e.g. 10m (default: lock.wait, 0s)',
      ),
    async () => (await import('./commands/run.js')).runCommand as Action,
  );
  register(
    program
      .command('schedule')
      .description("long-running: run the config's pipelines on their cron schedules")
      .option(
        '--wait <duration>',
        'a scheduled run waits this long for a mirror lock held by another process (default: lock.wait, 0s)',
      )
      .option(
        '--stop-timeout <duration>',
        'after SIGINT/SIGTERM, how long running pipelines get to stop at a safe point (default: 30s)',
      ),
    async () => (await import('./commands/schedule.js')).scheduleCommand as Action,
  );
  register(
    program.command('account').description('show the plan and credit balance'),
    async () => (await import('./commands/account.js')).accountCommand as Action,
  );
  register(
    program.command('status').description('mirror counts, freshness, last runs, credits spent'),
    async () => (await import('./commands/status.js')).statusCommand as Action,
  );
  register(
    program.command('migrate').description('create or upgrade the mirror schema'),
    async () => (await import('./commands/migrate.js')).migrateCommand as Action,
  );
  register(
    program
      .command('simulate')
      .description('run the bundled simulator of the service (offline development, demos, CI)')
      .option('--port <n>', 'port to listen on (0 = any free port)', nonNegativeInt('--port'), 8787)
      .option('--host <host>', 'address to listen on', '127.0.0.1')
      .option('--domains <n>', 'catalogue size', positiveInt('--domains'), 5000)
      .option('--seed <n>', 'catalogue seed', nonNegativeInt('--seed'), 1)
      .addOption(
        new Option('--time-scale <x>', 'multiplies run durations (30–120 s) and export times')
          .default(1)
          .argParser(positiveNumber('--time-scale')),
      )
      .addOption(new Option('--credits <n>', 'credits granted ("unlimited" for no quota)').default('100000'))
      .option(
        '--api-key <key>',
        'the key the simulator accepts (default: $DOMAIN_SYNC_API_KEY or client_simulator_key)',
      )
      .option(
        '--quirks',
        'exercise what the spec allows without showing it (unseen enum values, odd timestamps…)',
      ),
    async () => (await import('./commands/simulate.js')).simulateCommand as Action,
  );
  register(
    program
      .command('ui')
      .description('serve a read-only dashboard of the mirror in the browser (needs no API key)')
      .option('--port <n>', 'port to listen on (0 = any free port)', nonNegativeInt('--port'), 8788)
      .option(
        '--host <host>',
        'address to listen on (anything but loopback is reachable from other machines)',
        '127.0.0.1',
      ),
    async () => (await import('./commands/ui.js')).uiCommand as Action,
  );
}

/**
 * Usage errors echo the offending argument, and a user may have typed a key into one
 * (`--api-key=client_…`, which no command accepts): redact keys, and never repeat the value of
 * an unknown `--option=value`.
 */
function usageSafe(text: string): string {
  return redactText(text).replace(/(unknown option '--?[^'=\s]+=)[^']*'/g, "$1…'");
}

function reportError(
  error: unknown,
  io: CliIo,
  ctx: CommandContext | undefined,
  json: boolean,
  exitCode: number,
): void {
  const rawCode = (error as { code?: unknown } | null)?.code;
  const known =
    error instanceof DomainSyncError || (typeof rawCode === 'string' && rawCode.startsWith('ERR_'));
  const code = known ? String(rawCode) : 'ERR_INTERNAL';
  const message = error instanceof Error ? redactText(error.message) : redactText(String(error));
  if (json) {
    const summary = failureSummary(ctx?.commandName ?? null, exitCode, { code, message });
    if (ctx) ctx.output.result(summary);
    else io.stdout.write(`${JSON.stringify(summary)}\n`);
  }
  if (!known) {
    io.stderr.write(`domain-sync: internal error (this is a bug, please report it): ${message}\n`);
    if (error instanceof Error && error.stack) ctx?.logger.debug('stack', { stack: redactText(error.stack) });
  } else if (!(error instanceof AbortedError)) {
    io.stderr.write(`domain-sync: ${message}\n`);
  }
}

function positiveNumber(_flag: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isFinite(n) || n <= 0)
      throw new InvalidArgumentError(`expected a positive number, got "${value}"`);
    return n;
  };
}
