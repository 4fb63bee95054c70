import { startSimulator } from '../../simulator/index.js';
import { UsageError } from '../../util/domain-sync-error.js';
import type { CommandContext, CommandResult } from '../context.js';
import { EXIT } from '../exit-codes.js';

interface SimulateOptions {
  port: number;
  host: string;
  domains: number;
  seed: number;
  timeScale: number;
  credits: string;
  apiKey?: string;
  quirks?: boolean;
}

const DEFAULT_SIMULATOR_KEY = 'client_simulator_key';

/**
 * `domain-sync simulate`: serves the bundled simulator until SIGINT/SIGTERM. Needs no API key.
 * With `--api-key K` only K is accepted; without it, any key starting with `client_` is (the
 * simulator holds no secrets, and this lets users keep their usual environment).
 */
export async function simulateCommand(ctx: CommandContext, options: SimulateOptions): Promise<CommandResult> {
  const credits = parseCredits(options.credits);
  // Without --api-key the simulator accepts any client_… key, so `DOMAIN_SYNC_API_KEY=client_x
  // domain-sync account --base-url …` works against it out of the box.
  const apiKey = options.apiKey ?? DEFAULT_SIMULATOR_KEY;
  const openMode = options.apiKey === undefined;
  // Read the config first, so that log.level and log.file apply to the simulator's log too.
  const logger = ctx.config && ctx.logger;
  const sim = await startSimulator({
    port: options.port,
    host: options.host,
    domains: options.domains,
    seed: options.seed,
    timeScale: options.timeScale,
    credits,
    apiKeys: [apiKey],
    acceptAnyClientKey: openMode,
    quirks: options.quirks === true,
    logger,
  });
  const lines = [
    `simulator listening on ${sim.origin}`,
    `  base URL   ${sim.baseUrl}`,
    `  catalogue  ${options.domains} domains, seed ${options.seed}, time scale ${options.timeScale}`,
    `  credits    ${credits === null ? 'unlimited' : credits}`,
    openMode
      ? `  API key    any key starting with client_ (e.g. export DOMAIN_SYNC_API_KEY=${DEFAULT_SIMULATOR_KEY})`
      : '  API key    only the value given with --api-key',
    `  control    ${sim.origin}/_sim/state (see docs/simulator.md)`,
    'press Ctrl-C to stop',
  ];
  if (ctx.output.json) {
    ctx.io.stderr.write(
      `${JSON.stringify({ event: 'listening', origin: sim.origin, baseUrl: sim.baseUrl })}\n`,
    );
  } else {
    ctx.io.stdout.write(`${lines.join('\n')}\n`);
  }
  await new Promise<void>((resolve) => {
    if (ctx.signal.aborted) resolve();
    else ctx.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  const account = sim.control.account();
  await sim.close();
  return {
    exitCode: EXIT.OK,
    summary: { origin: sim.origin, baseUrl: sim.baseUrl, account },
    human: ['simulator stopped'],
  };
}

function parseCredits(text: string): number | null {
  if (text === 'unlimited' || text === 'null') return null;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) {
    throw new UsageError(`--credits: expected a whole number ≥ 0 or "unlimited", got "${text}"`);
  }
  return n;
}
