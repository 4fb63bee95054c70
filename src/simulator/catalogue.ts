import { domainToUnicode } from 'node:url';
import { filtersKey, JURISDICTIONS, profileMatches, providerIs } from './filters.js';
import type { DomainFilters } from './filters.js';
import { isoFromMs } from '../util/time.js';
import { hash32, Prng } from './prng.js';
import type {
  TruthAffiliateProgram,
  TruthGameProvider,
  TruthGeo,
  TruthLicence,
  TruthPaymentMethod,
  TruthProfile,
  TruthRelatedDomain,
} from './types.js';
import {
  BRAND_A,
  BRAND_B,
  BRANDS,
  COMPANY_A,
  COMPANY_B,
  COMPANY_FORM,
  COUNTRIES,
  LANGUAGE_OF,
  PAYMENT_POOL,
  PROVIDERS,
  REGULATOR_URL,
  RESTRICTED_COUNTRIES,
  TARGET_COUNTRIES,
  TLDS,
  UNICODE_STEMS,
} from './words.js';

// Matching lives with the filters; re-exported for the catalogue's callers and tests.
export { profileMatches } from './filters.js';

const DAY_MS = 86_400_000;

// Salts of the independent PRNG streams of one domain; a filter only generates the parts it reads.
const S_NAME = 1;
const S_TIME = 2;
const S_LIC = 3;
const S_PAY = 4;
const S_PROV = 5;
const S_AFF = 6;
const S_GEO = 7;
const S_REL = 8;
const S_COMPANY = 9;
const S_BRAND = 10;

/** An operator company as the catalogue generates it. */
export interface Company {
  readonly name: string;
  readonly legal_entity_name: string | null;
  readonly country: string;
}

const COMPANY_SLOTS = 8192;

/** Options of {@link Catalogue}. */
export interface CatalogueOptions {
  seed: number;
  domains: number;
  quirks: boolean;
  /** Every generated timestamp lies before this instant. */
  epochMs: number;
}

/**
 * The seeded synthetic catalogue: profiles are generated on demand from (seed, id), and only an
 * overlay of mutated profiles, added ids and removed ids is kept, so a million domains cost
 * little memory. Ids `0..domains-1` are the generated domains; added domains get larger ids.
 */
export class Catalogue {
  readonly seed: number;
  readonly baseCount: number;
  readonly quirks: boolean;
  readonly epochMs: number;
  /** Number of operator companies; domain `id` belongs to company `id % companyCount`. */
  readonly companyCount: number;
  /** Incremented by every change; caches compare it. */
  version = 0;

  private readonly overlay = new Map<number, TruthProfile>();
  private readonly removed = new Set<number>();
  private readonly startAdds: number[] = [];
  private readonly endAdds: number[] = [];
  private readonly customNames = new Map<string, number>();
  private nextId: number;
  private readonly listCache = new Map<string, { version: number; ids: Int32Array }>();
  // Every profile and listing item needs its company: a direct-mapped cache of COMPANY_SLOTS
  // entries holds all companies of up to 160k domains and stays that small for a million.
  private readonly companySlotIndex = new Float64Array(COMPANY_SLOTS).fill(-1);
  private readonly companySlotValue = new Array<Company | undefined>(COMPANY_SLOTS);
  // GET /domains/:domain names the id in idOf() and again when generating it: one entry suffices.
  private lastNamedId = -1;
  private lastName = '';

  constructor(options: CatalogueOptions) {
    this.seed = options.seed;
    this.baseCount = options.domains;
    this.quirks = options.quirks;
    this.epochMs = options.epochMs;
    this.nextId = options.domains;
    this.companyCount = Math.max(5, Math.ceil(options.domains / 20));
  }

  // ---- identity -------------------------------------------------------------------------------

  /** The generated `domain_normalized` of an id (added domains may have a custom name instead). */
  generatedName(id: number): string {
    if (id === this.lastNamedId) return this.lastName;
    const rng = Prng.of(this.seed, id, S_NAME);
    let name: string;
    if (this.quirks && rng.chance(0.04)) {
      const u = rng.pick(UNICODE_STEMS);
      name = `${u.stem}${id}.${u.tld}`;
    } else name = `${this.brandOf(id).nameStem}${id}.${rng.pick(TLDS)}`;
    this.lastNamedId = id;
    this.lastName = name;
    return name;
  }

