export { startUiServer, isLoopbackHost } from './server.js';
export type { RunningUi, UiServerOptions } from './server.js';
export type { UiConfig } from './context.js';
