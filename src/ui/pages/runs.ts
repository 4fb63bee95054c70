import type { PipelineRunRecord } from '../../mirror/store/runs.js';
import { readConsistently } from '../../mirror/store/ui-overview.js';
import {
  ledgerOfRun,
  listPipelineRuns,
  pipelineRunById,
  pipelineRunFacets,
  pipelineRunsSince,
} from '../../mirror/store/ui-runs.js';
import { timeline } from '../charts.js';
import { PAGE_SIZE } from '../context.js';
import type { UiContext } from '../context.js';
import { badge, formatCount, formatDurationMs, formatTime, statusClass } from '../format.js';
import { html, queryString } from '../html.js';
import type { SafeHtml } from '../html.js';
import { pager } from '../layout.js';
import type { Page } from '../layout.js';
import { idParam, intParam, parseParams, textParam } from '../params.js';

const TIMELINE_MAX_RUNS = 500;

function duration(run: PipelineRunRecord): string {
  return run.finished_at
    ? formatDurationMs(Date.parse(run.finished_at) - Date.parse(run.started_at))
    : 'running';
}

/** The numeric and short text stats of a run as `key value` pairs (nested values left out). */
export function statsSummary(stats: Record<string, unknown> | null): SafeHtml {
  if (stats === null) return html`–`;
  const parts = Object.entries(stats)
    .filter(
      ([, v]) => typeof v === 'number' || typeof v === 'boolean' || (typeof v === 'string' && v.length <= 40),
    )
    .slice(0, 8)
    .map(
      ([k, v]) => html`<span class="muted">${k}</span> ${typeof v === 'number' ? formatCount(v) : String(v)}`,
    );
  return html`${parts.map((p, i) => html`${i > 0 ? ' · ' : ''}${p}`)}`;
}

