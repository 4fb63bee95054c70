import { ApiError } from './errors.js';
import { readProfileText } from './resources/domains.js';

/**
 * The check the sync's mirror writer thread runs on each profile text before writing it: the
 * sync fetches profiles as text (`getDomainText`) and hands them on unparsed, so each is parsed
 * once, on that thread, instead of once on each thread (src/mirror/profile-writer.ts
 * `textCheck`). The mirror never imports the API client, so the thread loads this module by
 * its URL, {@link PROFILE_TEXT_CHECK_MODULE}, which pipelines/sync.ts hands to the writer.
 */

/** This module's URL, for the writer thread to load it (`.ts` when the tests run the sources). */
export const PROFILE_TEXT_CHECK_MODULE = import.meta.url;

/** What {@link checkProfileText} gives: the profile, or why the text was refused. */
export type ProfileTextCheckResult =
  { profile: object } | { failure: { code: string; message: string; retryable: boolean } };

/**
 * The profile in the text of a `GET /domains/:domain` body for `domain`, checked as `getDomain`
 * checks it ({@link readProfileText}); or, instead of throwing, the `ProtocolError`'s code and
 * message (naming the endpoint and field) and whether it is retryable: a text that is not JSON
 * is a transport fault that fetching again may cure, a schema mismatch is not.
 */
export function checkProfileText(text: string, domain: string | undefined): ProfileTextCheckResult {
  try {
    return { profile: readProfileText(text, domain) };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { failure: { code: error.code, message: error.message, retryable: error.retryable } };
  }
}
