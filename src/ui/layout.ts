import { formatTime } from './format.js';
import { html } from './html.js';
import type { SafeHtml } from './html.js';

/** The pages named in the navigation, in order: each an ordinary link named after the page. */
export const NAV_PAGES = [
  { name: 'Overview', href: '/' },
  { name: 'Runs', href: '/runs' },
  { name: 'Credits', href: '/credits' },
  { name: 'Changes', href: '/changes' },
  { name: 'Domains', href: '/domains' },
  { name: 'Snapshots', href: '/snapshots' },
] as const;

/** A page's name in the navigation. */
export type NavName = (typeof NAV_PAGES)[number]['name'];

/** What a page handler returns: the document's title, its place in the navigation, its body. */
export interface Page {
  title: string;
  current: NavName | null;
  body: SafeHtml;
}

/** The whole HTML document of a page. Only `/assets/` is referenced: nothing from elsewhere. */
export function renderDocument(page: Page, options: { mirrorPath: string; nowMs: number }): string {
  const nav = NAV_PAGES.map(
    (p) =>
      html`<a href="${p.href}" ${p.name === page.current ? html` aria-current="page"` : ''}>${p.name}</a>`,
  );
  const now = new Date(options.nowMs).toISOString();
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${page.title} · domain-sync</title>
        <link rel="stylesheet" href="/assets/ui.css" />
        <link rel="icon" href="/assets/icon.svg" type="image/svg+xml" />
      </head>
      <body>
        <header class="top">
          <span class="brand">domain-sync</span>
          <nav class="main" aria-label="Pages">${nav}</nav>
        </header>
        <main>${page.body}</main>
        <footer>
          Read-only view of the mirror <code>${options.mirrorPath}</code> · page drawn ${formatTime(now)} ·
          all times UTC
        </footer>
      </body>
    </html> `.value;
}

/** A "next page" link (or nothing when there is no next page). */
export function pager(next: string | null, first: string | null): SafeHtml {
  if (next === null && first === null) return html``;
  return html`<div class="pager">
    ${first === null ? '' : html`<a href="${first}">« first page</a>`}${next === null ? '' : html`<a href="${next}" rel="next">next page »</a>`}
  </div>`;
}
