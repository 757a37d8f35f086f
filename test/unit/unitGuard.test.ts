// The split of vitest.config.ts holds: a unit test (run once) cannot open a database or start the server.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { createTestDatabase } from '../support/databases.js';
import { startTestServer } from '../support/testServer.js';
import { NOT_A_UNIT_TEST } from '../support/unitGuard.js';

describe('a unit test', () => {
  it('cannot open a database, create a test database or start a test server', async () => {
    await expect(openDatabase({ dataDir: '/nonexistent', memory: true })).rejects.toThrow(NOT_A_UNIT_TEST);
    await expect(createTestDatabase({ migrated: true })).rejects.toThrow(NOT_A_UNIT_TEST);
    await expect(startTestServer()).rejects.toThrow(NOT_A_UNIT_TEST);
  });

  it('cannot start the server process', () => {
    expect(() => spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'])).toThrow(NOT_A_UNIT_TEST);
  });
});