  /** The id of a listed domain (name normalised: case, `www.`, trailing dot, punycode), or undefined. */
  idOf(domain: string): number | undefined {
    const name = normalizeDomain(domain);
    const custom = this.customNames.get(name);
    if (custom !== undefined) return this.removed.has(custom) ? undefined : custom;
    const digits = /\d+/.exec(name);
    if (!digits) return undefined;
    const id = Number(digits[0]);
    if (!Number.isSafeInteger(id) || id >= this.nextId || this.removed.has(id)) return undefined;
    if (id >= this.baseCount && !this.overlay.has(id)) return undefined;
    const existing = this.overlay.get(id);
    const actual = existing ? existing.domain_normalized : this.generatedName(id);
    return actual === name ? id : undefined;
  }

  /** Whether an id is currently listed. */
  isListed(id: number): boolean {
    if (this.removed.has(id)) return false;
    return id < this.baseCount || this.overlay.has(id);
  }

  // ---- generation -----------------------------------------------------------------------------

  /** Operator company of a company index (a shared, frozen object). */
  company(c: number): Company {
    const slot = c % COMPANY_SLOTS;
    if (this.companySlotIndex[slot] === c) return this.companySlotValue[slot] as Company;
    const company = Object.freeze(this.generateCompany(c));
    if (Number.isInteger(c) && c >= 0) {
      this.companySlotIndex[slot] = c;
      this.companySlotValue[slot] = company;
    }
    return company;
  }

  private generateCompany(c: number): Company {
    const rng = Prng.of(this.seed, c, S_COMPANY);
    const a = rng.pick(COMPANY_A);
    const b = rng.pick(COMPANY_B);
    const form = rng.pick(COMPANY_FORM);
    const country = rng.pick(COUNTRIES);
    const combos = COMPANY_A.length * COMPANY_B.length;
    const suffix = c >= combos ? ` ${Math.floor(c / combos) + 1}` : '';
    const name = `${a} ${b}${suffix} ${form}`;
    const legal = this.quirks && rng.chance(0.1) ? null : `${a} ${b}${suffix} ${country.name} ${form}`;
    return { name, legal_entity_name: legal, country: country.code };
  }

  /** Company index of a domain id. */
  companyOf(id: number): number {
    return id % this.companyCount;
  }

  /** The shared {@link BRANDS} entry of an id; same draws as `pick(BRAND_A)`, `pick(BRAND_B)`. */
  private brandOf(id: number): { name: string; slug: string; nameStem: string } {
    const rng = Prng.of(this.seed, id, S_BRAND);
    const a = Math.floor(rng.next() * BRAND_A.length);
    const b = Math.floor(rng.next() * BRAND_B.length);
    return BRANDS[a * BRAND_B.length + b] as { name: string; slug: string; nameStem: string };
  }

  private lastEnrichedMs(id: number): number {
    const rng = Prng.of(this.seed, id, S_TIME);
    const last = this.lastEnrichedRawMs(rng);
    // Quirks mode sends some timestamps without milliseconds; whole seconds keep that lossless.
    return this.quirks ? last - (last % 1000) : last;
  }

  private lastEnrichedRawMs(rng: Prng): number {
    // A few domains are fresh (inside the default 24 h cache window), most are days to a year old,
    // so both the cached and the billed path of POST /enrichments are reachable.
    if (rng.chance(0.03)) return this.epochMs - rng.int(60_000, 12 * 3_600_000);
    return this.epochMs - rng.int(1, 400) * DAY_MS - rng.int(0, DAY_MS - 1);
  }

