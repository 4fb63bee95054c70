import type { Catalogue } from './catalogue.js';
import type { FieldErrors } from './filters.js';
import type { Ledger } from './ledger.js';
import type { Renderer } from './render.js';
import { errorBody, ok } from './request.js';
import type { SimRequest, SimResponse } from './request.js';

/**
 * The three company endpoints (docs/service-api.md: "Parameters and payloads of the three company
 * endpoints: not shown"), answered from the catalogue's companies; the service routes to them.
 */
export class CompanyEndpoints {
  private readonly catalogue: Catalogue;
  private readonly ledger: Ledger;
  private readonly renderer: Renderer;

  // Fields assigned one by one, as in every class here: tsconfig's erasableSyntaxOnly rules out
  // constructor parameter properties, so constructors look alike by design.
  constructor(catalogue: Catalogue, ledger: Ledger, renderer: Renderer) {
    this.catalogue = catalogue;
    this.ledger = ledger;
    this.renderer = renderer;
  }

  private matchingCompanies(q: string): number[] {
    const needle = q.trim().toLowerCase();
    const out: number[] = [];
    for (let c = 0; c < this.catalogue.companyCount; c++) {
      if (needle === '' || this.catalogue.company(c).name.toLowerCase().includes(needle)) out.push(c);
    }
    return out;
  }

  private companyDomains(c: number, limit: number): string[] {
    const out: string[] = [];
    for (let id = c; id < this.catalogue.baseCount && out.length < limit; id += this.catalogue.companyCount) {
      if (this.catalogue.isListed(id)) out.push(this.catalogue.profile(id).domain_normalized);
    }
    return out;
  }

  private domainsCount(c: number): number {
    const n = this.catalogue.baseCount;
    return c >= n ? 0 : Math.floor((n - 1 - c) / this.catalogue.companyCount) + 1;
  }

  private companySummary(c: number): Record<string, unknown> {
    const company = this.catalogue.company(c);
    return this.renderer.extra(
      {
        name: company.name,
        legal_entity_name: company.legal_entity_name,
        country_of_incorporation: company.country,
        domains_count: this.domainsCount(c),
      },
      `co:${c}`,
    );
  }

  preview(req: SimRequest): SimResponse {
    const matches = this.matchingCompanies(req.query.get('q') ?? '');
    const facets: Record<string, number> = {};
    for (const c of matches) {
      const country = this.catalogue.company(c).country;
      facets[country] = (facets[country] ?? 0) + 1;
    }
    return {
      status: 200,
      json: ok({
        count: matches.length,
        facets: { country_of_incorporation: facets },
        cost: { credits_per_result: 1, max_credits: matches.length },
      }),
      usage: { endpoint: 'GET /companies/search/preview' },
    };
  }

  search(req: SimRequest, now: number): SimResponse {
    const endpoint = 'GET /companies/search';
    const perPage = Number(req.query.get('per_page') ?? '20');
    const page = Number(req.query.get('page') ?? '1');
    const errors: FieldErrors = {};
    if (!Number.isInteger(perPage) || perPage < 1 || perPage > 100)
      errors.per_page = ['must be an integer from 1 to 100'];
    if (!Number.isInteger(page) || page < 1) errors.page = ['must be an integer of at least 1'];
    if (Object.keys(errors).length > 0)
      return { status: 400, json: errorBody('Validation failed', errors, now), usage: { endpoint } };
    const matches = this.matchingCompanies(req.query.get('q') ?? '');
    const slice = matches.slice((page - 1) * perPage, page * perPage);
    // Cost list: 1 credit per result returned.
    if (!this.ledger.charge(slice.length))
      return { status: 429, json: this.ledger.quotaExceededBody(slice.length), usage: { endpoint } };
    return {
      status: 200,
      json: ok({
        companies: slice.map((c) => this.companySummary(c)),
        total: matches.length,
        page,
        per_page: perPage,
        credits_used: slice.length,
      }),
      usage: { endpoint, credits: slice.length },
    };
  }

  resolve(req: SimRequest, now: number): SimResponse {
    const endpoint = 'GET /companies/resolve';
    const name = req.query.get('name');
    const domain = req.query.get('domain');
    let found: number[];
    if (domain) {
      const id = this.catalogue.idOf(domain);
      found = id === undefined ? [] : [this.catalogue.companyOf(id)];
    } else if (name) {
      found = this.matchingCompanies('')
        .filter((c) => this.catalogue.company(c).name.toLowerCase() === name.trim().toLowerCase())
        .slice(0, 10);
    } else {
      return {
        status: 400,
        json: errorBody('Validation failed', { name: ['name or domain is required'] }, now),
        usage: { endpoint },
      };
    }
    const credits = found.length * 3;
    if (!this.ledger.charge(credits))
      return { status: 429, json: this.ledger.quotaExceededBody(credits), usage: { endpoint } };
    const profiles = found.map((c) => ({ ...this.companySummary(c), domains: this.companyDomains(c, 100) }));
    return { status: 200, json: ok({ profiles, credits_used: credits }), usage: { endpoint, credits } };
  }
}
