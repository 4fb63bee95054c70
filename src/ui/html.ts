/*
 * HTML built so that escaping is the default: every value put into the `html` template is
 * escaped unless it is already {@link SafeHtml} (the output of another `html` template). Mirror
 * values (a domain name, a company name, a licence number) can hold anything the service sent,
 * `<script>` included, and must always render as text.
 */

/** A fragment of HTML that is safe to insert as is: built by {@link html} or {@link raw}. */
export class SafeHtml {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for an HTML element body or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}

/** A value the template accepts: text (escaped), numbers, fragments, lists of them, or nothing. */
export type HtmlValue =
  SafeHtml | string | number | bigint | boolean | null | undefined | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return (value as readonly HtmlValue[]).map(render).join('');
  return escapeHtml(String(value));
}

/**
 * Tagged template: the literal parts are kept, every interpolated value is escaped (arrays are
 * joined, `null`, `undefined` and `false` render nothing).
 *
 * @example html`<td>${row.company_name}</td>` // `<td>&lt;img src=x&gt;</td>` for `<img src=x>`
 */
export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): SafeHtml {
  let out = strings[0] as string;
  for (let i = 0; i < values.length; i++) out += render(values[i] as HtmlValue) + (strings[i + 1] as string);
  return new SafeHtml(out);
}

/** Marks trusted markup (a constant written in this module's sources) as safe. Never for data. */
export function raw(markup: string): SafeHtml {
  return new SafeHtml(markup);
}

/** A query string from parameters, leaving out empty ones (values are URL-encoded). */
export function queryString(params: Record<string, string | number | null | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== null && value !== undefined && value !== '') search.set(key, String(value));
  }
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}
