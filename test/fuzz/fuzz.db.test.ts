// A short seeded pass of `npm run fuzz` (fuzz/): the server in this process on a fresh, migrated database of the
// suite's backend, every operation of the contract bent in hostile ways, then hostile connections. Any 5xx the
// contract does not document, any request left unanswered, or a server that does not stay up fails it; a request
// that ended the process would end this test's worker, which fails the run. `npm run fuzz` runs the same against the
// server as a process of its own, and crash.db.test.ts kills one.
import { describe, expect, it } from 'vitest';
import { formatReport, passed, runFuzz } from '../../fuzz/fuzzer.js';
import { builtServer } from '../support/childServer.js';
import { backendName } from '../support/databases.js';
import { startTestServer, TEST_ADMIN_TOKEN } from '../support/testServer.js';

// FUZZ_CONNECTIONS=0 leaves the hostile connections out, for a branch that does not yet survive them.
const CONNECTIONS = Number(process.env.FUZZ_CONNECTIONS ?? 80);

describe(`fuzz (${backendName})`, () => {
  it('finds no 5xx, no unanswered request and no crash in a seeded pass', async () => {
    // As `npm run fuzz` configures its server: the fuzzer guesses wrong on purpose and fast, and with the usual
    // limits most of its requests would stop at a 429 (the limits have tests of their own).
    const t = await startTestServer({ FAILED_ATTEMPTS_PER_MINUTE: '1000000', RATE_LIMIT_PER_MINUTE: '1000000' });
    const report = await runFuzz({
      seed: 20261123,
      requests: 400,
      connections: CONNECTIONS,
      validateResponses: true,
      // What counts as no answer: far longer than `npm run fuzz`'s 20 s, which a voice message took at load 27
      // with two suites on the machine; a request the server never answers still fails within the test's limit.
      timeoutMs: 120_000,
      contract: builtServer().contract,
      server: {
        url: new URL(t.url),
        adminToken: TEST_ADMIN_TOKEN,
        backend: backendName,
        exit: () => undefined,
        stderrTail: () => '',
        stdoutTail: () => '',
        stop: async () => {
          await t.stop();
          return { code: 0, signal: null };
        },
      },
    });
    const summary = formatReport(report);
    expect(report.requestsSent, summary).toBe(400);
    expect(report.connectionsSent, summary).toBe(CONNECTIONS);
    // Every operation of the contract was reached with its credentials at least once.
    expect(report.statusClasses['2xx'], summary).toBeGreaterThan(50);
    expect(passed(report), summary).toBe(true);
  });
});
