import { defineConfig } from 'vitest/config';

// Four kinds of test file, told apart by the name (docs/testing.md):
//   *.test.ts           unit: no database, no server; runs once. test/support/unitGuard.ts fails such a
//                       file when it opens a database or starts the server.
//   *.db.test.ts        database: runs on PGlite and again on PostgreSQL (TEST_DATABASE_URL).
//   *.embedded.test.ts  the embedded database on disk (PGlite in DATA_DIR, its lock, `npm start` on it),
//                       which ignores TEST_DATABASE_URL: runs once.
//   test/browser/*.db.test.ts  chromium against the server's pages: runs once, with PostgreSQL.
// `vitest run` runs all of them on PGlite; with TEST_DATABASE_URL, `vitest run --project db` is the PostgreSQL
// pass and `vitest run --project browser` the pages' (test/run.ts runs each as a stage, see `npm test`).

/** What a test still waits for when it fails, and no wait outliving its test (test/support/waiting.ts). */
const WAITS = 'test/support/waitsSetup.ts';
/** Each file's CPU time, when TEST_COST_FILE asks for it (`npm run test:cost`); first, so that it counts the file's own hooks. */
const COST = 'test/support/costSetup.ts';
const files = (suffix: string) => [`test/**/*${suffix}`, `src/**/*${suffix}`];

export default defineConfig({
  test: {
    // How long a stuck test or hook is waited for, never a measure of speed: a test that starts servers of
    // its own takes 15 s on a quiet 2-core machine and over 90 s with the machine at load 20, so no test sets
    // a shorter limit of its own (test/run.ts stops a stage only when nothing at all finishes for 10 minutes).
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // expect.poll waits 1 s by default: a page that answers in 1.2 s on a loaded machine is slow, not wrong.
    expect: { poll: { timeout: 60_000 } },
    // Forks, not threads: tests spawn processes and open PGlite data directories
    // guarded by a per-process lock.
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: files('.test.ts'),
          exclude: ['**/*.db.test.ts', '**/*.embedded.test.ts'],
          setupFiles: [COST, 'test/support/unitGuard.ts', WAITS],
          // As for the database tests: a worker runs file after file without loading the modules afresh
          // (the stage's CPU time 33 -> 18 s). The guard's mocks hold for every unit file alike, and a file
          // that fakes timers or spies puts them back.
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'db',
          include: files('.db.test.ts'),
          exclude: ['test/browser/**'],
          globalSetup: ['test/support/migratedDatabase.ts', 'test/support/serverBuild.ts'],
          setupFiles: [COST, WAITS],
          // A worker runs file after file without loading the server's modules and PGlite afresh for each
          // (half the CPU time of this project); every file closes the servers and sockets it opens.
          isolate: false,
        },
      },
      {
        // Chromium against the server's pages: they test the pages, which are the same on either
        // database, so they run once (test/run.ts: with PostgreSQL), not on both backends.
        extends: true,
        test: {
          name: 'browser',
          include: ['test/browser/**/*.db.test.ts'],
          globalSetup: ['test/support/migratedDatabase.ts'],
          setupFiles: [COST, WAITS],
          isolate: false,
        },
      },
      {
        // Processes of their own on an on-disk PGlite (initdb, a build, npm start): 113 s for one test at load 13
        // and past 300 s at load 56, so their limit is longer still; it only bounds a hang.
        extends: true,
        test: { name: 'embedded', include: files('.embedded.test.ts'), setupFiles: [COST, WAITS], testTimeout: 900_000, hookTimeout: 900_000 },
      },
    ],
  },
});
