import { createHash } from 'node:crypto';

/*
 * The dashboard's only static files, kept in the source so the server needs no files next to
 * it and nothing is fetched from elsewhere: a stylesheet (system fonts only) and an icon.
 */

const CSS = `
:root { --fg: #1d232b; --muted: #5c6773; --line: #d9dee4; --bg: #f6f8fa; --card: #fff; --accent: #1f5fbf;
  --ok: #2e8540; --warn: #c27c0e; --bad: #c0392b; --other: #7d8793; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  color: var(--fg); background: var(--bg); }
header.top { background: #16202c; color: #fff; padding: 0 20px; display: flex; align-items: center; gap: 24px; flex-wrap: wrap; }
header.top .brand { font-weight: 600; padding: 12px 0; }
nav.main a { color: #c9d4e0; text-decoration: none; padding: 14px 10px; display: inline-block; }
nav.main a:hover { color: #fff; }
nav.main a[aria-current="page"] { color: #fff; box-shadow: inset 0 -3px 0 #5b9cf5; }
main { padding: 16px 20px 40px; max-width: 1280px; }
h1 { font-size: 22px; margin: 8px 0 12px; }
h2 { font-size: 17px; margin: 24px 0 8px; }
a { color: var(--accent); }
.muted, .note { color: var(--muted); }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(190px, 1fr)); gap: 12px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: 10px 14px; }
.card .k { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .03em; }
.card .v { font-size: 22px; font-weight: 600; }
.card .s { color: var(--muted); font-size: 12px; }
table { border-collapse: collapse; background: var(--card); border: 1px solid var(--line); width: 100%; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: #eef1f4; font-weight: 600; font-size: 13px; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.removed td { color: var(--muted); text-decoration: line-through; }
tr.removed td.keep { text-decoration: none; }
.badge { display: inline-block; border-radius: 10px; padding: 0 8px; font-size: 12px; color: #fff; background: var(--other); }
.badge.ok { background: var(--ok); } .badge.warn { background: var(--warn); } .badge.bad { background: var(--bad); }
form.filters { display: flex; flex-wrap: wrap; gap: 10px; align-items: end; background: var(--card);
  border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; margin-bottom: 12px; }
form.filters label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); gap: 2px; }
form.filters input, form.filters select { font: inherit; padding: 4px 6px; min-width: 140px; }
form.filters button { font: inherit; padding: 5px 14px; }
.pager { margin: 10px 0; display: flex; gap: 16px; }
pre { background: var(--card); border: 1px solid var(--line); padding: 8px; overflow: auto; max-height: 320px; font-size: 12px; white-space: pre-wrap; word-break: break-word; }
.chart-box { margin: 0; }
svg.chart { background: var(--card); border: 1px solid var(--line); border-radius: 6px; max-width: 100%; height: auto; }
svg.chart .grid { stroke: #e6e9ed; stroke-width: 1; }
svg.chart .tick, svg.chart .label, svg.chart .value { font-size: 11px; fill: var(--muted); }
svg.chart .bar.ok { fill: var(--ok); } svg.chart .bar.warn { fill: var(--warn); }
svg.chart .bar.bad { fill: var(--bad); } svg.chart .bar.other { fill: var(--other); }
.s0 { fill: #1f77b4; background: #1f77b4; } .s1 { fill: #ff7f0e; background: #ff7f0e; }
.s2 { fill: #2ca02c; background: #2ca02c; } .s3 { fill: #d62728; background: #d62728; }
.s4 { fill: #9467bd; background: #9467bd; } .s5 { fill: #8c564b; background: #8c564b; }
.s6 { fill: #e377c2; background: #e377c2; } .s7 { fill: #17becf; background: #17becf; }
.legend { display: flex; flex-wrap: wrap; gap: 12px; font-size: 12px; color: var(--muted); margin-top: 4px; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 4px; vertical-align: -1px; }
.grid2 { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 16px; align-items: start; }
dl.kv { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; background: var(--card);
  border: 1px solid var(--line); border-radius: 6px; padding: 10px 14px; margin: 0; }
dl.kv dt { color: var(--muted); } dl.kv dd { margin: 0; word-break: break-word; }
footer { color: var(--muted); font-size: 12px; padding: 12px 20px; }
.error-box { background: var(--card); border: 1px solid var(--bad); border-radius: 6px; padding: 12px 16px; }
`;

const ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#16202c"/><rect x="3" y="8" width="2" height="5" fill="#5b9cf5"/><rect x="7" y="5" width="2" height="8" fill="#5b9cf5"/><rect x="11" y="3" width="2" height="10" fill="#5b9cf5"/></svg>`;

/** A static file the server answers. */
export interface Asset {
  contentType: string;
  body: Buffer;
  /** Strong validator, from the content. */
  etag: string;
}

function asset(contentType: string, text: string): Asset {
  const body = Buffer.from(text, 'utf8');
  return {
    contentType,
    body,
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
  };
}

/** Static files by path. `/favicon.ico` is the icon too: browsers ask for it on their own. */
export const ASSETS: ReadonlyMap<string, Asset> = new Map([
  ['/assets/ui.css', asset('text/css; charset=utf-8', CSS)],
  ['/assets/icon.svg', asset('image/svg+xml', ICON)],
  ['/favicon.ico', asset('image/svg+xml', ICON)],
]);
