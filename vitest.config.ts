import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['dist/**', 'node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Suite-wide API key scan of every CLI output and temp dir (issue 8, item 4).
    globalSetup: ['test/resilience/security/global-setup.ts'],
  },
});
