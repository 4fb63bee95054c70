import type { RunningSimulator } from '../../src/simulator/index.js';
import { readMirror } from './mirror.js';

/** The JSON sections of a profile, stored in `domain_sections`. */
const SECTIONS = ['game_providers', 'affiliate_programs', 'geo', 'related_domains'] as const;

interface DomainRow {
  domain_normalized: string;
  domain: string | null;
  company_name: string | null;
  status: string | null;
  last_enriched_at: string | null;
  operator_name: string | null;
  operator_legal_entity_name: string | null;
  operator_country: string | null;
  brand_name: string | null;
  brand_slug: string | null;
  unlisted_at: string | null;
}

/**
 * The tests' one comparison of a mirror with the simulator's truth: for `domains` (or every domain
 * the simulator lists), the domain row, the current licences and payment methods (none missing,
 * none extra) and, unless `sections: false`, every section's JSON (with every field of the truth;
 * fields the service added beyond it, which the mirror keeps, are allowed). Returns human-readable
 * differences: empty means equal, and an empty list of domains is a difference (comparing nothing
 * proves nothing). Reads the file with its own connection ({@link readMirror}).
 */
export function diffMirrorWithTruth(
  dbPath: string,
  sim: RunningSimulator,
  domains?: readonly string[],
  options: { sections?: boolean } = {},
): string[] {
  const wanted = domains ?? sim.control.truth.listDomains();
  if (wanted.length === 0) return ['no domains to compare'];
  return readMirror(dbPath, (db) => {
    const diffs: string[] = [];
    const domainStmt = db.prepare('SELECT * FROM domains WHERE domain_normalized = ?');
    const licStmt = db.prepare('SELECT * FROM licenses WHERE domain_normalized = ? AND removed_at IS NULL');
    const pmStmt = db.prepare(
      'SELECT * FROM payment_methods WHERE domain_normalized = ? AND removed_at IS NULL',
    );
    const sectionStmt = db.prepare(
      'SELECT data FROM domain_sections WHERE domain_normalized = ? AND section = ?',
    );
    for (const name of wanted) {
      const truth = sim.control.truth.profile(name);
      if (!truth) {
        diffs.push(`${name}: not in the simulator's truth`);
        continue;
      }
      const row = domainStmt.get(name) as DomainRow | undefined;
      if (!row) {
        diffs.push(`${name}: missing from the mirror`);
        continue;
      }
      const expect: Record<string, unknown> = {
        domain: truth.domain,
        company_name: truth.company_name,
        status: truth.status,
        last_enriched_at: truth.last_enriched_at,
        operator_name: truth.operator.name,
        operator_legal_entity_name: truth.operator.legal_entity_name,
        operator_country: truth.operator.country_of_incorporation,
        brand_name: truth.brand.name,
        brand_slug: truth.brand.slug,
        unlisted_at: null,
      };
      for (const [column, value] of Object.entries(expect)) {
        const actual = (row as unknown as Record<string, unknown>)[column];
        if (actual !== value)
          diffs.push(
            `${name}: domains.${column} = ${JSON.stringify(actual)}, truth ${JSON.stringify(value)}`,
          );
      }
      const licences = new Map(
        (licStmt.all(name) as Array<Record<string, unknown>>).map((l) => [
          `${l.jurisdiction}/${l.license_number}`,
          l,
        ]),
      );
      for (const lic of truth.licenses) {
        const key = `${lic.jurisdiction}/${lic.license_number}`;
        const got = licences.get(key);
        if (!got) {
          diffs.push(`${name}: licence ${key} missing`);
          continue;
        }
        licences.delete(key);
        for (const column of ['status', 'source_url', 'first_seen_at', 'last_confirmed_at'] as const) {
          if (got[column] !== lic[column])
            diffs.push(
              `${name}: licence ${key}.${column} = ${JSON.stringify(got[column])}, truth ${JSON.stringify(lic[column])}`,
            );
        }
      }
      for (const key of licences.keys())
        diffs.push(`${name}: licence ${key} active in the mirror but not in truth`);
      const methods = new Map(
        (pmStmt.all(name) as Array<Record<string, unknown>>).map((p) => [String(p.normalized_name), p]),
      );
      for (const pm of truth.payment_methods) {
        const got = methods.get(pm.normalized_name);
        if (!got) {
          diffs.push(`${name}: payment method ${pm.normalized_name} missing`);
          continue;
        }
        methods.delete(pm.normalized_name);
        for (const column of ['category', 'confidence', 'first_seen_at', 'last_confirmed_at'] as const) {
          if (got[column] !== pm[column])
            diffs.push(
              `${name}: payment method ${pm.normalized_name}.${column} = ${JSON.stringify(got[column])}, truth ${JSON.stringify(pm[column])}`,
            );
        }
      }
      for (const key of methods.keys())
        diffs.push(`${name}: payment method ${key} active in the mirror but not in truth`);
      if (options.sections === false) continue;
      for (const section of SECTIONS) {
        const stored = sectionStmt.get(name, section) as { data: string } | undefined;
        if (!stored) diffs.push(`${name}: section ${section} missing`);
        else if (!holdsTruth(JSON.parse(stored.data), truth[section]))
          diffs.push(`${name}: section ${section} = ${stored.data}, truth ${JSON.stringify(truth[section])}`);
      }
    }
    return diffs;
  });
}

/**
 * True when `stored` has every value of `truth`: the same scalars, arrays of the same length
 * element by element, and objects with at least the truth's keys (a quirky service adds fields).
 */
function holdsTruth(stored: unknown, truth: unknown): boolean {
  if (Array.isArray(truth))
    return (
      Array.isArray(stored) &&
      stored.length === truth.length &&
      truth.every((t, i) => holdsTruth(stored[i], t))
    );
  if (truth !== null && typeof truth === 'object') {
    if (stored === null || typeof stored !== 'object' || Array.isArray(stored)) return false;
    const record = stored as Record<string, unknown>;
    return Object.entries(truth).every(([key, value]) => key in record && holdsTruth(record[key], value));
  }
  return Object.is(stored, truth);
}

/** Profile GETs (`GET /domains/:domain`) the simulator served since its logs were last reset. */
export function profileRequests(sim: RunningSimulator): string[] {
  return sim.control
    .usage()
    .filter((u) => u.method === 'GET' && u.endpoint.startsWith('GET /domains/'))
    .map((u) => u.domain ?? u.path);
}
