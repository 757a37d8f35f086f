// The fuzzer: a fresh server, fixtures, then seeded hostile requests for every operation of the contract,
// then hostile connections; it reports every 5xx with its exact request and whether the server stayed up.
import http from 'node:http';
import { hostileConnections, type ConnectionOutcome } from './connections.js';
import { loadOperations } from './contract.js';
import { makeFixtures } from './fixtures.js';
import { Random } from './random.js';
import { RequestMaker, type FuzzRequest } from './requests.js';
import { send, type Outcome } from './send.js';
import { startFuzzServer, type FuzzServer, type ServerExit } from './server.js';

export interface FuzzOptions {
  seed: number;
  /** Requests built from the contract (the hostile connections come on top). */
  requests: number;
  /** A PostgreSQL server to make a fresh database on; without it, a fresh PGlite data directory. */
  postgresUrl?: string;
  /** Hostile connections after the requests (0: none). */
  connections: number;
  /** Check every answer against the contract, so an answer outside it shows as a 500. */
  validateResponses: boolean;
  /**
   * A server already running (the test suite's, in its own process): then `postgresUrl` and `validateResponses`
   * are its own business, and it is stopped at the end like one started here.
   */
  server?: FuzzServer;
  /** The contract file the requests are built from (default openapi/openapi.yaml; a build's openapi.json parses faster). */
  contract?: string;
  /** Requests in flight at once. */
  parallel?: number;
  timeoutMs?: number;
  progress?: (line: string) => void;
}

export interface Failure {
  request: FuzzRequest;
  outcome: Outcome;
}

export interface FuzzReport {
  seed: number;
  backend: 'pglite' | 'postgres';
  requestsSent: number;
  statusClasses: Record<string, number>;
  statuses: Record<string, number>;
  /** 5xx the contract documents for this configuration (no engine configured, Twilio failing). */
  documented5xx: Record<string, number>;
  /** Every other 5xx, requests that got no answer, and bodies the contract refuses that were accepted. */
  failures: Failure[];
  connectionsSent: number;
  connectionStatuses: Record<string, number>;
  connectionFailures: ConnectionOutcome[];
  serverStayedUp: boolean;
  /** How the server ended: on our SIGTERM at the end, or by itself (a crash). */
  exit: ServerExit | undefined;
  crashed: boolean;
  stderr: string;
  stdout: string;
}

/** A 5xx the contract documents: no engine configured, or Twilio failing. */
function documentedServerError(outcome: Outcome): string | undefined {
  if (outcome.kind !== 'answer') return undefined;
  if (outcome.status === 502 && /no \w+ engine is configured for live mode/.test(outcome.detail)) return '502 no engine configured';
  // The fuzzer's telephony connectors name made-up Twilio accounts: dialling answers the documented 502.
  if (outcome.status === 502 && /"Twilio (answered|could not be reached)/.test(outcome.detail)) return '502 Twilio failing';
  return undefined;
}

const classOf = (outcome: Outcome) => (outcome.kind === 'answer' ? `${String(outcome.status)[0]}xx` : 'no answer');
const count = (counts: Record<string, number>, key: string) => (counts[key] = (counts[key] ?? 0) + 1);

async function isAlive(base: URL): Promise<boolean> {
  for (let attempt = 0; attempt < 10; attempt++) {
    try {
      const res = await fetch(new URL('/healthz', base), { signal: AbortSignal.timeout(2_000) });
      if (res.status === 200) return true;
    } catch {
      // try again: the server may be busy
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return false;
}

export async function runFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const progress = options.progress ?? (() => undefined);
  const random = new Random(options.seed);
  const operations = loadOperations(options.contract);
  const server = options.server ?? (await startFuzzServer({ postgresUrl: options.postgresUrl, validateResponses: options.validateResponses }));
  const report: FuzzReport = {
    seed: options.seed,
    backend: server.backend,
    requestsSent: 0,
    statusClasses: {},
    statuses: {},
    documented5xx: {},
    failures: [],
    connectionsSent: 0,
    connectionStatuses: {},
    connectionFailures: [],
    serverStayedUp: false,
    exit: undefined,
    crashed: false,
    stderr: '',
    stdout: '',
  };
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.parallel ?? 8 });
  try {
    progress(`server up at ${server.url} (${server.backend}); making fixtures`);
    const maker = new RequestMaker(random, await makeFixtures(server.url, server.adminToken));

    // Every operation in turn, so even a short run touches them all; what is bent is the seed's choice.
    let index = 0;
    const worker = async () => {
      while (index < options.requests && !server.exit()) {
        const request = maker.make(operations[index % operations.length]);
        index++;
        const outcome = await send(server.url, request, agent, options.timeoutMs ?? 20_000);
        report.requestsSent++;
        count(report.statusClasses, classOf(outcome));
        if (outcome.kind === 'answer') count(report.statuses, String(outcome.status));
        const documented = documentedServerError(outcome);
        if (documented) count(report.documented5xx, documented);
        else if (outcome.kind === 'no answer' || outcome.status >= 500 || (request.mustRefuse && outcome.status < 400)) report.failures.push({ request, outcome });
        if (report.requestsSent % 250 === 0) progress(`${report.requestsSent} requests sent`);
      }
    };
    await Promise.all(Array.from({ length: options.parallel ?? 8 }, worker));

    if (options.connections > 0 && !server.exit()) {
      progress(`${options.connections} hostile connections`);
      const outcomes = await hostileConnections(server.url, maker.fixtures, random, options.connections);
      report.connectionsSent = outcomes.length;
      for (const outcome of outcomes) {
        count(report.connectionStatuses, outcome.status === undefined ? 'no status line' : String(outcome.status));
        if (outcome.status !== undefined && outcome.status >= 500) report.connectionFailures.push(outcome);
      }
    }
    report.serverStayedUp = !server.exit() && (await isAlive(server.url));
  } finally {
    agent.destroy();
    report.crashed = server.exit() !== undefined;
    report.exit = await server.stop();
    report.stderr = server.stderrTail();
    report.stdout = server.stdoutTail();
  }
  return report;
}

