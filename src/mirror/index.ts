export { openMirror, migrateMirror } from './database.js';
export type { Mirror, OpenMirrorOptions, MigrateMirrorResult } from './database.js';
export type * from './schema.js';
export type * from './inputs.js';
export { MirrorInputError } from './store/values.js';
export * from './store/domains.js';
