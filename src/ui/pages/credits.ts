import { readAllowance, type AllowanceState } from '../../runtime/allowance.js';
import {
  ledgerEntries,
  recentAccountSnapshots,
  spendPerDay,
  spendPerPipeline,
} from '../../mirror/store/ui-credits.js';
import { readConsistently } from '../../mirror/store/ui-overview.js';
import { daysBetween } from '../change-counts.js';
import { stackedBarChart } from '../charts.js';
import { PAGE_SIZE, domainHref } from '../context.js';
import type { UiConfig, UiContext } from '../context.js';
import { formatCount, formatTime } from '../format.js';
import { html, queryString } from '../html.js';
import type { SafeHtml } from '../html.js';
import { pager } from '../layout.js';
import type { Page } from '../layout.js';
import { idParam, intParam, parseParams } from '../params.js';

/** One allowance as the page shows it. */
export type AllowanceView = AllowanceState;

/**
 * The configured allowances and what is left of them at `nowMs`, read as `enrich`, `export` and
 * `status` read them: the ledger plus every paid request in flight or with an unknown outcome
 * (docs/credits.md).
 */
export function allowancesLeft(ctx: UiContext, nowMs: number): AllowanceView[] {
  const status = readAllowance(ctx.mirror, ctx.config.credits, nowMs);
  return [status.day, status.month].filter((s): s is AllowanceState => s !== null);
}

/** Per-invocation budgets from the config: `enrich.budget` and every named pipeline step's. */
function budgets(config: UiConfig): Array<{ where: string; credits: number }> {
  const out = [{ where: 'enrich.budget (each enrich run without --budget)', credits: config.enrich.budget }];
  for (const [name, pipeline] of Object.entries(config.pipelines)) {
    pipeline.steps.forEach((step, i) => {
      for (const key of ['budget', 'maxCredits'] as const) {
        const value = step.options[key];
        if (typeof value === 'number')
          out.push({ where: `pipelines.${name}.steps[${i}] (${step.type}) ${key}`, credits: value });
      }
    });
  }
  return out;
}

/**
 * `/credits`: spend per day and pipeline, allowances and budgets, the account's last known
 * balance, and the ledger newest first.
 */
