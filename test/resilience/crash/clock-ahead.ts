/**
 * A `node --import` module (as a data: URL) that moves the child's wall clock `offsetMs` ahead:
 * `Date.now()` and `new Date()` only. It stands for "the next run happens later", which the
 * product's own waits are defined on (an unresolved enrichment intent is re-checked after 10
 * minutes, docs/enrich.md); nothing else in the child changes.
 */
export function clockAheadImport(offsetMs: number): string {
  // A Proxy rather than a subclass, so that `value instanceof Date` still holds for dates made
  // by native code (fs.Stats, better-sqlite3).
  const source = `
const offset = ${Math.trunc(offsetMs)};
const RealDate = Date;
const realNow = RealDate.now.bind(RealDate);
RealDate.now = () => realNow() + offset;
globalThis.Date = new Proxy(RealDate, {
  construct(target, args, newTarget) {
    return Reflect.construct(target, args.length === 0 ? [RealDate.now()] : args, newTarget);
  },
});
`;
  return `data:text/javascript,${encodeURIComponent(source)}`;
}
