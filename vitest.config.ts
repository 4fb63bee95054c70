import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['dist/**', 'node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Most tests wait on HTTP to the simulator, on child processes and on worker threads rather
    // than on their own CPU: one test file per core (vitest's default is one fewer, a single
    // worker on a 2-core machine, which left a core idle for most of the run).
    maxWorkers: Math.max(2, availableParallelism()),
    // The worker threads the product starts (the mirror writer) run their .ts sources:
    // they inherit this from the test process (test/support/register-ts.ts says how).
    execArgv: ['--import', fileURLToPath(new URL('./test/support/register-ts.ts', import.meta.url))],
    // Suite-wide API key scan of every child process's output and every temp dir: children record
    // their output themselves (test/resilience/security/child-output.ts says how).
    globalSetup: ['test/resilience/security/global-setup.ts'],
  },
});
