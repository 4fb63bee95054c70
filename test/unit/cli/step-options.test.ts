import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { prepareStep } from '../../../pipelines/registry.js';
import { STEP_SCHEMAS, type StepType } from '../../../pipelines/step-options/index.js';
import { enrichOptionsFromFlags } from '../../../src/cli/commands/enrich.js';
import { exportOptionsFromFlags } from '../../../src/cli/commands/export.js';
import { publishOptionsFromFlags } from '../../../src/cli/commands/publish.js';
import { snapshotOptionsFromFlags } from '../../../src/cli/commands/snapshot.js';
import { syncOptionsFromFlags } from '../../../src/cli/commands/sync.js';
import { declareCommands } from '../../../src/cli/program.js';

/*
 * One meaning per option: every option of every command that runs a pipeline, written both ways
 * (the command's flags, parsed by the CLI's own commander declarations and mapped by the command;
 * a named pipeline's step options, prepared by the step registry), must give the pipeline the
 * same options, or be refused by both. Each row also pins what the options are.
 */

const CWD = '/work/here';

/** The config's destinations both spellings are checked against (only the type is read). */
const DESTINATIONS = { lake: { type: 's3' }, archive: { type: 's3' }, team: { type: 'postgres' } } as const;

/** The command's flags → the options its pipeline gets, as the command computes them. */
const FROM_FLAGS: Record<StepType, (flags: Record<string, unknown>, cwd: string) => object> = {
  sync: syncOptionsFromFlags,
  export: exportOptionsFromFlags,
  enrich: enrichOptionsFromFlags,
  snapshot: (flags, cwd) => snapshotOptionsFromFlags(flags, cwd, DESTINATIONS),
  publish: publishOptionsFromFlags,
};

/** A program with the CLI's commands, whose actions only hand back the parsed flags. */
function cliProgram(onAction: (command: string, flags: Record<string, unknown>) => void): Command {
  const program = new Command('domain-sync')
    .exitOverride()
    .configureOutput({ writeOut: () => {}, writeErr: () => {} });
  declareCommands(program, (command) => {
    command.exitOverride().action((...params: unknown[]) => {
      const self = params[params.length - 1] as Command;
      onAction(self.name(), self.opts());
    });
  });
  return program;
}

/** argv → the options of the command's pipeline; throws what the CLI would (exit 2). */
async function viaFlags(argv: string[]): Promise<object> {
  let parsed: { command: string; flags: Record<string, unknown> } | undefined;
  await cliProgram((command, flags) => (parsed = { command, flags })).parseAsync(argv, { from: 'user' });
  return FROM_FLAGS[parsed!.command as StepType](parsed!.flags, CWD);
}

/** A step of a named pipeline → the options its pipeline gets; throws the config problems. */
function viaStep(type: StepType, options: Record<string, unknown>): object {
  const issues: string[] = [];
  const prepared = prepareStep(
    { type, options, continueOnError: false },
    'pipelines.t.steps[0]',
    issues,
    CWD,
    DESTINATIONS,
  );
  if (prepared === null) throw new Error(issues.join('; '));
  return prepared.options;
}

interface Row {
  name: string;
  argv: string[];
  step: Record<string, unknown>;
  /** What the pipeline gets both ways. */
  options?: object;
  /** Both ways are refused, with a message matching this. */
  refused?: RegExp;
  /** The flag has no step option: the step spelling is refused with this instead. */
  stepRefused?: RegExp;
}

const D30 = 30 * 86_400_000;

