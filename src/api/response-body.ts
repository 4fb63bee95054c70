import type { Dispatcher } from 'undici';
import { headerValue } from './errors.js';

/** Thrown (as a rejection) by {@link readBodyText} for a body over its cap. */
export class BodyTooLarge extends Error {}

/**
 * Reads a body as UTF-8 text, up to `cap` bytes. Over the cap: throws {@link BodyTooLarge}, or
 * with `truncateOk` returns the first `cap` bytes (error bodies are only excerpted). A body with
 * a Content-Length within the cap goes through undici's fast `text()`; otherwise chunks are
 * counted as they arrive. Not an async function: the fast path hands back undici's promise as it is.
 */
export function readBodyText(
  body: Dispatcher.ResponseData['body'],
  cap: number,
  truncateOk: boolean,
  headers: Record<string, unknown>,
): Promise<string> {
  const lengthHeader = headerValue(headers, 'content-length');
  const declared = lengthHeader === undefined ? Number.NaN : Number(lengthHeader);
  if (Number.isFinite(declared) && declared <= cap) return body.text();
  if (!truncateOk && Number.isFinite(declared)) {
    body.destroy();
    return Promise.reject(new BodyTooLarge());
  }
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (): void => resolve(Buffer.concat(chunks).toString('utf8'));
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= cap) {
        chunks.push(chunk);
        return;
      }
      body.removeAllListeners('data');
      body.removeAllListeners('end');
      body.on('error', () => {});
      body.destroy();
      if (!truncateOk) {
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(chunk.subarray(0, chunk.length - (size - cap)));
      finish();
    });
    body.once('end', finish);
    body.once('error', reject);
  });
}
