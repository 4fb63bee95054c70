import { formatCount } from './format.js';
import { html } from './html.js';
import type { SafeHtml } from './html.js';

/*
 * Hand-written inline SVG charts, drawn on the server: no chart library, no script in the page,
 * nothing fetched. Colours come from classes of the stylesheet (`s0`…`s7` for series, `ok`,
 * `warn`, `bad`, `other` for outcomes), so the page's Content-Security-Policy needs no inline
 * style. Every mark has a `<title>`, which browsers show as a tooltip and screen readers read.
 */

const SERIES_CLASSES = 8;

/** The CSS class of the `index`-th series. */
export function seriesClass(index: number): string {
  return `s${index % SERIES_CLASSES}`;
}

/** A round upper bound for an axis: 1, 2 or 5 × 10^n, at least `max`. */
/** The `<svg>` every chart is drawn in: sized, labelled for assistive technology, titled. */
function svgFrame(width: number, height: number, title: string, content: SafeHtml): SafeHtml {
  return html`<svg
    class="chart"
    role="img"
    aria-label="${title}"
    viewBox="0 0 ${width} ${height}"
    width="${width}"
    height="${height}"
    xmlns="http://www.w3.org/2000/svg"
  >
    <title>${title}</title>
    ${content}
  </svg>`;
}

function niceMax(max: number): number {
  if (max <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 5, 10]) if (step * power >= max) return step * power;
  return 10 * power;
}

const round = (n: number): number => Math.round(n * 10) / 10;

function axis(width: number, height: number, pad: Pad, max: number): SafeHtml {
  const ticks = [0, max / 2, max];
  return html`${ticks.map((t) => {
    const y = round(height - pad.bottom - (t / max) * (height - pad.top - pad.bottom));
    return html`<line class="grid" x1="${pad.left}" x2="${width - pad.right}" y1="${y}" y2="${y}"></line
      ><text class="tick" x="${pad.left - 6}" y="${y + 4}" text-anchor="end"
        >${formatCount(Math.round(t))}</text
      >`;
  })}`;
}

interface Pad {
  top: number;
  right: number;
  bottom: number;
  left: number;
}

const PAD: Pad = { top: 12, right: 12, bottom: 40, left: 56 };

/** One bar of {@link barChart}. */
export interface Bar {
  label: string;
  value: number;
  /** Tooltip; defaults to `label: value`. */
  title?: string;
  /** Outcome class instead of the first series colour. */
  className?: string;
}

/** A bar chart with one bar per label (the freshness histogram). */
export function barChart(options: {
  title: string;
  bars: readonly Bar[];
  width?: number;
  height?: number;
}): SafeHtml {
  const width = options.width ?? 640;
  const height = options.height ?? 220;
  const max = niceMax(Math.max(0, ...options.bars.map((b) => b.value)));
  const slot = (width - PAD.left - PAD.right) / Math.max(1, options.bars.length);
  const plot = height - PAD.top - PAD.bottom;
  const bars = options.bars.map((bar, i) => {
    const h = round((bar.value / max) * plot);
    const x = round(PAD.left + i * slot + slot * 0.15);
    const w = round(slot * 0.7);
    const y = round(height - PAD.bottom - h);
    return html`<g
      ><rect
        class="bar ${bar.className ?? seriesClass(0)}"
        x="${x}"
        y="${y}"
        width="${w}"
        height="${Math.max(h, 0)}"
        ><title>${bar.title ?? `${bar.label}: ${formatCount(bar.value)}`}</title></rect
      ><text class="label" x="${round(x + w / 2)}" y="${height - PAD.bottom + 16}" text-anchor="middle"
        >${bar.label}</text
      ><text class="value" x="${round(x + w / 2)}" y="${y - 4}" text-anchor="middle"
        >${formatCount(bar.value)}</text
      ></g
    >`;
  });
  return svgFrame(width, height, options.title, html`${axis(width, height, PAD, max)}${bars}`);
}

/** A series of {@link stackedBarChart}: one value per category. */
export interface Series {
  name: string;
  values: readonly number[];
}

/**
 * Stacked bars, one stack per category (a day), one colour per series (a pipeline, a kind of
 * change), with a legend. Labels are thinned out when there are many categories.
 */
