import { creditsSpent } from '../../mirror/store/credits.js';
import { latestAccountSnapshot } from '../../mirror/store/credits.js';
import { listLocks } from '../../mirror/store/locks.js';
import { lastRuns } from '../../mirror/store/runs.js';
import { freshnessHistogram, overviewCounts, readConsistently } from '../../mirror/store/ui-overview.js';
import { barChart } from '../charts.js';
import type { UiContext } from '../context.js';
import { badge, formatAge, formatCount, formatDurationMs, formatTime } from '../format.js';
import { html } from '../html.js';
import type { Page } from '../layout.js';
import { parseParams } from '../params.js';

/**
 * `/`: counts, the freshness histogram of listed domains, the locks held, the last run of each
 * pipeline with its outcome, and the credits of today and this month.
 */
export function overviewPage(ctx: UiContext, search: URLSearchParams): Page {
  parseParams(search, {});
  const nowMs = ctx.now();
  const now = new Date(nowMs).toISOString();
  const data = readConsistently(ctx.mirror, () => ({
    counts: overviewCounts(ctx.mirror),
    freshness: freshnessHistogram(ctx.mirror, nowMs),
    locks: listLocks(ctx.mirror, now),
    runs: lastRuns(ctx.mirror),
    today: creditsSpent(ctx.mirror, { since: `${now.slice(0, 10)}T00:00:00.000Z` }),
    month: creditsSpent(ctx.mirror, { since: `${now.slice(0, 7)}-01T00:00:00.000Z` }),
    account: latestAccountSnapshot(ctx.mirror),
  }));
  const { counts } = data;
  const weekAgo = new Date(nowMs - 6 * 86_400_000).toISOString().slice(0, 10);
  const changesThisWeek = ctx.changes.total(weekAgo, now.slice(0, 10));
  const card = (k: string, v: string, s: string) =>
    html`<div class="card">
      <div class="k">${k}</div>
      <div class="v">${v}</div>
      <div class="s">${s}</div>
    </div>`;
  const listed = counts.domains.total - counts.domains.unlisted;
  const body = html`<h1>Overview</h1>
    <div class="cards">
      ${card('Domains', formatCount(listed), `listed; ${formatCount(counts.domains.unlisted)} no longer listed, ${formatCount(counts.domains.withoutProfile)} without a profile`)}
      ${card('Licences', formatCount(counts.licences.total - counts.licences.removed), `current; ${formatCount(counts.licences.removed)} removed`)}
      ${card('Payment methods', formatCount(counts.paymentMethods.total - counts.paymentMethods.removed), `current; ${formatCount(counts.paymentMethods.removed)} removed`)}
      ${card('Changes', formatCount(changesThisWeek), 'licence and payment-method changes in the last 7 days')}
      ${card('Credits today', formatCount(data.today), `${formatCount(data.month)} this month (UTC)`)}
      ${card('Account balance', data.account ? formatCount(data.account.available_credits) : '–', data.account ? `available, as of ${data.account.at.slice(0, 10)}` : 'no account answer recorded yet')}
    </div>
    <div class="grid2">
      <section>
        <h2>Freshness</h2>
        <p class="note">
          Listed domains by the age of their profile's <code>last_enriched_at</code>, in days.
        </p>
        ${barChart({
          title: 'Listed domains by profile age',
          bars: data.freshness.map((b) => ({
            label: b.label,
            value: b.domains,
            title: `${b.label === 'never' ? 'no last_enriched_at' : `enriched ${b.label} ago`}: ${formatCount(b.domains)} domains`,
            className:
              b.fromDays === null ? 'other' : b.fromDays >= 180 ? 'bad' : b.fromDays >= 30 ? 'warn' : 'ok',
          })),
        })}
      </section>
      <section>
        <h2>Last run of each pipeline</h2>
        ${
          data.runs.length === 0
            ? html`<p class="muted">No pipeline has run on this mirror yet.</p>`
            : html`<table>
                <thead>
                  <tr>
                    <th>pipeline</th>
                    <th>outcome</th>
                    <th>started</th>
                    <th class="num">took</th>
                    <th class="num">credits</th>
                    <th class="num">failures</th>
                  </tr>
                </thead>
                <tbody>
                  ${data.runs.map(
                    (r) =>
                      html`<tr>
                        <td><a href="/runs/${r.id}">${r.pipeline}</a></td>
                        <td>${badge(r.status)}</td>
                        <td>
                          ${formatTime(r.started_at)}
                          <div class="muted">${formatAge(r.started_at, nowMs)}</div>
                        </td>
                        <td class="num">
                          ${r.finished_at ? formatDurationMs(Date.parse(r.finished_at) - Date.parse(r.started_at)) : 'running'}
                        </td>
                        <td class="num">${formatCount(r.credits_spent)}</td>
                        <td class="num">
                          ${formatCount(typeof r.stats?.failures === 'number' ? r.stats.failures : null)}
                        </td>
                      </tr>`,
                  )}
                </tbody>
              </table>`
        }
        <h2>Locks</h2>
        ${
          data.locks.length === 0
            ? html`<p class="muted">None: no pipeline is writing the mirror.</p>`
            : html`<table>
                <thead>
                  <tr>
                    <th>lock</th>
                    <th>held by</th>
                    <th>since</th>
                    <th>lease until</th>
                  </tr>
                </thead>
                <tbody>
                  ${data.locks.map(
                    (l) =>
                      html`<tr>
                        <td>${l.name}</td>
                        <td>${l.pipeline} (pid ${l.pid} on ${l.hostname})</td>
                        <td>${formatTime(l.acquired_at)}</td>
                        <td>${formatTime(l.expires_at)}${l.stale ? html` ${badge('stale')}` : ''}</td>
                      </tr>`,
                  )}
                </tbody>
              </table>`
        }
      </section>
    </div>`;
  return { title: 'Overview', current: 'Overview', body };
}
