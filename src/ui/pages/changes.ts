import { baselineLoadName, readBaseline } from '../../mirror/store/baseline.js';
import type { MirrorBaseline } from '../../mirror/store/baseline.js';
import { listChanges } from '../../mirror/store/ui-changes.js';
import type { ChangeRow } from '../../mirror/store/ui-changes.js';
import { readConsistently } from '../../mirror/store/ui-overview.js';
import { stackedBarChart } from '../charts.js';
import { PAGE_SIZE, domainHref } from '../context.js';
import type { UiContext } from '../context.js';
import { badge, formatCount, formatDate, formatTime } from '../format.js';
import { html, queryString } from '../html.js';
import type { SafeHtml } from '../html.js';
import { pager } from '../layout.js';
import type { Page } from '../layout.js';
import {
  BadRequestError,
  changeCursorParam,
  dateParam,
  enumParam,
  parseParams,
  textParam,
} from '../params.js';

const DAY_MS = 86_400_000;
/** The chart draws at most this many days (the last ones of the chosen range). */
const CHART_MAX_DAYS = 366;

/** One change as people read it: the item and what happened to it. */
function describe(row: ChangeRow): { kind: string; item: string } {
  return row.table_name === 'licenses'
    ? { kind: 'licence', item: row.item_key.replace(':', ' ') }
    : { kind: 'payment method', item: row.item_key };
}

function transition(row: ChangeRow): SafeHtml {
  if (row.old_value === null && row.new_value === null) return html`–`;
  if (row.old_value === null) return html`${row.new_value}`;
  if (row.new_value === null || row.old_value === row.new_value) return html`${row.old_value}`;
  return html`${row.old_value} → ${row.new_value}`;
}

/** Where the history starts: the mirror's first load, whose findings are not changes. */
function baselineNote(baseline: MirrorBaseline): string {
  const since = `Changes since ${baselineLoadName(baseline)} (${formatDate(baseline.startedAt)})`;
  return baseline.finishedAt === null
    ? `${since}, which has not finished yet: the licences and payment methods it loads are where the history starts, not additions.`
    : `${since}: the licences and payment methods it found are where the history starts, so they are not listed as added.`;
}

/**
 * `/changes`: licence and payment-method changes from `change_log`, per day as a chart and
 * newest first as a table, filtered by kind, jurisdiction, payment category and dates.
 */
