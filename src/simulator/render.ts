import { hashString } from './prng.js';
import type { ExportRecord, RunRecord } from './jobs.js';
import type { SectionName, TruthProfile } from './types.js';
import { SECTION_NAMES } from './types.js';

type Json = Record<string, unknown>;

/**
 * Turns canonical records into wire objects. Without quirks the output has exactly the fields the
 * spec shows. With quirks it also uses the freedoms the spec leaves open: other UTC spellings of
 * timestamps and unknown extra fields on every object, chosen deterministically from the content.
 */
export class Renderer {
  private readonly quirks: boolean;
  private readonly seed: number;

  constructor(quirks: boolean, seed: number) {
    this.quirks = quirks;
    this.seed = seed;
  }

  /** A timestamp as sent: canonical, or in quirks mode sometimes `+00:00` or without milliseconds. */
  ts(value: string): string;
  ts(value: string | null): string | null;
  ts(value: string | null): string | null {
    if (value === null || !this.quirks) return value;
    const variant = hashString(`${this.seed}:${value}`) % 3;
    // Dropping milliseconds must not lose information (the mirror must converge to the truth), so
    // only whole-second instants are sent without them; quirks catalogues use whole seconds.
    if (variant === 2 && value.endsWith('.000Z')) return value.replace('.000Z', 'Z');
    if (variant !== 0) return value.replace('Z', '+00:00');
    return value;
  }

  /** Adds unknown fields in quirks mode (the client must ignore fields it does not know). */
  extra<T extends Json>(obj: T, tag: string): T {
    if (!this.quirks) return obj;
    return { ...obj, x_sim_revision: (hashString(`${this.seed}:${tag}`) % 97) + 1, x_sim_note: null };
  }

  /** One item of GET /domains (docs/service-api.md "Domain summary"). */
  summary(p: Pick<TruthProfile, 'domain_normalized' | 'company_name' | 'last_enriched_at'>): Json {
    return this.extra(
      {
        domain_normalized: p.domain_normalized,
        company_name: p.company_name,
        last_enriched_at: this.ts(p.last_enriched_at),
      },
      `s:${p.domain_normalized}`,
    );
  }

  /** The profile without `meta`, with the chosen sections (docs/service-api.md "Domain profile"). */
  profileBody(p: TruthProfile, include: readonly SectionName[], requested: string): Json {
    const tag = p.domain_normalized;
    const out: Json = {
      domain: requested,
      domain_normalized: p.domain_normalized,
      status: p.status,
      last_enriched_at: this.ts(p.last_enriched_at),
      operator: this.quirks ? this.extra({ ...p.operator }, `op:${tag}`) : p.operator,
      brand: this.quirks ? this.extra({ ...p.brand }, `br:${tag}`) : p.brand,
    };
    for (const section of SECTION_NAMES) {
      if (include.includes(section)) out[section] = this.section(p, section);
    }
    return this.quirks ? this.extra(out, `p:${tag}`) : out;
  }

  /** One section of a profile in wire form. */
  section(p: TruthProfile, section: SectionName): unknown {
    // Without quirks the wire form of a section is the canonical record itself (same keys, order
    // and values), so it is returned as it is instead of copied: callers only serialise it.
    if (!this.quirks) return p[section];
    const tag = p.domain_normalized;
    // One case per section, alike by design: each adds the same quirks to a different record.
    switch (section) {
      case 'licenses':
        return p.licenses.map((l) =>
          this.extra(
            {
              ...l,
              first_seen_at: this.ts(l.first_seen_at),
              last_confirmed_at: this.ts(l.last_confirmed_at),
            },
            `l:${tag}:${l.license_number}`,
          ),
        );
      case 'payment_methods':
        return p.payment_methods.map((m) =>
          this.extra(
            {
              ...m,
              first_seen_at: this.ts(m.first_seen_at),
              last_confirmed_at: this.ts(m.last_confirmed_at),
            },
            `m:${tag}:${m.normalized_name}`,
          ),
        );
      case 'game_providers':
        return p.game_providers.map((g) => this.extra({ ...g }, `g:${tag}:${g.normalized_name}`));
      case 'affiliate_programs':
        return p.affiliate_programs.map((a) => this.extra({ ...a }, `a:${tag}:${a.name}`));
      case 'geo':
        return this.extra({ ...p.geo }, `geo:${tag}`);
      case 'related_domains':
        return p.related_domains.map((r) => this.extra({ ...r }, `r:${tag}:${r.domain}`));
    }
  }

  /** GET /domains/:domain data: the profile plus `meta` (docs/service-api.md "Domain profile"). */
  profile(p: TruthProfile, include: readonly SectionName[], requested: string, nowMs: number): Json {
    const body = this.profileBody(p, include, requested);
    const meta = {
      freshness_age_seconds: Math.max(0, Math.floor((nowMs - Date.parse(p.last_enriched_at)) / 1000)),
      // Profiles are read from the catalogue, not fetched live, and reading costs 0 credits.
      served_from_cache: true,
      billable: false,
      observed_at: this.ts(p.last_enriched_at),
    };
    body.meta = this.quirks ? this.extra(meta, `meta:${p.domain_normalized}`) : meta;
    return body;
  }

  /** GET /enrichment_runs/:id data (docs/service-api.md "Enrichment run"). */
  run(run: RunRecord): Json {
    const started = this.ts(new Date(run.startedMs).toISOString());
    const completed = run.completedMs === null ? null : this.ts(new Date(run.completedMs).toISOString());
    if (run.status === 'failed') {
      // The spec says domain and strategy are present "for pending and completed"; a failed run omits them.
      return this.extra(
        {
          id: run.id,
          status: 'failed',
          started_at: started,
          completed_at: completed,
          error_details: this.extra({ ...(run.error as Json) }, `e:${run.id}`),
        },
        `run:${run.id}`,
      );
    }
    const out: Json = {
      id: run.id,
      status: run.status,
      domain: run.domain,
      strategy: run.strategy,
      started_at: started,
      completed_at: completed,
    };
    if (run.status === 'completed') {
      out.enrichment = this.extra(
        { domain_normalized: run.domain, status: 'enriched', last_enriched_at: this.ts(run.lastEnrichedAt) },
        `en:${run.id}`,
      );
    }
    return this.extra(out, `run:${run.id}`);
  }

  /** GET /exports/:id data: the documented pending shape, or the spec's completed shape. */
  exportStatus(record: ExportRecord, downloadUrl: string, nowMs: number): Json {
    if (record.status === 'pending') {
      // Pending shape: "not shown" in the spec (docs/simulator.md "Exports"). Quirks calls it 'processing'.
      return this.extra(
        { id: record.id, status: this.quirks ? 'processing' : 'pending', format: record.format },
        `x:${record.id}`,
      );
    }
    const expired = record.expiresMs !== null && nowMs >= record.expiresMs;
    return this.extra(
      {
        id: record.id,
        // Quirks mode shows an unseen status once the file is gone; otherwise it stays 'completed'.
        status: this.quirks && expired ? 'expired' : 'completed',
        format: record.format,
        download_url: downloadUrl,
        total_rows: record.ids?.length ?? 0,
        credits_used: record.cost,
        expires_at: this.ts(new Date(record.expiresMs as number).toISOString()),
      },
      `x:${record.id}`,
    );
  }
}