  // The *Head helpers make the first draws of a stream; the full generators continue the same
  // stream, so a filter can read jurisdictions or categories without building whole profiles.
  private licenceHead(id: number): { rng: Prng; jurisdictions: string[] } {
    const rng = Prng.of(this.seed, id, S_LIC);
    const roll = rng.next();
    const count = roll < 0.1 ? 0 : roll < 0.5 ? 1 : roll < 0.8 ? 2 : roll < 0.95 ? 3 : 4;
    return { rng, jurisdictions: rng.sample(JURISDICTIONS, count) };
  }

  private paymentHead(id: number): { rng: Prng; picked: Array<{ name: string; category: string }> } {
    const rng = Prng.of(this.seed, id, S_PAY);
    return { rng, picked: rng.sample(PAYMENT_POOL, rng.int(1, 8)) };
  }

  private providerHead(id: number): { rng: Prng; picked: Array<readonly [string, string]> } {
    const rng = Prng.of(this.seed, id, S_PROV);
    if (this.quirks && rng.chance(0.05)) return { rng, picked: [] };
    return { rng, picked: rng.sample(PROVIDERS, rng.int(1, 8)) };
  }

  private wholeSecondsInQuirks(ms: number): number {
    return this.quirks ? ms - (ms % 1000) : ms;
  }

  private licences(id: number, lastMs: number, last: string): TruthLicence[] {
    const { rng, jurisdictions } = this.licenceHead(id);
    return jurisdictions.map((jurisdiction) => {
      const number = licenceNumber(jurisdiction, rng);
      let status = 'active';
      if (this.quirks && rng.chance(0.12)) status = rng.pick(['suspended', 'expired', 'revoked']);
      const sourceUrl =
        this.quirks && rng.chance(0.1) ? null : REGULATOR_URL[jurisdiction] + encodeURIComponent(number);
      return {
        jurisdiction,
        license_number: number,
        status,
        source_url: sourceUrl,
        first_seen_at: isoFromMs(
          this.wholeSecondsInQuirks(lastMs - rng.int(30, 900) * DAY_MS - rng.int(0, DAY_MS)),
        ),
        last_confirmed_at: last,
      };
    });
  }

  private payments(id: number, lastMs: number, last: string): TruthPaymentMethod[] {
    const { rng, picked } = this.paymentHead(id);
    return picked.map((pm) => ({
      normalized_name: pm.name,
      category: pm.category,
      confidence: this.quirks && rng.chance(0.2) ? rng.pick(['medium', 'low']) : 'high',
      first_seen_at: isoFromMs(
        this.wholeSecondsInQuirks(lastMs - rng.int(10, 700) * DAY_MS - rng.int(0, DAY_MS)),
      ),
      last_confirmed_at: last,
    }));
  }

  private providers(id: number): TruthGameProvider[] {
    const { rng, picked } = this.providerHead(id);
    return picked.map(([name, normalized]) => ({
      name,
      normalized_name: normalized,
      game_count: rng.int(5, 400),
    }));
  }

  private affiliates(id: number, host: string, brandName: string): TruthAffiliateProgram[] {
    const rng = Prng.of(this.seed, id, S_AFF);
    if (rng.chance(0.4)) return [];
    const count = rng.int(1, 2);
    const out: TruthAffiliateProgram[] = [];
    for (let i = 0; i < count; i++) {
      out.push({
        name: i === 0 ? `${brandName} Partners` : `${brandName} Affiliates ${i + 1}`,
        url:
          this.quirks && rng.chance(0.15) ? null : `https://partners.${host}/${i === 0 ? '' : `p${i + 1}`}`,
        commission_model: rng.pick(['revshare', 'cpa', 'hybrid']),
      });
    }
    return out;
  }

  private geo(id: number): TruthGeo {
    const rng = Prng.of(this.seed, id, S_GEO);
    if (this.quirks && rng.chance(0.05))
      return { target_countries: [], restricted_countries: [], languages: [] };
    const target = rng.sample(TARGET_COUNTRIES, rng.int(1, 5));
    const restricted = rng.sample(RESTRICTED_COUNTRIES, rng.int(0, 3));
    const languages: string[] = [];
    for (const c of target) {
      const language = LANGUAGE_OF[c] ?? 'en';
      if (!languages.includes(language)) languages.push(language);
    }
    return { target_countries: target, restricted_countries: restricted, languages };
  }

