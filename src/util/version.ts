/**
 * The version of domain-sync: what `domain-sync --version` prints and the API client sends in its
 * User-Agent. It must equal package.json's `version` (test/integration/cli/cli.test.ts checks);
 * a constant rather than a read of package.json at run time, whose place relative to this file
 * differs between the sources and the build.
 */
export const DOMAIN_SYNC_VERSION = '0.1.0';
