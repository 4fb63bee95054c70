/**
 * The oldest Node.js the CLI runs on: package.json's `engines.node` is `>=` this (a unit test
 * keeps the two equal). undici 8, the HTTP client, needs it.
 */
export const MINIMUM_NODE_VERSION = '22.19.0';

/** `major.minor.patch` as numbers; a part that is not a number reads as 0. */
function parts(version: string): [number, number, number] {
  const [major, minor, patch] = version
    .replace(/^v/, '')
    .split('.')
    .map((part) => Number.parseInt(part, 10));
  return [major || 0, minor || 0, patch || 0];
}

/**
 * Why the CLI cannot run on Node.js `version` at `execPath` (by default this process's), or
 * undefined when it can. The message names the node that ran, since a cron job or a service often
 * finds another one on its PATH than the operator's shell does. On an older Node the commands
 * would fail while loading their libraries (undici 8 on Node 20: "Cannot read properties of
 * undefined (reading 'bind')"), as an internal error that names neither Node nor the version
 * needed; `src/cli/main.ts` checks first and says this instead.
 */
export function unsupportedNodeMessage(
  version: string = process.versions.node,
  execPath: string = process.execPath,
): string | undefined {
  const have = parts(version);
  const need = parts(MINIMUM_NODE_VERSION);
  for (let i = 0; i < 3; i += 1) {
    if (have[i]! > need[i]!) return undefined;
    if (have[i]! < need[i]!) {
      return (
        `domain-sync needs Node.js ${MINIMUM_NODE_VERSION} or newer (the maintained lines 22, 24 and 26); ` +
        `this is Node.js v${have.join('.')} (${execPath})`
      );
    }
  }
  return undefined;
}
