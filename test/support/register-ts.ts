/**
 * Lets Node run this repository's TypeScript sources directly: `node --import
 * ./test/support/register-ts.ts src/cli/main.ts`. Node (>= 22.18) strips the types itself
 * (erasable syntax only, which `erasableSyntaxOnly` in tsconfig.json enforces), but it resolves an
 * import exactly as written, and the sources import their siblings as `./x.js`, the name they have
 * once compiled. This resolve hook maps such a relative `.js` import of a `.ts` file to the sibling
 * `.ts` file when the `.js` file does not exist.
 *
 * Registered synchronously with `module.registerHooks` (Node >= 22.15), so it applies to the
 * process or thread that imports this file; a worker thread inherits the `--import` from
 * `process.execArgv`, so the product's worker threads run their `.ts` sources the same way.
 * Used by the tests only: vitest starts its workers with it (vitest.config.ts `execArgv`), and the
 * child processes the tests start get it from `nodeArgsForSources()` (test/helpers/cli.ts).
 */
import { enableCompileCache, registerHooks } from 'node:module';
import { fileURLToPath } from 'node:url';

const RELATIVE_JS = /^\.{1,2}\/.*\.js$/;

// The tests start the same sources in well over a hundred processes and threads: Node's compile
// cache (keyed by each file's content, so never stale) keeps their compiled, type-stripped code,
// which about halved a CLI child's start on Node 24 and 26 here. Git-ignored, like all of .tmp/.
enableCompileCache(fileURLToPath(new URL('../../.tmp/node-compile-cache', import.meta.url)));

registerHooks({
  resolve(specifier, context, nextResolve) {
    try {
      return nextResolve(specifier, context);
    } catch (error) {
      const fromSource = context.parentURL?.startsWith('file:') && context.parentURL.endsWith('.ts');
      if (!fromSource || !RELATIVE_JS.test(specifier) || !isModuleNotFound(error)) throw error;
      return nextResolve(`${specifier.slice(0, -'.js'.length)}.ts`, context);
    }
  },
});

function isModuleNotFound(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'ERR_MODULE_NOT_FOUND';
}