export function stackedBarChart(options: {
  title: string;
  categories: readonly string[];
  series: readonly Series[];
  unit: string;
  width?: number;
  height?: number;
}): SafeHtml {
  const width = options.width ?? 720;
  const height = options.height ?? 240;
  const { categories, series } = options;
  const totals = categories.map((_, i) => series.reduce((sum, s) => sum + Math.max(0, s.values[i] ?? 0), 0));
  const max = niceMax(Math.max(0, ...totals));
  const slot = (width - PAD.left - PAD.right) / Math.max(1, categories.length);
  const plot = height - PAD.top - PAD.bottom;
  // Dates are written in full (YYYY-MM-DD), so at most 6 labels fit.
  const labelEvery = Math.max(1, Math.ceil(categories.length / 6));
  const stacks = categories.map((category, i) => {
    let base = height - PAD.bottom;
    const x = round(PAD.left + i * slot + slot * 0.1);
    const w = round(Math.max(1, slot * 0.8));
    const rects = series.map((s, k) => {
      const value = Math.max(0, s.values[i] ?? 0);
      if (value === 0) return html``;
      const h = (value / max) * plot;
      base -= h;
      return html`<rect
        class="bar ${seriesClass(k)}"
        x="${x}"
        y="${round(base)}"
        width="${w}"
        height="${round(h)}"
        ><title>${category} · ${s.name}: ${formatCount(value)} ${options.unit}</title></rect
      >`;
    });
    const label =
      i % labelEvery === 0
        ? html`<text
            class="label"
            x="${round(x + w / 2)}"
            y="${height - PAD.bottom + 16}"
            text-anchor="middle"
            >${category}</text
          >`
        : html``;
    return html`<g>${rects}${label}</g>`;
  });
  const legend = series.map(
    (s, k) => html`<span class="legend-item"><span class="swatch ${seriesClass(k)}"></span>${s.name}</span>`,
  );
  return html`<figure class="chart-box">
    ${svgFrame(width, height, options.title, html`${axis(width, height, PAD, max)}${stacks}`)}
    <figcaption class="legend">${legend}</figcaption>
  </figure>`;
}

/** One run on the {@link timeline}. */
export interface TimelineItem {
  row: string;
  startMs: number;
  /** Null while running: drawn up to the chart's end. */
  endMs: number | null;
  /** Outcome class: `ok`, `warn`, `bad` or `other`. */
  className: string;
  title: string;
  href: string;
}

/**
 * A timeline: one row per pipeline, one bar per run from its start to its end (at least a few
 * pixels wide, so short runs stay visible), coloured by outcome, linking to the run.
 */
export function timeline(options: {
  title: string;
  rows: readonly string[];
  items: readonly TimelineItem[];
  fromMs: number;
  toMs: number;
  width?: number;
}): SafeHtml {
  const width = options.width ?? 720;
  const rowHeight = 22;
  const pad = { top: 8, right: 12, bottom: 28, left: 110 };
  const height = pad.top + pad.bottom + rowHeight * Math.max(1, options.rows.length);
  const span = Math.max(1, options.toMs - options.fromMs);
  const xOf = (ms: number): number =>
    round(
      pad.left +
        ((Math.min(Math.max(ms, options.fromMs), options.toMs) - options.fromMs) / span) *
          (width - pad.left - pad.right),
    );
  const rowLabels = options.rows.map(
    (row, i) =>
      html`<text class="tick" x="${pad.left - 8}" y="${pad.top + i * rowHeight + 15}" text-anchor="end"
          >${row}</text
        ><line
          class="grid"
          x1="${pad.left}"
          x2="${width - pad.right}"
          y1="${pad.top + (i + 1) * rowHeight}"
          y2="${pad.top + (i + 1) * rowHeight}"
        ></line>`,
  );
  const marks = options.items.map((item) => {
    const i = options.rows.indexOf(item.row);
    const x = xOf(item.startMs);
    const w = Math.max(3, xOf(item.endMs ?? options.toMs) - x);
    return html`<a href="${item.href}"
      ><rect
        class="bar ${item.className}"
        x="${x}"
        y="${pad.top + i * rowHeight + 4}"
        width="${round(w)}"
        height="${rowHeight - 8}"
        ><title>${item.title}</title></rect
      ></a
    >`;
  });
  const days: SafeHtml[] = [];
  const DAY = 86_400_000;
  const step = Math.max(1, Math.ceil(span / DAY / 6)) * DAY;
  for (let t = Math.ceil(options.fromMs / DAY) * DAY; t <= options.toMs; t += step) {
    days.push(
      html`<text class="label" x="${xOf(t)}" y="${height - 8}" text-anchor="middle"
        >${new Date(t).toISOString().slice(0, 10)}</text
      >`,
    );
  }
  return svgFrame(width, height, options.title, html`${rowLabels}${marks}${days}`);
}
