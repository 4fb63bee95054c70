/**
 * The module `./name` beside `from` (the caller's `import.meta.url`) to start as a worker thread,
 * with the caller's own extension: the compiled `name.js` when the caller is compiled (dist/), the
 * `name.ts` source when the caller is a source file run directly (the tests run the sources under
 * Node's type stripping, with test/support/register-ts.ts, which the thread inherits).
 */
export function siblingModule(from: string, name: string): URL {
  const extension = new URL(from).pathname.endsWith('.ts') ? '.ts' : '.js';
  return new URL(`./${name}${extension}`, from);
}
