#!/usr/bin/env -S node --max-semi-space-size=32 --v8-pool-size=0
import { setMaxListeners } from 'node:events';
import { applyCliHeapSettings } from '../util/heap-growth.js';
import { EXIT } from './exit-codes.js';
import { failureSummary } from './failure-summary.js';
import { unsupportedNodeMessage } from './node-version.js';

// The only place that touches process.argv, signals and process.exit.
// On a Node older than the supported lines, stop at once and say why, before the commands and
// their libraries are loaded (they are imported below, after this check, for that reason).
const unsupported = unsupportedNodeMessage();
if (unsupported !== undefined) {
  process.stderr.write(`${unsupported}\n`);
  if (process.argv.includes('--json')) {
    const summary = failureSummary(null, EXIT.FAILED, { code: 'ERR_UNSUPPORTED_NODE', message: unsupported });
    await new Promise((written) => process.stdout.write(`${JSON.stringify(summary)}\n`, written));
  }
  process.exit(EXIT.FAILED);
}
const { runCli } = await import('./program.js');

// The shebang's node options are CLI_NODE_OPTIONS (src/util/heap-growth.ts), which says why; a
// unit test keeps the two equal.
// The heap growing factor and the young generation's size (src/util/heap-growth.ts); a factor or
// a size given to node itself (`node --heap-growing-percent=N …`) is the operator's and wins.
applyCliHeapSettings();
const controller = new AbortController();
// Every request in flight listens to this one signal; more than the default 10 is expected.
setMaxListeners(0, controller.signal);
let interrupts = 0;
const onSignal = (signal: NodeJS.Signals): void => {
  interrupts += 1;
  if (interrupts > 1) {
    process.stderr.write(`domain-sync: ${signal} again, exiting now\n`);
    process.exit(130);
  }
  process.stderr.write(`domain-sync: ${signal} received, stopping at a safe point (again to force)\n`);
  controller.abort(new Error(signal));
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

const code = await runCli(
  process.argv.slice(2),
  { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() },
  controller.signal,
);
// Let stdout drain before exiting, so a piped --json summary is never cut short.
process.stdout.write('', () => process.exit(code));