// prettier-ignore
const ROWS: Record<StepType, Row[]> = {
  sync: [
    { name: 'no flags', argv: [], step: {}, options: { filters: {}, full: false, profiles: true } },
    { name: '--full', argv: ['--full'], step: { full: true }, options: { filters: {}, full: true, profiles: true } },
    { name: '--no-profiles', argv: ['--no-profiles'], step: { profiles: false }, options: { filters: {}, full: false, profiles: false } },
    { name: '--concurrency', argv: ['--concurrency', '4'], step: { concurrency: 4 }, options: { filters: {}, full: false, profiles: true, concurrency: 4 } },
    {
      name: '--filter, every kind of value',
      argv: ['--filter', 'jurisdiction=mga', '--filter', 'has_affiliate_programs=1', '--filter', 'per_page=50', '--filter', 'enriched_after=2026-01-02T03:04:05Z'],
      step: { filters: { jurisdiction: 'mga', has_affiliate_programs: true, per_page: 50, enriched_after: '2026-01-02T03:04:05Z' } },
      options: { filters: { jurisdiction: 'mga', has_affiliate_programs: true, per_page: 50, enriched_after: '2026-01-02T03:04:05.000Z' }, full: false, profiles: true },
    },
    { name: 'filter values written as text in a step', argv: ['--filter', 'has_affiliate_programs=false', '--filter', 'per_page=7'], step: { filters: { has_affiliate_programs: 'false', per_page: '7' } }, options: { filters: { has_affiliate_programs: false, per_page: 7 }, full: false, profiles: true } },
    { name: 'a managed filter', argv: ['--filter', 'page=2'], step: { filters: { page: 2 } }, refused: /"page" is managed by sync itself/ },
    { name: 'an unknown filter', argv: ['--filter', 'country=de'], step: { filters: { country: 'de' } }, refused: /unknown filter "country"/ },
    { name: 'a bad boolean filter', argv: ['--filter', 'has_affiliate_programs=maybe'], step: { filters: { has_affiliate_programs: 'maybe' } }, refused: /expected true or false/ },
    { name: 'per_page out of range', argv: ['--filter', 'per_page=501'], step: { filters: { per_page: 501 } }, refused: /from 1 to 500/ },
    { name: 'a bad timestamp', argv: ['--filter', 'enriched_after=yesterday'], step: { filters: { enriched_after: 'yesterday' } }, refused: /ISO 8601/ },
    { name: 'an empty filter value', argv: ['--filter', 'jurisdiction='], step: { filters: { jurisdiction: ' ' } }, refused: /empty value/ },
    { name: '--concurrency 0', argv: ['--concurrency', '0'], step: { concurrency: 0 }, refused: /positive/ },
  ],
  export: [
    { name: 'no flags', argv: [], step: {}, options: { filters: {}, format: 'csv', load: true, recreateExpired: false, forgetUnknown: false } },
    {
      name: 'every step option',
      argv: ['--filter', 'jurisdiction=mga', '--format', 'json', '--fields', 'licenses,geo', '--max-credits', '500', '--no-load', '--recreate-expired'],
      step: { filters: { jurisdiction: 'mga' }, format: 'json', fields: ['licenses', 'geo'], maxCredits: 500, load: false, recreateExpired: true },
      options: { filters: { jurisdiction: 'mga' }, format: 'json', fields: ['licenses', 'geo'], maxCredits: 500, load: false, recreateExpired: true, forgetUnknown: false },
    },
    { name: '--fields with blanks', argv: ['--fields', ' payment_methods , ,related_domains'], step: { fields: [' payment_methods ', '', 'related_domains'] }, options: { filters: {}, format: 'csv', fields: ['payment_methods', 'related_domains'], load: true, recreateExpired: false, forgetUnknown: false } },
    { name: '--fields empty: no section', argv: ['--fields', ''], step: { fields: [] }, options: { filters: {}, format: 'csv', fields: [], load: true, recreateExpired: false, forgetUnknown: false } },
    { name: '--max-credits 0', argv: ['--max-credits', '0'], step: { maxCredits: 0 }, options: { filters: {}, format: 'csv', maxCredits: 0, load: true, recreateExpired: false, forgetUnknown: false } },
    { name: 'an unknown section', argv: ['--fields', 'licenses,nope'], step: { fields: ['licenses', 'nope'] }, refused: /unknown section "nope"/ },
    { name: 'a managed filter', argv: ['--filter', 'per_page=10'], step: { filters: { per_page: 10 } }, refused: /"per_page" is managed by export itself/ },
    { name: 'an unknown format', argv: ['--format', 'xml'], step: { format: 'xml' }, refused: /csv.*json/ },
    { name: 'a negative --max-credits', argv: ['--max-credits=-1'], step: { maxCredits: -1 }, refused: /whole number ≥ 0/ },
    {
      name: '--forget-unknown (the command only)',
      argv: ['--forget-unknown'],
      step: { forgetUnknown: true },
      options: { filters: {}, format: 'csv', load: true, recreateExpired: false, forgetUnknown: true },
      stepRefused: /--forget-unknown is a flag of the export command only/,
    },
  ],
  enrich: [
    { name: 'no flags: the stale domains', argv: [], step: {}, options: { filters: {}, domains: [], requestedOnly: false } },
    { name: '--domain alone: only those', argv: ['--domain', 'a.com', '--domain', 'b.com'], step: { domains: ['a.com', 'b.com'] }, options: { filters: {}, domains: ['a.com', 'b.com'], requestedOnly: true } },
    { name: '--domain and --filter: also the stale ones the filter selects', argv: ['--domain', 'a.com', '--filter', 'jurisdiction=mga', '--budget', '500'], step: { domains: ['a.com'], filters: { jurisdiction: 'mga' }, budget: 500 }, options: { filters: { jurisdiction: 'mga' }, domains: ['a.com'], requestedOnly: false, budget: 500 } },
    { name: '--domain and --stale-after: also the stale ones', argv: ['--domain', 'a.com', '--stale-after', '30d'], step: { domains: ['a.com'], staleAfter: '30d' }, options: { filters: {}, domains: ['a.com'], requestedOnly: false, staleAfterMs: D30 } },
    { name: '--domain trimmed, blanks dropped', argv: ['--domain', ' a.com ', '--domain', ' '], step: { domains: [' a.com ', ' '] }, options: { filters: {}, domains: ['a.com'], requestedOnly: true } },
    {
      name: 'the other options',
      argv: ['--budget', '100', '--concurrency', '3', '--strategy', 'deep', '--wait', '15m', '--filter', 'payment_category=crypto'],
      step: { budget: 100, concurrency: 3, strategy: 'deep', wait: '15m', filters: { payment_category: 'crypto' } },
      options: { filters: { payment_category: 'crypto' }, domains: [], requestedOnly: false, budget: 100, waitMs: 900_000, concurrency: 3, strategy: 'deep' },
    },
    { name: '--dry-run does not change the options', argv: ['--dry-run', '--budget', '5'], step: { budget: 5 }, options: { filters: {}, domains: [], requestedOnly: false, budget: 5 } },
    { name: '--dry-run is the command\'s own', argv: ['--dry-run'], step: { dryRun: true }, options: { filters: {}, domains: [], requestedOnly: false }, stepRefused: /--dry-run is a flag of the enrich command only/ },
    { name: 'a filter the mirror cannot select on', argv: ['--filter', 'geo=de'], step: { filters: { geo: 'de' } }, refused: /understands only jurisdiction, payment_category/ },
    { name: 'a managed filter', argv: ['--filter', 'page=1'], step: { filters: { page: 1 } }, refused: /"page" is managed by enrich itself/ },
    { name: 'a bad --stale-after', argv: ['--stale-after', 'a month'], step: { staleAfter: 'a month' }, refused: /expected a duration/ },
    { name: 'a bad --wait', argv: ['--wait', 'soon'], step: { wait: 'soon' }, refused: /expected a duration/ },
    { name: 'a blank --strategy', argv: ['--strategy', ' '], step: { strategy: ' ' }, refused: /non-empty/ },
    { name: 'a negative --budget', argv: ['--budget=-1'], step: { budget: -1 }, refused: /whole number ≥ 0/ },
  ],
  snapshot: [
    { name: 'no flags', argv: [], step: {}, options: {} },
    { name: '--out and --tables', argv: ['--out', 'snaps', '--tables', 'domains, licenses'], step: { out: 'snaps', tables: ['domains', ' licenses'] }, options: { outDir: `${CWD}/snaps`, tables: ['domains', 'licenses'] } },
    { name: 'an absolute --out', argv: ['--out', '/data/snaps'], step: { out: '/data/snaps' }, options: { outDir: '/data/snaps' } },
    { name: 'an unknown table', argv: ['--tables', 'domains,nope'], step: { tables: ['domains', 'nope'] }, refused: /unknown table "nope"; valid tables are/ },
    { name: 'no table', argv: ['--tables', ','], step: { tables: [] }, refused: /at least one table name/ },
    { name: 'an empty --out', argv: ['--out', ''], step: { out: '' }, refused: /non-empty path/ },
    { name: '--to, repeated', argv: ['--to', 'lake', '--to', 'archive', '--to', 'lake'], step: { to: ['lake', 'archive', 'lake'] }, options: { to: ['lake', 'archive'] } },
    { name: '--to an unknown destination', argv: ['--to', 'nope'], step: { to: ['nope'] }, refused: /no destination named "nope" \(s3 destinations in the config: lake, archive\)/ },
    { name: '--to a postgres destination', argv: ['--to', 'team'], step: { to: ['team'] }, refused: /destination "team" is of type postgres, not s3/ },
    { name: '--to a bad name', argv: ['--to', '../x'], step: { to: ['../x'] }, refused: /"..\/x" is not a destination name/ },
    { name: 'to: no destination', argv: ['--to', ' '], step: { to: [] }, refused: /at least one destination name/ },
  ],
  publish: [
    { name: 'no flags: every postgres destination, every table', argv: [], step: {}, options: { full: false } },
    { name: '--to, --tables and --full', argv: ['--to', 'wh', '--to', ' bi ', '--tables', 'domains, change_log', '--full'], step: { to: ['wh', ' bi '], tables: ['domains', ' change_log'], full: true }, options: { to: ['wh', 'bi'], tables: ['domains', 'change_log'], full: true } },
    { name: 'an unknown table', argv: ['--tables', 'domains,locks'], step: { tables: ['domains', 'locks'] }, refused: /unknown table "locks"; valid tables are domains, licenses/ },
    { name: 'no table', argv: ['--tables', ','], step: { tables: [] }, refused: /at least one table name/ },
    { name: 'a blank --to', argv: ['--to', ' '], step: { to: [' '] }, refused: /at least one destination name/ },
  ],
};