/** `/runs`: run history (newest first, filterable by pipeline and outcome) and a timeline. */
export function runsPage(ctx: UiContext, search: URLSearchParams): Page {
  const params = parseParams(search, {
    pipeline: textParam(100),
    status: textParam(100),
    before: idParam,
    days: intParam(1, 366),
  });
  const nowMs = ctx.now();
  const days = params.days ?? 14;
  const fromMs = nowMs - days * 86_400_000;
  const data = readConsistently(ctx.mirror, () => ({
    runs: listPipelineRuns(ctx.mirror, {
      pipeline: params.pipeline,
      status: params.status,
      beforeId: params.before,
      limit: PAGE_SIZE,
    }),
    recent: pipelineRunsSince(ctx.mirror, new Date(fromMs).toISOString(), TIMELINE_MAX_RUNS),
    facets: pipelineRunFacets(ctx.mirror),
  }));
  const more = data.runs.length > PAGE_SIZE;
  const runs = data.runs.slice(0, PAGE_SIZE);
  const filters = { pipeline: params.pipeline, status: params.status, days: params.days };
  const next = more ? `/runs${queryString({ ...filters, before: runs[runs.length - 1]?.id })}` : null;
  const first = params.before === null ? null : `/runs${queryString(filters)}`;
  const rows = [...new Set(data.recent.map((r) => r.pipeline))].sort();
  const option = (value: string, selected: string | null) =>
    html`<option value="${value}" ${value === selected ? html` selected` : ''}>${value}</option>`;
  const body = html`<h1>Runs</h1>
    <section>
      <h2>Timeline, last ${days} days</h2>
      ${
        data.recent.length === 0
          ? html`<p class="muted">No run started in the last ${days} days.</p>`
          : timeline({
              title: `Pipeline runs of the last ${days} days`,
              rows,
              fromMs,
              toMs: nowMs,
              items: data.recent.map((r) => ({
                row: r.pipeline,
                startMs: Date.parse(r.started_at),
                endMs: r.finished_at ? Date.parse(r.finished_at) : null,
                className: statusClass(r.status),
                title: `${r.pipeline} #${r.id}: ${r.status}, started ${r.started_at.slice(0, 19).replace('T', ' ')} UTC, ${duration(r)}`,
                href: `/runs/${r.id}`,
              })),
            })
      }
      ${data.recent.length >= TIMELINE_MAX_RUNS ? html`<p class="note">Only the latest ${TIMELINE_MAX_RUNS} runs are drawn.</p>` : ''}
    </section>
    <h2>History</h2>
    <form class="filters" method="get" action="/runs">
      <label
        >pipeline<select name="pipeline">
          <option value="">any</option>
          ${data.facets.pipelines.map((p) => option(p, params.pipeline))}
        </select></label
      >
      <label
        >outcome<select name="status">
          <option value="">any</option>
          ${data.facets.statuses.map((s) => option(s, params.status))}
        </select></label
      >
      <button type="submit">Filter</button>
    </form>
    ${
      runs.length === 0
        ? html`<p class="muted">No run matches.</p>`
        : html`<table>
            <thead>
              <tr>
                <th class="num">run</th>
                <th>pipeline</th>
                <th>outcome</th>
                <th>started</th>
                <th class="num">took</th>
                <th class="num">credits</th>
                <th class="num">failures</th>
                <th>stats</th>
                <th>error</th>
              </tr>
            </thead>
            <tbody>
              ${runs.map(
                (r) =>
                  html`<tr>
                    <td class="num"><a href="/runs/${r.id}">${r.id}</a></td>
                    <td>${r.pipeline}</td>
                    <td>${badge(r.status)}</td>
                    <td>${formatTime(r.started_at)}</td>
                    <td class="num">${duration(r)}</td>
                    <td class="num">${formatCount(r.credits_spent)}</td>
                    <td class="num">
                      ${formatCount(typeof r.stats?.failures === 'number' ? r.stats.failures : null)}
                    </td>
                    <td>${statsSummary(r.stats)}</td>
                    <td>
                      ${r.error === null ? '' : r.error.length > 160 ? `${r.error.slice(0, 160)}…` : r.error}
                    </td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }
    ${pager(next, first)}`;
  return { title: 'Runs', current: 'Runs', body };
}

/** `/runs/ID`: one run with all its stats, its error and its credits by operation. */
export function runPage(ctx: UiContext, search: URLSearchParams, id: number): Page | null {
  parseParams(search, {});
  const data = readConsistently(ctx.mirror, () => {
    const run = pipelineRunById(ctx.mirror, id);
    return run === undefined ? undefined : { run, ledger: ledgerOfRun(ctx.mirror, id) };
  });
  if (data === undefined) return null;
  const { run, ledger } = data;
  const body = html`<h1>Run ${run.id}: ${run.pipeline}</h1>
    <p><a href="/runs">« all runs</a></p>
    <dl class="kv">
      <dt>outcome</dt>
      <dd>${badge(run.status)}</dd>
      <dt>started</dt>
      <dd>${formatTime(run.started_at)}</dd>
      <dt>finished</dt>
      <dd>${formatTime(run.finished_at)}</dd>
      <dt>took</dt>
      <dd>${duration(run)}</dd>
      <dt>credits spent</dt>
      <dd>${formatCount(run.credits_spent)}</dd>
      <dt>process</dt>
      <dd>${run.pid === null ? '–' : `pid ${run.pid}`}</dd>
      <dt>error</dt>
      <dd>${run.error ?? '–'}</dd>
    </dl>
    <h2>Stats</h2>
    ${run.stats === null ? html`<p class="muted">None recorded.</p>` : html`<pre>${JSON.stringify(run.stats, null, 2)}</pre>`}
    <h2>Credits by operation</h2>
    ${
      ledger.length === 0
        ? html`<p class="muted">No ledger entry for this run.</p>`
        : html`<table>
            <thead>
              <tr>
                <th>operation</th>
                <th class="num">entries</th>
                <th class="num">credits</th>
              </tr>
            </thead>
            <tbody>
              ${ledger.map(
                (l) =>
                  html`<tr>
                    <td>${l.operation}</td>
                    <td class="num">${formatCount(l.entries)}</td>
                    <td class="num">${formatCount(l.credits)}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }`;
  return { title: `Run ${run.id}`, current: 'Runs', body };
}
