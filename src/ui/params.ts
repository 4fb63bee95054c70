/*
 * Query parameters of the dashboard's pages, checked strictly: an unknown or repeated parameter,
 * or a value of the wrong form, is a 400 page naming the parameter (docs/ui.md "Addresses").
 */

/** A request the dashboard refuses with 400; the message names the parameter and is shown. */
export class BadRequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BadRequestError';
  }
}

/** Parses one parameter's text; throws {@link BadRequestError} for a bad value. */
export type ParamParser<T> = (value: string, name: string) => T;

type Parsed<S> = { [K in keyof S]: S[K] extends ParamParser<infer T> ? T | null : never };

/**
 * The parameters of `search` by `spec` (each absent or empty one is null). Refuses parameters not
 * in `spec` and parameters given twice.
 */
export function parseParams<S extends Record<string, ParamParser<unknown>>>(
  search: URLSearchParams,
  spec: S,
): Parsed<S> {
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(spec)) out[name] = null;
  const seen = new Set<string>();
  for (const [name, value] of search) {
    const parser = Object.hasOwn(spec, name) ? spec[name] : undefined;
    if (parser === undefined) {
      const known = Object.keys(spec);
      throw new BadRequestError(
        `unknown parameter "${name}"${known.length ? ` (this page takes ${known.join(', ')})` : ' (this page takes none)'}`,
      );
    }
    if (seen.has(name)) throw new BadRequestError(`parameter "${name}" is given more than once`);
    seen.add(name);
    if (value.trim() === '') continue;
    out[name] = parser(value.trim(), name);
  }
  return out as Parsed<S>;
}

// Control characters (C0, DEL, C1) are refused in every text parameter.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Free text up to `maxLength` characters. */
export function textParam(maxLength: number): ParamParser<string> {
  return (value, name) => {
    if (value.length > maxLength)
      throw new BadRequestError(`"${name}" is longer than ${maxLength} characters`);
    if (CONTROL.test(value)) throw new BadRequestError(`"${name}" holds a control character`);
    return value;
  };
}

/** One of `values`. */
export function enumParam<T extends string>(values: readonly T[]): ParamParser<T> {
  return (value, name) => {
    if (!(values as readonly string[]).includes(value))
      throw new BadRequestError(`"${name}" must be one of ${values.join(', ')}; got "${value.slice(0, 40)}"`);
    return value as T;
  };
}

/** A whole number from 1 to 2^53 − 1 (an id). */
export const idParam: ParamParser<number> = (value, name) => {
  if (!/^[1-9]\d{0,15}$/.test(value) || !Number.isSafeInteger(Number(value)))
    throw new BadRequestError(`"${name}" must be a positive whole number; got "${value.slice(0, 40)}"`);
  return Number(value);
};

/** A whole number from `min` to `max`. */
export function intParam(min: number, max: number): ParamParser<number> {
  return (value, name) => {
    const n = /^\d{1,9}$/.test(value) ? Number(value) : NaN;
    if (!(n >= min && n <= max))
      throw new BadRequestError(
        `"${name}" must be a whole number from ${min} to ${max}; got "${value.slice(0, 40)}"`,
      );
    return n;
  };
}

/** A calendar date `YYYY-MM-DD` (UTC). */
export const dateParam: ParamParser<string> = (value, name) => {
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(value) ? Date.parse(`${value}T00:00:00.000Z`) : NaN;
  if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== value)
    throw new BadRequestError(`"${name}" must be a date written YYYY-MM-DD; got "${value.slice(0, 40)}"`);
  return value;
};

/** A page cursor of the Changes page: `<timestamp>_<id>`, as the page's own "next" link writes it. */
export const changeCursorParam: ParamParser<{ at: string; id: number }> = (value, name) => {
  const match = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)_([1-9]\d{0,15})$/.exec(value);
  if (!match || Number.isNaN(Date.parse(match[1] as string)) || !Number.isSafeInteger(Number(match[2])))
    throw new BadRequestError(
      `"${name}" is not a page position this dashboard wrote; got "${value.slice(0, 60)}"`,
    );
  return { at: match[1] as string, id: Number(match[2]) };
};