describe.each(Object.keys(ROWS) as StepType[])('%s: the flags and a step mean the same', (type) => {
  it.each(ROWS[type])('$name', async (row) => {
    const flags = viaFlags([type, ...row.argv]);
    if (row.refused) {
      await expect(flags).rejects.toThrow(row.refused);
      expect(() => viaStep(type, row.step)).toThrow(row.refused);
      return;
    }
    await expect(flags).resolves.toEqual(row.options);
    if (row.stepRefused) expect(() => viaStep(type, row.step)).toThrow(row.stepRefused);
    else expect(viaStep(type, row.step)).toEqual(row.options);
  });

  it('has a row for every flag of the command, and every flag is in the schema', () => {
    const command = cliProgram(() => {}).commands.find((c) => c.name() === type)!;
    const declared = command.options.map((o) => o.long!).sort();
    const schema = STEP_SCHEMAS[type];
    expect(
      Object.values(schema.options)
        .map((spec) => spec.flag)
        .sort(),
    ).toEqual(declared);
    const tried = new Set(ROWS[type].flatMap((row) => row.argv.map((arg) => arg.replace(/=.*$/, ''))));
    expect(declared.filter((flag) => !tried.has(flag))).toEqual([]);
    const stepKeys = new Set(ROWS[type].flatMap((row) => Object.keys(row.step)));
    expect(Object.keys(schema.options).filter((key) => !stepKeys.has(key))).toEqual([]);
  });
});

describe('step options that are no flag', () => {
  it('an unknown key names the valid ones', () => {
    expect(() => viaStep('snapshot', { tabels: ['domains'] })).toThrow(
      'pipelines.t.steps[0].options.tabels: unknown option of a snapshot step (valid: out, tables, to)',
    );
  });

  it('a problem names its key path, down to the filter', () => {
    expect(() => viaStep('enrich', { filters: { jurisdiction: 'mga', geo: 'de' }, budget: -1 })).toThrow(
      'pipelines.t.steps[0].options.filters.geo: enrich selects from the mirror and understands only ' +
        'jurisdiction, payment_category; pipelines.t.steps[0].options.budget: expected a whole number ≥ 0, got number -1',
    );
  });
});
