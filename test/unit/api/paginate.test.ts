import { describe, expect, it } from 'vitest';
import { ProtocolError } from '../../../src/api/errors.js';
import type { DomainFilters } from '../../../src/api/filters.js';
import { iterateDomainPages, iterateDomains } from '../../../src/api/paginate.js';
import type { DomainSearchPage } from '../../../src/api/wire.js';

/** A fake listing of `n` domains; `serverPerPage` overrides the page size the "service" uses. */
function listing(n: number, options: { serverPerPage?: number; totals?: number[]; echoPage?: number } = {}) {
  const calls: DomainFilters[] = [];
  const fetchPage = async (filters: DomainFilters): Promise<DomainSearchPage> => {
    calls.push(filters);
    const perPage = options.serverPerPage ?? filters.per_page!;
    const page = filters.page!;
    const start = (page - 1) * perPage;
    const domains = Array.from({ length: Math.max(0, Math.min(n, start + perPage) - start) }, (_, i) => ({
      domain_normalized: `d${start + i}.com`,
    }));
    return {
      domains,
      total: options.totals?.[calls.length - 1] ?? n,
      page: options.echoPage ?? page,
      per_page: perPage,
    };
  };
  return { calls, fetchPage };
}

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

describe('iterateDomainPages', () => {
  it.each([
    [1200, 500, 3],
    [1000, 500, 2],
    [0, 500, 1],
    [7, 3, 3],
  ])('%d domains at %d per page take %d requests and yield each once', async (n, perPage, requests) => {
    const { calls, fetchPage } = listing(n);
    const domains = await collect(iterateDomains(fetchPage, { jurisdiction: 'mga' }, { perPage }));
    expect(calls).toHaveLength(requests);
    expect(new Set(domains.map((d) => d.domain_normalized)).size).toBe(n);
    expect(domains).toHaveLength(n);
    expect(calls[0]).toEqual({ jurisdiction: 'mga', page: 1, per_page: perPage });
  });

  it("uses the service's per_page when it differs from the one asked for", async () => {
    const { calls, fetchPage } = listing(45, { serverPerPage: 20 });
    const domains = await collect(iterateDomains(fetchPage, {}, { perPage: 500 }));
    expect(domains).toHaveLength(45);
    expect(calls).toHaveLength(3);
  });

  it('reports drift when total changes between pages', async () => {
    const { fetchPage } = listing(1000, { totals: [1000, 1001, 1001] });
    const pages = await collect(iterateDomainPages(fetchPage, {}, { perPage: 400 }));
    expect(pages.map((p) => p.totalChanged)).toEqual([false, true, true]);
    expect(pages.every((p) => p.firstTotal === 1000)).toBe(true);
  });

  it('refuses a service that ignores the page parameter', async () => {
    const { fetchPage } = listing(1000, { echoPage: 1 });
    await expect(collect(iterateDomainPages(fetchPage, {}, { perPage: 100 }))).rejects.toBeInstanceOf(
      ProtocolError,
    );
  });

  it('resumes from startPage', async () => {
    const { calls, fetchPage } = listing(1200);
    const domains = await collect(iterateDomains(fetchPage, {}, { perPage: 500, startPage: 2 }));
    expect(domains).toHaveLength(700);
    expect(calls[0]!.page).toBe(2);
  });

  it('stops when aborted', async () => {
    const { fetchPage } = listing(1200);
    const controller = new AbortController();
    const iterator = iterateDomainPages(fetchPage, {}, { perPage: 100, signal: controller.signal });
    await iterator.next();
    controller.abort();
    await expect(iterator.next()).rejects.toMatchObject({ code: 'ERR_ABORTED' });
  });
});
