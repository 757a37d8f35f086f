import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Forks, not threads: tests spawn processes and open PGlite data directories
    // guarded by a per-process lock.
    pool: 'forks',
  },
});
