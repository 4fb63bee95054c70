import { parseFilters } from './filters.js';
import { reconfirm } from './jobs.js';
import type { SimService } from './service.js';
import { BASE_PATH } from './service.js';
import type { CanonicalFilter, FaultRule, SimulatorControl, TruthProfile, UrlStyle } from './types.js';
import { CANONICAL_FILTERS } from './types.js';

/** The canonical filters a truth query accepts: all but paging. */
const DOMAIN_FILTER_NAMES = CANONICAL_FILTERS.filter((name) => name !== 'per_page' && name !== 'page');

/** A control-surface error with an HTTP status (400 bad input, 404 unknown domain). */
export class ControlError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
    this.name = 'ControlError';
  }
}

/**
 * Builds the in-process {@link SimulatorControl} of a service. Every operation ticks the clock
 * first, so due runs and exports are settled before anything is read or changed.
 */
export function createControl(service: SimService): SimulatorControl {
  const { catalogue } = service;
  const idOrThrow = (domain: string): number => {
    const id = catalogue.idOf(domain);
    if (id === undefined) throw new ControlError(404, `unknown domain: ${domain}`);
    return id;
  };
  const nowIso = (): string => new Date(service.tick()).toISOString();
  // Data changes are discovered by enrichment in the real service, so a mutation also moves
  // last_enriched_at to now; an incremental sync by watermark then sees it (docs/simulator.md).
  const changeAndTouch = (domain: string, change: (p: TruthProfile, at: string) => TruthProfile): void => {
    const id = idOrThrow(domain);
    const at = nowIso();
    catalogue.update(id, (p) => ({ ...change(p, at), last_enriched_at: at }));
  };

  const control: SimulatorControl = {
    now: () => service.now(),
    advanceClock(ms: number) {
      if (!Number.isFinite(ms) || ms < 0)
        throw new ControlError(400, 'advanceMs must be a non-negative number');
      service.clockOffsetMs += ms;
      service.tick();
    },
    setFaults(rules: FaultRule[]) {
      if (!Array.isArray(rules)) throw new ControlError(400, 'rules must be an array');
      try {
        service.faults.setRules(rules);
      } catch (error) {
        throw new ControlError(400, (error as Error).message);
      }
    },
    clearFaults: () => service.faults.clear(),
    faultStats: () => service.faults.stats(),
    usage: () => {
      service.tick();
      return service.usageLog.entries().map((e) => ({ ...e }));
    },
    requests: () => service.requestLog.entries().map((e) => ({ ...e })),
    resetLogs() {
      service.usageLog.clear();
      service.requestLog.clear();
      service.faults.resetStats();
    },
    account: () => {
      service.tick();
      return service.account();
    },
    setCredits(granted: number | null) {
      if (granted !== null && !(Number.isInteger(granted) && granted >= 0))
        throw new ControlError(400, 'granted must be a non-negative integer or null');
      service.ledger.granted = granted;
    },
    setUrlStyle(style: { pollUrl?: UrlStyle; downloadUrl?: UrlStyle }) {
      for (const key of ['pollUrl', 'downloadUrl'] as const) {
        const value = style[key];
        if (value === undefined) continue;
        if (
          value !== 'path' &&
          value !== 'absolute' &&
          !(typeof value === 'object' && value !== null && typeof value.origin === 'string')
        ) {
          throw new ControlError(400, `${key} must be 'path', 'absolute' or { origin }`);
        }
        service.urlStyle[key] = value;
      }
    },
    truth: {
      count: () => {
        service.tick();
        return catalogue.count();
      },
      listDomains(filters: Record<string, string> = {}) {
        service.tick();
        const parsed = parseFilters(filters as Partial<Record<CanonicalFilter, unknown>>, undefined, {
          paging: false,
        });
        const unknown = Object.keys(filters).filter((k) => !(DOMAIN_FILTER_NAMES as string[]).includes(k));
        if (unknown.length > 0) throw new ControlError(400, `unknown filter(s): ${unknown.join(', ')}`);
        if (Object.keys(parsed.errors).length > 0) throw new ControlError(400, JSON.stringify(parsed.errors));
        return Array.from(catalogue.list(parsed.filters), (id) => catalogue.profile(id).domain_normalized);
      },
      profile(domain: string) {
        service.tick();
        const id = catalogue.idOf(domain);
        return id === undefined ? undefined : structuredClone(catalogue.profile(id));
      },
      run(id: number) {
        service.tick();
        const run = service.jobs.runs.get(id);
        return run ? service.canonical.run(run) : undefined;
      },
      export(id: number) {
        const now = service.tick();
        const record = service.jobs.exports.get(id);
        return record
          ? service.canonical.exportStatus(record, `${BASE_PATH}/exports/${id}/download`, now)
          : undefined;
      },
    },
    mutate: {
      setLicenceStatus(domain, licenseNumber, status) {
        const p = control.truth.profile(domain);
        if (!p?.licenses.some((l) => l.license_number === licenseNumber))
          throw new ControlError(404, `no licence ${licenseNumber} on ${domain}`);
        changeAndTouch(domain, (prof, at) => ({
          ...prof,
          licenses: prof.licenses.map((l) =>
            l.license_number === licenseNumber ? { ...l, status, last_confirmed_at: at } : l,
          ),
        }));
      },
      removeLicence(domain, licenseNumber) {
        const p = control.truth.profile(domain);
        if (!p?.licenses.some((l) => l.license_number === licenseNumber))
          throw new ControlError(404, `no licence ${licenseNumber} on ${domain}`);
        changeAndTouch(domain, (prof) => ({
          ...prof,
          licenses: prof.licenses.filter((l) => l.license_number !== licenseNumber),
        }));
      },
      removePaymentMethod(domain, normalizedName) {
        const p = control.truth.profile(domain);
        if (!p?.payment_methods.some((m) => m.normalized_name === normalizedName))
          throw new ControlError(404, `no payment method ${normalizedName} on ${domain}`);
        changeAndTouch(domain, (prof) => ({
          ...prof,
          payment_methods: prof.payment_methods.filter((m) => m.normalized_name !== normalizedName),
        }));
      },
      addPaymentMethod(domain, pm) {
        if (!pm || typeof pm.normalized_name !== 'string' || typeof pm.category !== 'string')
          throw new ControlError(400, 'pm needs normalized_name and category');
        changeAndTouch(domain, (prof, at) => ({
          ...prof,
          payment_methods: [
            ...prof.payment_methods.filter((m) => m.normalized_name !== pm.normalized_name),
            {
              normalized_name: pm.normalized_name,
              category: pm.category,
              confidence: pm.confidence ?? 'high',
              first_seen_at: at,
              last_confirmed_at: at,
            },
          ],
        }));
      },
      setCompanyName(domain, companyName) {
        if (typeof companyName !== 'string' || companyName === '')
          throw new ControlError(400, 'companyName must be a non-empty string');
        changeAndTouch(domain, (prof) => ({ ...prof, company_name: companyName }));
      },
      addDomain(opts = {}) {
        const at = service.tick();
        try {
          const id = catalogue.add(opts.position ?? 'end', at, opts.domain);
          return catalogue.profile(id).domain_normalized;
        } catch (error) {
          throw new ControlError(400, (error as Error).message);
        }
      },
      removeDomain(domain) {
        service.tick();
        catalogue.remove(idOrThrow(domain));
      },
      reenrich(domain) {
        const id = idOrThrow(domain);
        reconfirm(catalogue, id, nowIso());
      },
    },
    onListPage(hook) {
      service.listPageHook = hook;
    },
  };
  return control;
}

