// Public entry point: these re-export lists repeat the names client.ts and domain-service-api.ts
// import; that is what a barrel is, not duplicated logic.
export { createClient, DomainServiceClient } from './client.js';
export { CLIENT_DEFAULTS, CLIENT_VERSION, DEFAULT_MAX_BODY_BYTES } from './options.js';
export type { AuthHeader, ClientOptions, ResolvedClientOptions } from './options.js';
export type { DomainServiceApi, CompaniesApi } from './domain-service-api.js';
export {
  ApiError,
  AuthError,
  BadRequestError,
  ClientConfigError,
  errorFromResponse,
  ForeignOriginError,
  InvalidArgumentError,
  MAX_ERROR_BODY_CHARS,
  NetworkError,
  NotFoundError,
  OutcomeUnknownError,
  parseRetryAfterMs,
  PollTimeoutError,
  ProtocolError,
  QuotaExceededError,
  RateLimitedError,
  ServerError,
} from './errors.js';
export type { ApiErrorDetails, NetworkFailure, ProtocolFailure, QuotaDetails } from './errors.js';
export { CANONICAL_FILTERS, MAX_PER_PAGE, toWireFilters } from './filters.js';
export type { CanonicalFilterName, DomainFilters } from './filters.js';
export { filenameFromContentDisposition, sanitizeFilename } from './filename.js';
export { iterateDomainPages, iterateDomains } from './paginate.js';
export type { DomainPage, FetchDomainPage, IterateDomainsOptions } from './paginate.js';
export { pollUntilSettled, nextPollDelay, DEFAULT_POLL_ELAPSED_FRACTION } from './poll.js';
export type { PollOptions, PollTarget } from './poll.js';
export { classifyCreditFailure, decideRetry, surelyNotProcessed } from './retry.js';
export type { RequestSafety, RetryDecision, RetryPolicy } from './retry.js';
export { BASE_PATH_SUFFIX, parseBaseUrl, resolveServiceUrl } from './urls.js';
export type { ParsedBaseUrl, ResolvedUrl } from './urls.js';
export { isRunSettled } from './resources/enrichments.js';
// Same-shape export lists (errors.js above, resources below): a barrel's name lists, nothing to share.
export type {
  EnrichmentCached,
  EnrichmentStarted,
  StartEnrichmentParams,
  StartEnrichmentResult,
} from './resources/enrichments.js';
export { FAILED_EXPORT_STATUSES, isExportSettled } from './resources/exports.js';
export type { CreateExportParams, ExportCreated, ExportDownload, ExportFormat } from './resources/exports.js';
export type { GetDomainOptions, RequestOptions } from './resources/domains.js';
export { readProfileText } from './resources/domains.js';
export type { CompanyParams } from './resources/companies.js';
export {
  JURISDICTIONS,
  PAYMENT_CATEGORIES,
  PROFILE_SECTIONS,
  RUN_STATUSES,
  formatFieldPath,
  parseWire,
} from './wire.js';
// Repeats the wire type names client.ts and domain-service-api.ts import: the public re-export of them.
export type {
  Account,
  CompanyResponse,
  DomainProfile,
  DomainSearchPage,
  DomainSummary,
  EnrichmentRun,
  ExportInfo,
  Known,
  Licence,
  PaymentMethod,
  ProfileSection,
} from './wire.js';