  private related(id: number): TruthRelatedDomain[] {
    if (id >= this.baseCount) return [];
    const rng = Prng.of(this.seed, id, S_REL);
    const out: TruthRelatedDomain[] = [];
    // Related domains share the operator: same company index (id ± companyCount).
    for (const other of [id + this.companyCount, id - this.companyCount, id + 2 * this.companyCount]) {
      if (other < 0 || other >= this.baseCount || !rng.chance(0.35)) continue;
      out.push({
        domain: this.generatedName(other),
        relation: rng.pick(['sister_brand', 'mirror', 'redirect']),
      });
    }
    return out;
  }

  /** Generates the pristine profile of an id (no overlay). */
  generate(id: number, name = this.generatedName(id), lastMs = this.lastEnrichedMs(id)): TruthProfile {
    const company = this.company(this.companyOf(id));
    const brand = this.brandOf(id);
    const last = isoFromMs(lastMs);
    return {
      domain: name,
      domain_normalized: name,
      company_name: company.name,
      status: 'enriched',
      last_enriched_at: last,
      operator: {
        name: company.name,
        legal_entity_name: company.legal_entity_name,
        country_of_incorporation: company.country,
      },
      brand: { name: brand.name, slug: brand.slug },
      licenses: this.licences(id, lastMs, last),
      payment_methods: this.payments(id, lastMs, last),
      game_providers: this.providers(id),
      affiliate_programs: this.affiliates(id, name, brand.name),
      geo: this.geo(id),
      related_domains: this.related(id),
    };
  }

  /** The current canonical profile of a listed id (overlay first). */
  profile(id: number): TruthProfile {
    return this.overlay.get(id) ?? this.generate(id);
  }

  /**
   * The fields of a GET /domains item of a listed id, equal to those of {@link profile} but
   * without generating licences, payments and the other sections.
   */
  summary(id: number): Pick<TruthProfile, 'domain_normalized' | 'company_name' | 'last_enriched_at'> {
    const over = this.overlay.get(id);
    if (over) return over;
    return {
      domain_normalized: this.generatedName(id),
      company_name: this.company(this.companyOf(id)).name,
      last_enriched_at: isoFromMs(this.lastEnrichedMs(id)),
    };
  }

  /** A frozen view of the overlay, for export snapshots. */
  overlaySnapshot(): Map<number, TruthProfile> {
    return new Map(this.overlay);
  }

  /** Profile of `id` as it was when `snapshot` was taken. */
  profileFrom(snapshot: Map<number, TruthProfile>, id: number): TruthProfile {
    return snapshot.get(id) ?? this.generate(id);
  }

  // ---- listing and filters --------------------------------------------------------------------

  /** Number of listed domains. */
  count(): number {
    return this.list({}).length;
  }

  /**
   * Ids of listed domains matching `filters`, in listing order: domains added at the start (newest
   * first), the generated domains by id, then domains added at the end. Cached per filter set
   * until the next change.
   */
  list(filters: DomainFilters): Int32Array {
    const key = filtersKey(filters);
    const cached = this.listCache.get(key);
    if (cached && cached.version === this.version) return cached.ids;
    const out: number[] = [];
    const consider = (id: number): void => {
      if (!this.removed.has(id) && this.matches(id, filters)) out.push(id);
    };
    for (let i = this.startAdds.length - 1; i >= 0; i--) consider(this.startAdds[i] as number);
    for (let id = 0; id < this.baseCount; id++) consider(id);
    for (const id of this.endAdds) consider(id);
    const ids = Int32Array.from(out);
    // A small bound keeps memory flat when a caller tries many filter combinations on 1M domains.
    if (this.listCache.size >= 16) this.listCache.delete(this.listCache.keys().next().value as string);
    this.listCache.set(key, { version: this.version, ids });
    return ids;
  }

