import { baselineLoadName, readBaseline } from '../../mirror/store/baseline.js';
import { changesOfDomain } from '../../mirror/store/ui-changes.js';
import { domainDetail, searchDomains } from '../../mirror/store/ui-domains.js';
import { readConsistently } from '../../mirror/store/ui-overview.js';
import { PAGE_SIZE, domainHref } from '../context.js';
import type { UiContext } from '../context.js';
import { badge, formatAge, formatDate, formatTime } from '../format.js';
import { html, queryString } from '../html.js';
import type { SafeHtml } from '../html.js';
import { pager } from '../layout.js';
import type { Page } from '../layout.js';
import { parseParams, textParam } from '../params.js';
import { withSelected } from './changes.js';

const HISTORY_LIMIT = 500;
const RUN_LIMIT = 50;

/** `/domains`: the search (name, jurisdiction, payment category) and one page of results. */
export function domainsPage(ctx: UiContext, search: URLSearchParams): Page {
  const params = parseParams(search, {
    q: textParam(200),
    jurisdiction: textParam(100),
    category: textParam(100),
    after: textParam(300),
  });
  const rows = readConsistently(ctx.mirror, () =>
    searchDomains(ctx.mirror, {
      text: params.q,
      jurisdiction: params.jurisdiction,
      category: params.category,
      after: params.after,
      limit: PAGE_SIZE,
    }),
  );
  const nowMs = ctx.now();
  const more = rows.length > PAGE_SIZE;
  const page = rows.slice(0, PAGE_SIZE);
  const filters = { q: params.q, jurisdiction: params.jurisdiction, category: params.category };
  const next = more
    ? `/domains${queryString({ ...filters, after: page[page.length - 1]?.domain_normalized })}`
    : null;
  const first = params.after === null ? null : `/domains${queryString(filters)}`;
  const option = (value: string, selected: string | null) =>
    html`<option value="${value}" ${value === selected ? html` selected` : ''}>${value}</option>`;
  const body = html`<h1>Domains</h1>
    <form class="filters" method="get" action="/domains" role="search">
      <label
        >name<input
          type="search"
          name="q"
          value="${params.q ?? ''}"
          placeholder="domain or company name"
          aria-label="Search domains by name"
      /></label>
      <label
        >jurisdiction<select name="jurisdiction">
          <option value="">any</option>
          ${withSelected(ctx.changes.jurisdictions(), params.jurisdiction).map((j) => option(j, params.jurisdiction))}
        </select></label
      >
      <label
        >payment category<select name="category">
          <option value="">any</option>
          ${withSelected(ctx.changes.categories(), params.category).map((c) => option(c, params.category))}
        </select></label
      >
      <button type="submit">Search</button>
    </form>
    ${
      page.length === 0
        ? html`<p class="muted" id="no-results">No domain matches.</p>`
        : html`<table id="domain-results">
            <thead>
              <tr>
                <th>domain</th>
                <th>company</th>
                <th>status</th>
                <th>last enriched</th>
                <th>licences in</th>
                <th>payment categories</th>
              </tr>
            </thead>
            <tbody>
              ${page.map(
                (d) =>
                  html`<tr>
                    <td>
                      <a href="${domainHref(d.domain_normalized)}">${d.domain_normalized}</a
                      >${d.unlisted_at === null ? '' : html` ${badge('unlisted')}`}
                    </td>
                    <td>${d.company_name ?? '–'}</td>
                    <td>${d.status ?? '–'}</td>
                    <td>
                      ${formatDate(d.last_enriched_at)}
                      <div class="muted">${formatAge(d.last_enriched_at, nowMs)}</div>
                    </td>
                    <td>${(d.jurisdictions ?? '').replaceAll(',', ', ')}</td>
                    <td>${(d.categories ?? '').replaceAll(',', ', ')}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }
    ${pager(next, first)}
    <p class="note">
      A name matches when the domain or the company name contains it (letters A–Z in any case). Results are in
      name order, ${PAGE_SIZE} per page.
    </p>`;
  return { title: 'Domains', current: 'Domains', body };
}

function removedClass(removedAt: string | null): SafeHtml {
  return removedAt === null ? html`` : html` class="removed"`;
}

/** `/domains/NAME`: one domain with its licences, payment methods, sections and their history. */
export function domainPage(ctx: UiContext, search: URLSearchParams, name: string): Page | null {
  parseParams(search, {});
  const data = readConsistently(ctx.mirror, () => {
    const detail = domainDetail(ctx.mirror, name, RUN_LIMIT);
    return detail === undefined
      ? undefined
      : {
          ...detail,
          history: changesOfDomain(ctx.mirror, name, HISTORY_LIMIT),
          baseline: readBaseline(ctx.mirror),
        };
  });
  if (data === undefined) return null;
  const d = data.domain;
  const licenceHistory = data.history.filter((h) => h.table_name === 'licenses');
  const paymentHistory = data.history.filter((h) => h.table_name === 'payment_methods');
  const noChange =
    data.baseline === undefined
      ? 'No change recorded.'
      : `No change recorded since ${baselineLoadName(data.baseline)} (${formatDate(data.baseline.startedAt)}).`;
  const historyTable = (
    rows: typeof data.history,
    itemLabel: string,
    item: (key: string) => string,
  ): SafeHtml =>
    rows.length === 0
      ? html`<p class="muted">${noChange}</p>`
      : html`<table>
          <thead>
            <tr>
              <th>at</th>
              <th>${itemLabel}</th>
              <th>change</th>
              <th>from</th>
              <th>to</th>
            </tr>
          </thead>
          <tbody>
            ${rows.map(
              (h) =>
                html`<tr>
                  <td>${formatTime(h.at)}</td>
                  <td>${item(h.item_key)}</td>
                  <td>${badge(h.change)}</td>
                  <td>${h.old_value ?? '–'}</td>
                  <td>${h.new_value ?? '–'}</td>
                </tr>`,
            )}
          </tbody>
        </table>`;
  const body = html`<h1>${d.domain ?? d.domain_normalized}</h1>
    <p>
      <a href="/domains">« all domains</a
      >${d.unlisted_at === null ? '' : html` · ${badge('unlisted')} no longer listed since ${formatDate(d.unlisted_at)}`}
    </p>
    <dl class="kv">
      <dt>company</dt>
      <dd>${d.company_name ?? '–'}</dd>
      <dt>status</dt>
      <dd>${d.status ?? '–'}</dd>
      <dt>operator</dt>
      <dd>
        ${d.operator_name ?? '–'}${d.operator_legal_entity_name ? ` (${d.operator_legal_entity_name})` : ''}${d.operator_country ? `, ${d.operator_country}` : ''}
      </dd>
      <dt>brand</dt>
      <dd>${d.brand_name ?? '–'}${d.brand_slug ? ` (${d.brand_slug})` : ''}</dd>
      <dt>last enriched</dt>
      <dd>
        ${formatTime(d.last_enriched_at)}
        <span class="muted">${formatAge(d.last_enriched_at, ctx.now())}</span>
      </dd>
      <dt>profile synced</dt>
      <dd>${formatTime(d.profile_synced_at)}</dd>
      <dt>in the mirror since</dt>
      <dd>${formatTime(d.first_synced_at)}</dd>
      <dt>last listed</dt>
      <dd>${formatTime(d.last_listed_at)}</dd>
    </dl>
    <h2>Licences</h2>
    ${
      data.licences.length === 0
        ? html`<p class="muted">No licence recorded.</p>`
        : html`<table id="licences">
            <thead>
              <tr>
                <th>jurisdiction</th>
                <th>licence number</th>
                <th>status</th>
                <th>first seen</th>
                <th>last confirmed</th>
                <th>removed</th>
                <th>source</th>
              </tr>
            </thead>
            <tbody>
              ${data.licences.map(
                (l) =>
                  html`<tr${removedClass(l.removed_at)}><td>${l.jurisdiction}</td><td>${l.license_number}</td><td class="keep">${badge(l.status)}</td><td>${formatDate(l.first_seen_at)}</td><td>${formatDate(l.last_confirmed_at)}</td><td class="keep">${formatDate(l.removed_at)}</td><td>${l.source_url ?? '–'}</td></tr>`,
              )}
            </tbody>
          </table>`
    }
    <h2>Licence history</h2>
    ${historyTable(licenceHistory, 'licence', (key) => key.replace(':', ' '))}
    <h2>Payment methods</h2>
    ${
      data.paymentMethods.length === 0
        ? html`<p class="muted">No payment method recorded.</p>`
        : html`<table id="payment-methods">
            <thead>
              <tr>
                <th>method</th>
                <th>category</th>
                <th>confidence</th>
                <th>first seen</th>
                <th>last confirmed</th>
                <th>removed</th>
              </tr>
            </thead>
            <tbody>
              ${data.paymentMethods.map(
                (p) =>
                  html`<tr${removedClass(p.removed_at)}><td>${p.normalized_name}</td><td>${p.category ?? '–'}</td><td>${p.confidence ?? '–'}</td><td>${formatDate(p.first_seen_at)}</td><td>${formatDate(p.last_confirmed_at)}</td><td class="keep">${formatDate(p.removed_at)}</td></tr>`,
              )}
            </tbody>
          </table>`
    }
    <h2>Payment method history</h2>
    ${historyTable(paymentHistory, 'method', (key) => key)}
    <h2>Enrichment runs</h2>
    ${
      data.enrichmentRuns.length === 0
        ? html`<p class="muted">No enrichment run recorded for this domain.</p>`
        : html`<table>
            <thead>
              <tr>
                <th class="num">run</th>
                <th>status</th>
                <th>strategy</th>
                <th>started</th>
                <th>completed</th>
                <th class="num">credits</th>
                <th>error</th>
              </tr>
            </thead>
            <tbody>
              ${data.enrichmentRuns.map(
                (r) =>
                  html`<tr>
                    <td class="num">${r.id}</td>
                    <td>${badge(r.status)}</td>
                    <td>${r.strategy ?? '–'}</td>
                    <td>${formatTime(r.started_at)}</td>
                    <td>${formatTime(r.completed_at)}</td>
                    <td class="num">${r.credits ?? '–'}</td>
                    <td>${r.error ?? ''}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }
    <h2>Sections</h2>
    ${
      data.sections.length === 0
        ? html`<p class="muted">No section recorded.</p>`
        : data.sections.map(
            (s) =>
              html`<h3>${s.section} <span class="muted">updated ${formatDate(s.mirror_updated_at)}</span></h3>
                <pre>${prettyJson(s.data)}</pre>`,
          )
    }
    ${data.history.length >= HISTORY_LIMIT ? html`<p class="note">Only the latest ${HISTORY_LIMIT} changes are shown.</p>` : ''}`;
  return { title: d.domain_normalized, current: 'Domains', body };
}

function prettyJson(text: string | null): string {
  if (text === null) return 'null';
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
