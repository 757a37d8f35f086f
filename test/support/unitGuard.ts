// Setup of the unit project (vitest.config.ts): a unit test runs once, not on each backend, so it must not
// depend on one. Opening a database, creating a test database or starting the server process fails it
// with the way out: name the file *.db.test.ts (or *.embedded.test.ts for the embedded database on disk).
import { vi } from 'vitest';

export const NOT_A_UNIT_TEST =
  'unit tests (*.test.ts) run once and open no database: name this file *.db.test.ts to run it on PGlite and PostgreSQL, ' +
  'or *.embedded.test.ts if it tests the embedded database on disk';

const refused = (what: string) => new Error(`${what}: ${NOT_A_UNIT_TEST}`);

vi.mock('../../src/db/database.js', async (importOriginal) => ({
  ...(await importOriginal<object>()),
  openDatabase: async () => {
    throw refused('openDatabase');
  },
}));

vi.mock('./databases.js', async (importOriginal) => ({
  ...(await importOriginal<object>()),
  createTestDatabase: async () => {
    throw refused('createTestDatabase');
  },
}));

vi.mock('node:child_process', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:child_process')>();
  const startsServer = (args: unknown) => Array.isArray(args) && args.some((arg) => typeof arg === 'string' && /(^|\/)src\/main\.ts$/.test(arg));
  return {
    ...original,
    spawn(command: string, args?: unknown, ...rest: unknown[]) {
      if (startsServer(args)) throw refused('starting the server (src/main.ts)');
      return (original.spawn as (...a: unknown[]) => unknown)(command, args, ...rest);
    },
  };
});