/**
 * Serves the control surface over HTTP under `/_sim` (JSON in and out, no API key); see
 * docs/simulator.md "Control surface". Returns status and JSON body.
 */
export function handleControlRequest(
  control: SimulatorControl,
  service: SimService,
  method: string,
  path: string,
  query: URLSearchParams,
  body: unknown,
): { status: number; json: unknown } {
  const b = (body ?? {}) as Record<string, unknown>;
  const route = `${method} ${path}`;
  const okJson = (json: unknown): { status: number; json: unknown } => ({ status: 200, json });
  try {
    switch (route) {
      case 'GET /_sim/state':
        return okJson({
          now: control.now(),
          nowIso: new Date(control.now()).toISOString(),
          account: control.account(),
          domains: control.truth.count(),
          faults: { rules: service.faults.currentRules(), stats: control.faultStats() },
          urlStyle: service.urlStyle,
          options: { ...service.options, apiKeys: undefined },
        });
      case 'POST /_sim/clock':
        control.advanceClock(Number(b.advanceMs));
        return okJson({ now: control.now(), nowIso: new Date(control.now()).toISOString() });
      case 'GET /_sim/faults':
        return okJson({ rules: service.faults.currentRules(), stats: control.faultStats() });
      case 'PUT /_sim/faults':
        control.setFaults(b.rules as FaultRule[]);
        return okJson({ rules: service.faults.currentRules() });
      case 'DELETE /_sim/faults':
        control.clearFaults();
        return okJson({ rules: [] });
      case 'GET /_sim/usage':
        return okJson({ usage: control.usage() });
      case 'GET /_sim/requests':
        return okJson({ requests: control.requests() });
      case 'DELETE /_sim/logs':
      case 'POST /_sim/reset-logs':
        control.resetLogs();
        return okJson({ ok: true });
      case 'GET /_sim/account':
        return okJson(control.account());
      case 'POST /_sim/credits':
        if (!('granted' in b)) throw new ControlError(400, 'granted is required (a number or null)');
        control.setCredits(b.granted as number | null);
        return okJson(control.account());
      case 'PUT /_sim/url-style':
        control.setUrlStyle(b as { pollUrl?: UrlStyle; downloadUrl?: UrlStyle });
        return okJson(service.urlStyle);
      case 'GET /_sim/truth/count':
        return okJson({ count: control.truth.count() });
      case 'GET /_sim/truth/domains': {
        const filters: Record<string, string> = {};
        for (const [key, value] of query) if (key !== 'limit') filters[key] = value;
        const all = control.truth.listDomains(filters);
        const limit = query.has('limit') ? Number(query.get('limit')) : all.length;
        return okJson({ total: all.length, domains: all.slice(0, limit) });
      }
      case 'POST /_sim/mutate':
        return okJson({ result: mutate(control, b) ?? null });
    }
    const truth = /^\/_sim\/truth\/(domains|runs|exports)\/(.+)$/.exec(path);
    if (method === 'GET' && truth) {
      const [, kind, raw] = truth as unknown as [string, string, string];
      const key = decodeURIComponent(raw);
      const value =
        kind === 'domains'
          ? control.truth.profile(key)
          : kind === 'runs'
            ? control.truth.run(Number(key))
            : control.truth.export(Number(key));
      return value === undefined ? { status: 404, json: { error: `not found: ${key}` } } : okJson(value);
    }
    return { status: 404, json: { error: `unknown control route: ${route}` } };
  } catch (error) {
    if (error instanceof ControlError) return { status: error.status, json: { error: error.message } };
    return { status: 400, json: { error: (error as Error).message } };
  }
}