  /** Whether a domain matches the filters; generates only the parts a filter reads. */
  matches(id: number, f: DomainFilters): boolean {
    const over = this.overlay.get(id);
    if (over) return profileMatches(over, f);
    if (Object.keys(f).length === 0) return true;
    let lastMs: number | undefined;
    const last = (): number => (lastMs ??= this.lastEnrichedMs(id));
    if (f.enriched_after !== undefined && !(last() > f.enriched_after)) return false;
    if (f.jurisdiction !== undefined && !this.licenceHead(id).jurisdictions.includes(f.jurisdiction))
      return false;
    if (f.payment_category !== undefined || f.exclude_payment_category !== undefined) {
      const cats = this.paymentHead(id).picked.map((p) => p.category);
      if (f.payment_category !== undefined && !cats.includes(f.payment_category)) return false;
      if (f.exclude_payment_category !== undefined && cats.includes(f.exclude_payment_category)) return false;
    }
    if (f.game_provider !== undefined || f.exclude_provider !== undefined) {
      const provs = this.providerHead(id).picked.map(([name, normalized]) => ({
        name,
        normalized_name: normalized,
        game_count: 0,
      }));
      if (f.game_provider !== undefined && !provs.some((p) => providerIs(p, f.game_provider as string)))
        return false;
      if (f.exclude_provider !== undefined && provs.some((p) => providerIs(p, f.exclude_provider as string)))
        return false;
    }
    if (f.has_affiliate_programs !== undefined) {
      // Same first draw as affiliates(): 40 % of domains have no programme.
      const has = !Prng.of(this.seed, id, S_AFF).chance(0.4);
      if (has !== f.has_affiliate_programs) return false;
    }
    if (f.geo !== undefined && !this.geo(id).target_countries.some((c) => c.toLowerCase() === f.geo))
      return false;
    return true;
  }

  // ---- mutations ------------------------------------------------------------------------------

  /** Replaces the profile of a listed id (copy-on-write, so export snapshots stay valid). */
  update(id: number, change: (p: TruthProfile) => TruthProfile): void {
    this.overlay.set(id, change(structuredClone(this.profile(id))));
    this.version++;
  }

  /** Adds a domain and returns its id. */
  add(position: 'start' | 'end', atMs: number, name?: string): number {
    const id = this.nextId++;
    const domainName = name === undefined ? this.generatedName(id) : normalizeDomain(name);
    if (name !== undefined) {
      if (this.idOf(domainName) !== undefined) throw new Error(`domain already exists: ${domainName}`);
      this.customNames.set(domainName, id);
    }
    this.overlay.set(id, this.generate(id, domainName, atMs));
    (position === 'start' ? this.startAdds : this.endAdds).push(id);
    this.version++;
    return id;
  }

  /** Removes a domain from the listing; its profile answers 404 afterwards. */
  remove(id: number): void {
    this.removed.add(id);
    this.version++;
  }
}

/** Normalises a requested domain: trim, lower case, no trailing dot, no `www.`, punycode → Unicode. */
export function normalizeDomain(domain: string): string {
  let name = domain.trim().toLowerCase().replace(/\.$/, '');
  if (name.startsWith('www.')) name = name.slice(4);
  if (name.includes('xn--')) {
    const unicode = domainToUnicode(name);
    if (unicode) name = unicode;
  }
  return name;
}

function licenceNumber(jurisdiction: string, rng: Prng): string {
  switch (jurisdiction) {
    case 'mga':
      return `MGA/B2C/${rng.int(100, 999)}/${rng.int(2012, 2024)}`;
    case 'ukgc':
      return `000-0${rng.int(10000, 99999)}-R-${rng.int(300000, 339999)}-00${rng.int(1, 9)}`;
    case 'curacao':
      return `OGL/2024/${rng.int(100, 2999)}/${String(rng.int(1, 999)).padStart(4, '0')}`;
    default:
      return `ALSI-${rng.int(100000000, 999999999)}-FI${rng.int(1, 4)}`;
  }
}

/** A deterministic number in [0, 1) for (seed, salt, id), for outcomes chosen per id (run duration, failure). */
export function unitFor(seed: number, salt: number, id: number): number {
  return hash32(seed, salt, id) / 4294967296;
}
