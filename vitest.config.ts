import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['dist/**', 'node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The worker threads the product starts (mirror writer, checkpointer) run their .ts sources:
    // they inherit this from the test process (test/support/register-ts.ts says how).
    execArgv: ['--import', fileURLToPath(new URL('./test/support/register-ts.ts', import.meta.url))],
    // Suite-wide API key scan of every child process's output and every temp dir: children record
    // their output themselves (test/resilience/security/child-output.ts says how).
    globalSetup: ['test/resilience/security/global-setup.ts'],
  },
});
