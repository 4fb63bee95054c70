import { describe, expect, it } from 'vitest';
import { barChart, stackedBarChart, timeline } from '../../../src/ui/charts.js';
import { daysBetween } from '../../../src/ui/change-counts.js';
import { formatCount, formatDurationMs, formatTime } from '../../../src/ui/format.js';
import { escapeHtml, html, queryString, raw } from '../../../src/ui/html.js';
import {
  BadRequestError,
  changeCursorParam,
  dateParam,
  enumParam,
  idParam,
  intParam,
  parseParams,
  textParam,
} from '../../../src/ui/params.js';

describe('html', () => {
  it.each([
    ['<script>alert(1)</script>', '&lt;script&gt;alert(1)&lt;/script&gt;'],
    [`"><img src=x onerror='x'>`, '&quot;&gt;&lt;img src=x onerror=&#39;x&#39;&gt;'],
    ['a & b', 'a &amp; b'],
    ['&amp;', '&amp;amp;'],
    ['plain', 'plain'],
  ])('escapes %j', (input, output) => {
    expect(escapeHtml(input)).toBe(output);
    expect(html`<td title="${input}">${input}</td>`.value).toBe(`<td title="${output}">${output}</td>`);
  });

  it('keeps fragments, joins lists, drops null, undefined and false', () => {
    const inner = html`<b>${'<i>'}</b>`;
    expect(html`${inner}${[html`<br />`, 'x<']}${null}${undefined}${false}${0}`.value).toBe(
      '<b>&lt;i&gt;</b><br />x&lt;0',
    );
    expect(raw('<hr>').value).toBe('<hr>');
  });

  it('builds query strings without empty values', () => {
    expect(queryString({ q: 'a b&c', page: null, x: '', n: 2 })).toBe('?q=a+b%26c&n=2');
    expect(queryString({ q: null })).toBe('');
  });
});

describe('params', () => {
  const spec = {
    q: textParam(10),
    kind: enumParam(['a', 'b'] as const),
    id: idParam,
    days: intParam(1, 366),
    from: dateParam,
    before: changeCursorParam,
  };

  it('parses every kind of parameter, empty ones as null', () => {
    const parsed = parseParams(
      new URLSearchParams('q=%20hi%20&kind=b&id=42&days=7&from=2024-02-29&before=2026-01-02T03:04:05.678Z_9'),
      spec,
    );
    expect(parsed).toEqual({
      q: 'hi',
      kind: 'b',
      id: 42,
      days: 7,
      from: '2024-02-29',
      before: { at: '2026-01-02T03:04:05.678Z', id: 9 },
    });
    expect(parseParams(new URLSearchParams('q=&kind='), spec)).toMatchObject({
      q: null,
      kind: null,
      id: null,
    });
  });

  it.each([
    ['nope=1', /unknown parameter "nope"/],
    ['q=a&q=b', /"q" is given more than once/],
    ['q=01234567890', /"q" is longer than 10 characters/],
    ['q=a%0Ab', /"q" holds a control character/],
    ['kind=c', /"kind" must be one of a, b/],
    ['id=0', /"id" must be a positive whole number/],
    ['id=1e3', /"id" must be a positive whole number/],
    ['id=99999999999999999', /"id" must be a positive whole number/],
    ['days=367', /"days" must be a whole number from 1 to 366/],
    ['days=-1', /"days" must be a whole number from 1 to 366/],
    ['from=2023-02-29', /"from" must be a date written YYYY-MM-DD/],
    ['from=2024-1-01', /"from" must be a date written YYYY-MM-DD/],
    ['before=2026-01-02_9', /"before" is not a page position/],
    ['before=2026-01-02T03:04:05.678Z_0', /"before" is not a page position/],
  ])('refuses %s', (query, message) => {
    expect(() => parseParams(new URLSearchParams(query), spec)).toThrow(BadRequestError);
    expect(() => parseParams(new URLSearchParams(query), spec)).toThrow(message);
  });
});

describe('charts and formats', () => {
  it('draw one mark per value and escape labels', () => {
    const bars = barChart({
      title: 't<',
      bars: [
        { label: '<a>', value: 3 },
        { label: 'b', value: 0 },
      ],
    }).value;
    expect(bars.match(/<rect/g)).toHaveLength(2);
    expect(bars).toContain('&lt;a&gt;');
    expect(bars).not.toContain('<a>');
    const stacked = stackedBarChart({
      title: 't',
      categories: ['2026-01-01', '2026-01-02'],
      series: [
        { name: 's1', values: [1, 0] },
        { name: 's2', values: [2, 5] },
      ],
      unit: 'x',
    }).value;
    expect(stacked.match(/<rect/g)).toHaveLength(3);
    const line = timeline({
      title: 't',
      rows: ['sync'],
      fromMs: 0,
      toMs: 86_400_000 * 2,
      items: [{ row: 'sync', startMs: 1000, endMs: null, className: 'ok', title: 'x', href: '/runs/1' }],
    }).value;
    expect(line).toContain('href="/runs/1"');
  });

  it('write numbers, durations, times and days', () => {
    expect(formatCount(1234567)).toBe('1\u2009234\u2009567');
    expect(formatCount(null)).toBe('–');
    expect(formatDurationMs(999)).toBe('999 ms');
    expect(formatDurationMs(61_000)).toBe('1 m 1 s');
    expect(formatDurationMs(90_061_000)).toBe('1 d 1 h');
    expect(formatTime('2026-11-24T20:15:42.123Z').value).toBe(
      '<time datetime="2026-11-24T20:15:42.123Z">2026-11-24 20:15:42 UTC</time>',
    );
    expect(daysBetween('2024-02-28', '2024-03-01')).toEqual(['2024-02-28', '2024-02-29', '2024-03-01']);
  });
});
