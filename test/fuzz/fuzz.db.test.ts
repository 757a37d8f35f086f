// A short seeded pass of `npm run fuzz` (fuzz/): a real server process (the run's build) on a fresh, migrated
// database of the suite's backend, every operation of the contract bent in hostile ways, then hostile
// connections. Any 5xx the contract does not document, any request left unanswered or a server that does
// not stay up fails it.
import { describe, expect, it } from 'vitest';
import { formatReport, passed, runFuzz } from '../../fuzz/fuzzer.js';
import { builtServer, migratedChildDatabase } from '../support/childServer.js';
import { backendName } from '../support/databases.js';

// FUZZ_CONNECTIONS=0 leaves the hostile connections out, for a branch that does not yet survive them.
const CONNECTIONS = Number(process.env.FUZZ_CONNECTIONS ?? 80);

describe(`fuzz (${backendName})`, () => {
  // The time limit guards against a hang, not a measure: the server's start alone may take minutes on a loaded machine.
  it('finds no 5xx, no unanswered request and no crash in a seeded pass', async () => {
    const database = await migratedChildDatabase('fuzz-data-');
    const report = await runFuzz({
      seed: 20261123,
      requests: 400,
      connections: CONNECTIONS,
      validateResponses: true,
      prepared: { ...builtServer(), dataDir: database.dataDir, databaseUrl: database.databaseUrl },
    }).finally(() => database.drop());
    const summary = formatReport(report);
    expect(report.requestsSent, summary).toBe(400);
    expect(report.connectionsSent, summary).toBe(CONNECTIONS);
    // Every operation of the contract was reached with its credentials at least once.
    expect(report.statusClasses['2xx'], summary).toBeGreaterThan(50);
    expect(passed(report), summary).toBe(true);
  }, 480_000);
});
