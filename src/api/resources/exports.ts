import type { Readable } from 'node:stream';
import { headerValue, InvalidArgumentError } from '../errors.js';
import { toWireFilters } from '../filters.js';
import type { DomainFilters } from '../filters.js';
import { filenameFromContentDisposition, sanitizeFilename } from '../filename.js';
import type { PollOptions } from '../poll.js';
import type { ApiTransport } from '../transport.js';
import { resourceUrl } from '../transport.js';
import type { ResolvedUrl } from '../urls.js';
import { pathSegment } from '../urls.js';
import { ExportCreatedResponseSchema, ExportInfoResponseSchema } from '../wire.js';
import type { ExportInfo } from '../wire.js';
import type { RequestOptions } from './domains.js';
import { pollResource } from './poll-resource.js';
import { getData, parsePaidWire, postCredit } from './requests.js';

/** Export file formats (docs/service-api.md "POST /exports"; `json` is line-delimited). */
export type ExportFormat = 'csv' | 'json';

/** Parameters of `createExport`. */
export interface CreateExportParams {
  /**
   * Filters by canonical name; sent as the keys of `filters` under their configured wire names.
   * @default {} (all domains)
   */
  filters?: DomainFilters | undefined;
  /**
   * File format, sent as `export_format`.
   * @default not sent (the service's default is `csv`)
   */
  format?: ExportFormat | undefined;
  /**
   * Sections to include, sent as `fields` (the spec's `fields[]`).
   * @default not sent (all)
   */
  fields?: readonly string[] | undefined;
}

/** Result of `createExport` (a 202). */
export interface ExportCreated {
  /** `export_id`: record it at once; it is how the export is resumed. */
  exportId: number;
  /** `poll_url` as sent. */
  pollUrl: string;
  /** The service's `message`, if any. */
  message: string | undefined;
  /** The whole validated `data` object. */
  raw: Record<string, unknown>;
}

/** A download in progress. */
export interface ExportDownload {
  /** The file body as a stream (not buffered); consume it or call `destroy()`. */
  body: Readable;
  /**
   * File name from `Content-Disposition`, sanitised (basename only, `[A-Za-z0-9._-]`, no `..`,
   * no leading dot); `export-<id>.<format>` or `export.bin` when the header has none.
   */
  filename: string;
  /** `Content-Length`, when sent. */
  contentLength: number | undefined;
  /** `Content-Type`, when sent. */
  contentType: string | undefined;
}

/**
 * `POST /exports` (credits vary with the result count, docs/service-api.md "POST /exports"). Filter
 * names are mapped to wire names. Credit-costing: retried only after a refusal or a connection
 * never made; an ambiguous failure is `OutcomeUnknownError`.
 */
export async function createExport(
  transport: ApiTransport,
  params: CreateExportParams = {},
  options: RequestOptions = {},
): Promise<ExportCreated> {
  const filters = Object.fromEntries(toWireFilters(params.filters ?? {}, (name) => transport.wireName(name)));
  const body: Record<string, unknown> = { filters };
  if (params.format !== undefined) {
    if (params.format !== 'csv' && params.format !== 'json') {
      throw new InvalidArgumentError(
        `export format must be csv or json, got ${JSON.stringify(params.format)}`,
      );
    }
    body.export_format = params.format;
  }
  if (params.fields !== undefined) body.fields = [...params.fields];
  const url = transport.url('/exports');
  const response = await postCredit(transport, url, body, options);
  const parsed = parsePaidWire(ExportCreatedResponseSchema, url, response);
  return {
    exportId: parsed.data.export_id,
    pollUrl: parsed.data.poll_url,
    message: parsed.message ?? undefined,
    raw: parsed.data,
  };
}

/** `GET /exports/:id` (0 credits), by id or `poll_url` (same-origin only). */
export async function getExport(
  transport: ApiTransport,
  idOrPollUrl: number | string,
  options: RequestOptions = {},
): Promise<ExportInfo> {
  const url = resourceUrl(transport, 'exports', idOrPollUrl);
  return getData(transport, url, ExportInfoResponseSchema, options);
}

/** Export statuses treated as failed; the service documents only `completed`, so these are guesses. */
export const FAILED_EXPORT_STATUSES: ReadonlySet<string> = new Set([
  'failed',
  'error',
  'errored',
  'expired',
  'cancelled',
  'canceled',
]);

/** Whether an export is final: `completed`, or a failed-like status. */
export function isExportSettled(info: Pick<ExportInfo, 'status'>): boolean {
  return info.status === 'completed' || FAILED_EXPORT_STATUSES.has(info.status);
}

/**
 * Polls an export until it is `completed` or failed-like and returns it (failed ones too). The
 * pending shape is not described (docs/service-api.md "Export"): any other status counts as in
 * progress until the deadline, then `PollTimeoutError`.
 */
export function waitForExport(
  transport: ApiTransport,
  idOrPollUrl: number | string,
  options: Required<Pick<PollOptions<ExportInfo>, 'pollIntervalMs' | 'maxPollIntervalMs' | 'deadlineMs'>> &
    PollOptions<ExportInfo>,
): Promise<ExportInfo> {
  return pollResource(
    transport,
    { collection: 'exports', subject: 'export', get: getExport, isSettled: isExportSettled },
    idOrPollUrl,
    options,
  );
}

/**
 * `GET /exports/:id/download` (0 credits): the file as a stream. Takes an export (its
 * `download_url`, else `/exports/<id>/download`), an id, or a `download_url`; a URL on another
 * origin throws `ForeignOriginError` without any request. A 404 is `NotFoundError`: the export
 * does not exist, is still pending, or has expired; the caller decides which from
 * `getExport`/`expires_at`. Retries happen only before the body starts.
 */
export async function downloadExport(
  transport: ApiTransport,
  exportOrUrl: ExportInfo | number | string,
  options: RequestOptions = {},
): Promise<ExportDownload> {
  let url: ResolvedUrl;
  let fallback = 'export.bin';
  if (typeof exportOrUrl === 'object' && exportOrUrl !== null) {
    fallback = `export-${exportOrUrl.id}.${exportOrUrl.format === 'json' ? 'jsonl' : exportOrUrl.format === 'csv' ? 'csv' : 'bin'}`;
    url = exportOrUrl.download_url
      ? transport.resolveUrl(exportOrUrl.download_url)
      : transport.url(`/exports/${pathSegment(exportOrUrl.id)}/download`);
  } else {
    if (typeof exportOrUrl === 'number' || /^\d+$/.test(exportOrUrl)) fallback = `export-${exportOrUrl}.bin`;
    url = resourceUrl(transport, 'exports', exportOrUrl, '/download');
  }
  const response = await transport.requestStream({ url, safety: 'safe', signal: options.signal });
  const length = Number(headerValue(response.headers, 'content-length'));
  return {
    body: response.body,
    filename: sanitizeFilename(
      filenameFromContentDisposition(headerValue(response.headers, 'content-disposition')),
      fallback,
    ),
    contentLength:
      Number.isFinite(length) && length >= 0 && headerValue(response.headers, 'content-length') !== undefined
        ? length
        : undefined,
    contentType: headerValue(response.headers, 'content-type'),
  };
}
