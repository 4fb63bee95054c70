/** Longest file name {@link sanitizeFilename} returns. */
export const MAX_FILENAME_LENGTH = 160;

/**
 * Extracts the file name from a `Content-Disposition` header (docs/service-api.md "GET
 * /exports/:id/download": `attachment`; the name itself is not described). Prefers the RFC 5987
 * `filename*=UTF-8''…` form over `filename=`. Returns the raw (unsanitised) name or `undefined`.
 */
export function filenameFromContentDisposition(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const extended = /filename\*\s*=\s*([^;]+)/i.exec(header);
  if (extended?.[1]) {
    const value = extended[1].trim().replace(/^"(.*)"$/, '$1');
    const match = /^([\w!#$%&+^`{}~-]*)'[^']*'(.*)$/.exec(value);
    const encoded = match ? match[2]! : value;
    try {
      const decoded = decodeURIComponent(encoded);
      if (decoded) return decoded;
    } catch {
      // A malformed percent-escape: fall back to the plain filename parameter.
    }
  }
  const quoted = /filename\s*=\s*"((?:[^"\\]|\\.)*)"/i.exec(header);
  if (quoted?.[1] !== undefined) return quoted[1].replace(/\\(.)/g, '$1');
  const token = /filename\s*=\s*([^;\s]+)/i.exec(header);
  return token?.[1];
}

/**
 * Makes a service-supplied file name safe to join to a local directory: keeps only the last
 * path component (both `/` and `\` separators), replaces anything outside `[A-Za-z0-9._-]`
 * with `_`, collapses `..`, strips leading dots (no hidden files, no `..`), and caps the length
 * at {@link MAX_FILENAME_LENGTH} keeping the extension. Returns `fallback` when nothing usable
 * remains.
 */
export function sanitizeFilename(name: string | undefined, fallback: string): string {
  if (!name) return fallback;
  const base = name.split(/[/\\]/).pop() ?? '';
  let safe = base
    .normalize('NFKD')
    // Accents become plain letters (é → e) rather than underscores.
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .replace(/\.{2,}/g, '.')
    .replace(/^[.\-_]+/, '')
    .replace(/[. ]+$/, '');
  if (safe.length > MAX_FILENAME_LENGTH) {
    const dot = safe.lastIndexOf('.');
    const ext = dot > 0 && safe.length - dot <= 10 ? safe.slice(dot) : '';
    safe = safe.slice(0, MAX_FILENAME_LENGTH - ext.length) + ext;
  }
  if (!safe || !/[A-Za-z0-9]/.test(safe)) return fallback;
  return safe;
}