export function changesPage(ctx: UiContext, search: URLSearchParams): Page {
  const params = parseParams(search, {
    kind: enumParam(['licenses', 'payment_methods'] as const),
    jurisdiction: textParam(100),
    category: textParam(100),
    from: dateParam,
    to: dateParam,
    before: changeCursorParam,
  });
  if (params.kind === 'payment_methods' && params.jurisdiction !== null)
    throw new BadRequestError(
      '"jurisdiction" filters licence changes; it cannot go with kind=payment_methods',
    );
  if (params.kind === 'licenses' && params.category !== null)
    throw new BadRequestError('"category" filters payment-method changes; it cannot go with kind=licenses');
  if (params.from !== null && params.to !== null && params.from > params.to)
    throw new BadRequestError(`"from" (${params.from}) is after "to" (${params.to})`);
  const nowMs = ctx.now();
  const toDay = params.to ?? new Date(nowMs).toISOString().slice(0, 10);
  const fromDay =
    params.from ?? new Date(Date.parse(`${toDay}T00:00:00.000Z`) - 29 * DAY_MS).toISOString().slice(0, 10);
  const chartFrom =
    Date.parse(toDay) - Date.parse(fromDay) >= CHART_MAX_DAYS * DAY_MS
      ? new Date(Date.parse(toDay) - (CHART_MAX_DAYS - 1) * DAY_MS).toISOString().slice(0, 10)
      : fromDay;
  const toExclusive = new Date(Date.parse(`${toDay}T00:00:00.000Z`) + DAY_MS).toISOString();
  const rows = readConsistently(ctx.mirror, () =>
    listChanges(ctx.mirror, {
      kind: params.kind,
      jurisdiction: params.jurisdiction,
      category: params.category,
      // Without "from" the table goes back to the first change; the chart shows 30 days.
      fromAt: params.from === null ? null : `${params.from}T00:00:00.000Z`,
      toAt: toExclusive,
      before: params.before,
      limit: PAGE_SIZE,
    }),
  );
  const perDay = ctx.changes.perDay({
    table: params.kind,
    jurisdiction: params.jurisdiction,
    category: params.category,
    fromDay: chartFrom,
    toDay,
  });
  const more = rows.length > PAGE_SIZE;
  const page = rows.slice(0, PAGE_SIZE);
  const filters = {
    kind: params.kind,
    jurisdiction: params.jurisdiction,
    category: params.category,
    from: params.from,
    to: params.to,
  };
  const last = page[page.length - 1];
  const next =
    more && last ? `/changes${queryString({ ...filters, before: `${last.at}_${last.id}` })}` : null;
  const first = params.before === null ? null : `/changes${queryString(filters)}`;
  const option = (value: string, selected: string | null, label = value) =>
    html`<option value="${value}" ${value === selected ? html` selected` : ''}>${label}</option>`;
  const jurisdictions = withSelected(ctx.changes.jurisdictions(), params.jurisdiction);
  const categories = withSelected(ctx.changes.categories(), params.category);
  const baseline = readBaseline(ctx.mirror);
  const body = html`<h1>Changes</h1>
    ${baseline === undefined ? '' : html`<p class="muted">${baselineNote(baseline)}</p>`}
    <form class="filters" method="get" action="/changes">
      <label
        >kind<select name="kind">
          <option value="">licences and payment methods</option>
          ${option('licenses', params.kind, 'licences')}${option('payment_methods', params.kind, 'payment methods')}
        </select></label
      >
      <label
        >jurisdiction<select name="jurisdiction">
          <option value="">any</option>
          ${jurisdictions.map((j) => option(j, params.jurisdiction))}
        </select></label
      >
      <label
        >payment category<select name="category">
          <option value="">any</option>
          ${categories.map((c) => option(c, params.category))}
        </select></label
      >
      <label
        >from (YYYY-MM-DD)<input
          type="text"
          name="from"
          value="${params.from ?? ''}"
          pattern="\\d{4}-\\d{2}-\\d{2}"
          placeholder="YYYY-MM-DD"
          size="10"
      /></label>
      <label
        >to (YYYY-MM-DD)<input
          type="text"
          name="to"
          value="${params.to ?? ''}"
          pattern="\\d{4}-\\d{2}-\\d{2}"
          placeholder="YYYY-MM-DD"
          size="10"
      /></label>
      <button type="submit">Filter</button>
    </form>
    <section>
      <h2>Per day, ${chartFrom} to ${toDay}</h2>
      ${stackedBarChart({ title: `Changes per UTC day, ${chartFrom} to ${toDay}`, categories: perDay.days, series: perDay.series, unit: 'changes' })}
      ${perDay.series.length === 0 ? html`<p class="muted">No change in these days.</p>` : ''}
      ${ctx.changes.behind ? html`<p class="note">The chart is still counting the newest changes; reload in a moment.</p>` : ''}
    </section>
    <h2>Newest first</h2>
    ${
      page.length === 0
        ? html`<p class="muted">No change matches.</p>`
        : html`<table>
            <thead>
              <tr>
                <th>at</th>
                <th>domain</th>
                <th>kind</th>
                <th>item</th>
                <th>change</th>
                <th>value</th>
              </tr>
            </thead>
            <tbody>
              ${page.map((r) => {
                const d = describe(r);
                return html`<tr>
                  <td>${formatTime(r.at)}</td>
                  <td><a href="${domainHref(r.domain_normalized)}">${r.domain_normalized}</a></td>
                  <td>${d.kind}</td>
                  <td>${d.item}</td>
                  <td>${badge(r.change)}</td>
                  <td>${transition(r)}</td>
                </tr>`;
              })}
            </tbody>
          </table>`
    }
    ${pager(next, first)}
    <p class="note">
      ${formatCount(ctx.changes.total(chartFrom, toDay))} changes of any kind in the days charted. A
      jurisdiction selects licence changes and a payment category payment-method changes; with both, both are
      listed.
    </p>`;
  return { title: 'Changes', current: 'Changes', body };
}

/** The choices plus the selected value if it is not among them (a filter on a value not seen). */
export function withSelected(choices: readonly string[], selected: string | null): string[] {
  return selected === null || choices.includes(selected) ? [...choices] : [...choices, selected].sort();
}