function mutate(control: SimulatorControl, b: Record<string, unknown>): unknown {
  const s = (key: string): string => {
    const value = b[key];
    if (typeof value !== 'string') throw new ControlError(400, `${key} must be a string`);
    return value;
  };
  switch (b.op) {
    case 'setLicenceStatus':
      return control.mutate.setLicenceStatus(s('domain'), s('licenseNumber'), s('status'));
    case 'removeLicence':
      return control.mutate.removeLicence(s('domain'), s('licenseNumber'));
    case 'removePaymentMethod':
      return control.mutate.removePaymentMethod(s('domain'), s('normalizedName'));
    case 'addPaymentMethod':
      return control.mutate.addPaymentMethod(
        s('domain'),
        b.pm as { normalized_name: string; category: string; confidence?: string },
      );
    case 'setCompanyName':
      return control.mutate.setCompanyName(s('domain'), s('companyName'));
    case 'addDomain':
      return control.mutate.addDomain({
        position: b.position as 'start' | 'end' | undefined,
        domain: b.domain as string | undefined,
      });
    case 'removeDomain':
      return control.mutate.removeDomain(s('domain'));
    case 'reenrich':
      return control.mutate.reenrich(s('domain'));
    default:
      throw new ControlError(400, `unknown op: ${String(b.op)}`);
  }
}