/**
 * Whether the run found nothing: no unexpected 5xx, every request answered, every body the contract
 * refuses by its shape refused, the server up throughout.
 */
export const passed = (report: FuzzReport) =>
  report.failures.length === 0 && report.connectionFailures.length === 0 && report.serverStayedUp && !report.crashed;

const clip = (text: string, length: number) => (text.length > length ? `${text.slice(0, length)}... (${text.length} characters)` : text);

function describeRequest(request: FuzzRequest): string {
  const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, clip(value, 120)]));
  const body = request.body === undefined ? '' : `\n      body: ${JSON.stringify(clip(request.body.toString('utf8'), 400))}`;
  return `${request.method} ${clip(request.path, 300)}  [${request.label}]\n      headers: ${JSON.stringify(headers)}${body}`;
}

export function formatReport(report: FuzzReport): string {
  const lines = [
    `fuzz: seed ${report.seed}, backend ${report.backend}`,
    `requests sent: ${report.requestsSent}`,
    `statuses by class: ${JSON.stringify(report.statusClasses)}`,
    `statuses: ${JSON.stringify(report.statuses)}`,
    `documented 5xx (allowed): ${JSON.stringify(report.documented5xx)}`,
  ];
  if (report.connectionsSent) {
    lines.push(`hostile connections: ${report.connectionsSent}, answers: ${JSON.stringify(report.connectionStatuses)}`);
  }
  lines.push(`unexpected 5xx, no answer, or a bent body accepted: ${report.failures.length}`);
  for (const { request, outcome } of report.failures) {
    const answer = outcome.kind === 'answer' ? `${outcome.status} ${clip(outcome.detail, 300)}` : `no answer: ${outcome.reason}`;
    lines.push(`  - ${answer}\n      ${describeRequest(request)}`);
  }
  for (const failure of report.connectionFailures) {
    lines.push(`  - connection answered ${failure.status} [${failure.label}]\n      sent: ${JSON.stringify(failure.sent)}`);
  }
  if (report.serverStayedUp && !report.crashed) {
    lines.push(`server: stayed up (stopped with ${JSON.stringify(report.exit)})`);
  } else {
    lines.push(`server: DID NOT STAY UP, exit ${JSON.stringify(report.exit)}`);
    lines.push(`stderr (last lines):\n${report.stderr || '(empty)'}`);
    lines.push(`stdout (last errors):\n${report.stdout || '(none)'}`);
  }
  lines.push(passed(report) ? 'result: PASS' : 'result: FAIL');
  return lines.join('\n');
}