export function creditsPage(ctx: UiContext, search: URLSearchParams): Page {
  const params = parseParams(search, { days: intParam(1, 366), before: idParam });
  const nowMs = ctx.now();
  const days = params.days ?? 30;
  const toDay = new Date(nowMs).toISOString().slice(0, 10);
  const fromDay = new Date(nowMs - (days - 1) * 86_400_000).toISOString().slice(0, 10);
  const data = readConsistently(ctx.mirror, () => ({
    perDay: spendPerDay(ctx.mirror, `${fromDay}T00:00:00.000Z`),
    ever: spendPerPipeline(ctx.mirror, null),
    allowances: allowancesLeft(ctx, nowMs),
    accounts: recentAccountSnapshots(ctx.mirror, 10),
    ledger: ledgerEntries(ctx.mirror, { beforeId: params.before, limit: PAGE_SIZE }),
  }));
  // The window's totals per pipeline come from the per-day rows: one pass over the ledger less.
  const windowByPipeline = new Map<string, number>();
  for (const r of data.perDay)
    windowByPipeline.set(r.pipeline, (windowByPipeline.get(r.pipeline) ?? 0) + r.credits);
  const inWindow = [...windowByPipeline].map(([pipeline, credits]) => ({ pipeline, credits }));
  const categories = daysBetween(fromDay, toDay);
  const pipelines = [...new Set(data.perDay.map((r) => r.pipeline))].sort();
  const byKey = new Map(data.perDay.map((r) => [`${r.day} ${r.pipeline}`, r.credits]));
  const series = pipelines.map((pipeline) => ({
    name: pipeline,
    values: categories.map((day) => byKey.get(`${day} ${pipeline}`) ?? 0),
  }));
  const account = data.accounts[0];
  const more = data.ledger.length > PAGE_SIZE;
  const ledger = data.ledger.slice(0, PAGE_SIZE);
  const windowQuery = { days: params.days };
  const next = more
    ? `/credits${queryString({ ...windowQuery, before: ledger[ledger.length - 1]?.id })}#ledger`
    : null;
  const first = params.before === null ? null : `/credits${queryString(windowQuery)}#ledger`;
  const total = (rows: Array<{ credits: number }>) => rows.reduce((n, r) => n + r.credits, 0);
  const body = html`<h1>Credits</h1>
    <form class="filters" method="get" action="/credits">
      <label>days shown<input type="number" name="days" min="1" max="366" value="${days}" /></label>
      <button type="submit">Show</button>
    </form>
    <section>
      <h2>Spend per day and pipeline, last ${days} days</h2>
      ${stackedBarChart({ title: `Credits spent per UTC day and pipeline, ${fromDay} to ${toDay}`, categories, series, unit: 'credits' })}
      ${series.length === 0 ? html`<p class="muted">No credit was spent in these days.</p>` : ''}
    </section>
    <div class="grid2">
      <section>
        <h2>Per pipeline</h2>
        <table>
          <thead>
            <tr>
              <th>pipeline</th>
              <th class="num">last ${days} days</th>
              <th class="num">ever</th>
              <th class="num">ledger entries</th>
            </tr>
          </thead>
          <tbody>
            ${data.ever.map(
              (p) =>
                html`<tr>
                  <td>${p.pipeline}</td>
                  <td class="num">${formatCount(windowByPipeline.get(p.pipeline) ?? 0)}</td>
                  <td class="num">${formatCount(p.credits)}</td>
                  <td class="num">${formatCount(p.entries)}</td>
                </tr>`,
            )}
            <tr>
              <th>all</th>
              <th class="num">${formatCount(total(inWindow))}</th>
              <th class="num">${formatCount(total(data.ever))}</th>
              <th class="num">${formatCount(data.ever.reduce((n, p) => n + p.entries, 0))}</th>
            </tr>
          </tbody>
        </table>
      </section>
      <section>
        <h2>Allowances and budgets</h2>
        ${allowanceTable(data.allowances)}
        <table>
          <thead>
            <tr>
              <th>budget</th>
              <th class="num">credits per run</th>
            </tr>
          </thead>
          <tbody>
            ${budgets(ctx.config).map(
              (b) =>
                html`<tr>
                  <td>${b.where}</td>
                  <td class="num">${formatCount(b.credits)}</td>
                </tr>`,
            )}
          </tbody>
        </table>
        <h2>Account</h2>
        ${
          account === undefined
            ? html`<p class="muted">
                No account answer recorded yet (<code>domain-sync account</code> records one).
              </p>`
            : html`<dl class="kv">
                <dt>available</dt>
                <dd>${formatCount(account.available_credits)}</dd>
                <dt>granted</dt>
                <dd>
                  ${account.credits_granted === null ? 'unlimited' : formatCount(account.credits_granted)}
                </dd>
                <dt>used</dt>
                <dd>${formatCount(account.credits_used)}</dd>
                <dt>reserved</dt>
                <dd>${formatCount(account.credits_reserved)}</dd>
                <dt>plan</dt>
                <dd>${account.plan ?? '–'}</dd>
                <dt>as of</dt>
                <dd>${formatTime(account.at)}</dd>
              </dl>`
        }
      </section>
    </div>
    <h2 id="ledger">Ledger</h2>
    ${
      ledger.length === 0
        ? html`<p class="muted">The ledger is empty.</p>`
        : html`<table>
            <thead>
              <tr>
                <th class="num">entry</th>
                <th>at</th>
                <th>pipeline</th>
                <th>operation</th>
                <th>domain</th>
                <th class="num">credits</th>
                <th class="num">estimated</th>
                <th>note</th>
              </tr>
            </thead>
            <tbody>
              ${ledger.map(
                (e) =>
                  html`<tr>
                    <td class="num">${e.id}</td>
                    <td>${formatTime(e.at)}</td>
                    <td>
                      ${e.pipeline_run_id === null ? '–' : html`<a href="/runs/${e.pipeline_run_id}">${e.pipeline ?? `run ${e.pipeline_run_id}`}</a>`}
                    </td>
                    <td>${e.operation}${e.export_id === null ? '' : ` (export ${e.export_id})`}</td>
                    <td>
                      ${e.domain === null ? '–' : html`<a href="${domainHref(e.domain)}">${e.domain}</a>`}
                    </td>
                    <td class="num">${formatCount(e.credits)}</td>
                    <td class="num">${formatCount(e.estimated_credits)}</td>
                    <td>${e.note ?? ''}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }
    ${pager(next, first)}`;
  return { title: 'Credits', current: 'Credits', body };
}

function allowanceTable(allowances: readonly AllowanceView[]): SafeHtml {
  if (allowances.length === 0)
    return html`<p class="muted">
      No allowance is set (<code>credits.maxPerDay</code>, <code>credits.maxPerMonth</code>).
    </p>`;
  return html`<table>
    <thead>
      <tr>
        <th>allowance</th>
        <th class="num">allows</th>
        <th class="num">spent</th>
        <th class="num">left</th>
        <th>resets</th>
      </tr>
    </thead>
    <tbody>
      ${allowances.map(
        (a) =>
          html`<tr>
            <td>${a.key}</td>
            <td class="num">${formatCount(a.allows)}</td>
            <td class="num">${formatCount(a.used)}</td>
            <td class="num">${formatCount(a.remaining)}</td>
            <td>${formatTime(a.resetsAt)}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}
