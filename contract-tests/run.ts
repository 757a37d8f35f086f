// `npm run test:contract`: start the server on a free port with a fresh embedded database and a stand-in
// Twilio (dialling answers for real, nothing leaves the machine), run Dredd against the contract with
// contract-tests/hooks.cjs, stop the server, exit with Dredd's verdict.
//
// Environment (all optional):
//   CONTRACT_VERBOSE=1             show Dredd's parser warnings and per-transaction skip lines
//   CONTRACT_KEEP_TMP=1            keep the temporary directory (data, server log, converted contract)
//
// Neither the server's start nor Dredd has a time limit: a loaded machine makes them slower, not failed. A server
// that exits early fails the run at once; one that hangs is stopped by `npm test` as a stuck stage (test/run.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, realpathSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { buildServer } from '../test/support/serverBuild.js';
import { startTwilioStandIn, type TwilioStandIn } from '../test/support/standins/twilioStandIn.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SPEC_PATH = path.join(ROOT, 'openapi/openapi.yaml');
const HOOKS_PATH = path.join(ROOT, 'contract-tests/hooks.cjs');
const DREDD_CLI = path.join(ROOT, 'node_modules/.bin/dredd');

const env = process.env;
const VERBOSE = ['1', 'true', 'yes'].includes((env.CONTRACT_VERBOSE ?? '').toLowerCase());
const STOP_TIMEOUT_MS = 10_000;

const children = new Set<ChildProcess>();

function log(message: string) {
  process.stdout.write(`[contract] ${message}\n`);
}

function killAll(signal: NodeJS.Signals = 'SIGKILL') {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  }
}

process.on('exit', () => killAll('SIGKILL'));
// A closed pipe on our output (e.g. `| head`) must not skip the clean-up.
process.stdout.on('error', () => undefined);
process.stderr.on('error', () => undefined);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    log(`received ${signal}; stopping`);
    killAll('SIGKILL');
    process.exit(1);
  });
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

function sleep(ms: number) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

interface Server {
  child: ChildProcess;
  url: string;
  problems: string[];
}

/** What the hooks dial: a number the stand-in Twilio fails (502). */
const FAILING_NUMBER = '+15005550009';

async function startServer(build: string, tmp: string, adminToken: string, twilio: TwilioStandIn): Promise<Server> {
  const childEnv: NodeJS.ProcessEnv = { ...env };
  // A fresh embedded database, whatever the caller's environment points at.
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'PUBLIC_BASE_URL']) delete childEnv[name];
  Object.assign(childEnv, {
    // Port 0: the server binds a free port and names it (a port picked here could be taken before it binds).
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: path.join(tmp, 'data'),
    ADMIN_TOKEN: adminToken,
    AUDIOSOCKET_PORT: '0',
    VALIDATE_RESPONSES: 'true',
    // The hooks give each transaction its own client address (X-Forwarded-For), so the 401s and
    // 404s they provoke do not add up to one address's failed-attempt limit.
    TRUST_PROXY: '1',
    TWILIO_API_BASE_URL: twilio.url,
    LOG_LEVEL: env.CONTRACT_SERVER_LOG_LEVEL ?? 'info',
  });
  const logFile = path.join(tmp, 'server.log');
  const logStream = createWriteStream(logFile);
  const child = spawn(process.execPath, [path.join(build, 'src/main.js')], {
    cwd: ROOT,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const problems: string[] = [];
  let tail: string[] = [];
  // Resolves with the address in the server's "server listening" line; rejects if it exits before.
  const listening = new Promise<string>((resolve, reject) => {
    child.once('exit', (code, signal) => reject(new Error(`server exited early (${code ?? signal}):\n${tail.join('\n')}`)));
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => {
        logStream.write(line + '\n');
        tail = [...tail.slice(-39), line];
        if (line.includes('"msg":"server listening"')) resolve((JSON.parse(line) as { url: string }).url);
        // pino levels: 40 warn, 50 error, 60 fatal. Keep them for the end of the run.
        const level = /"level":(\d+)/.exec(line);
        if ((level && Number(level[1]) >= 40) || (!level && line.trim() && !line.startsWith('{'))) {
          problems.push(line.length > 600 ? line.slice(0, 600) + '...' : line);
        }
      });
    }
  });
  child.once('exit', () => logStream.end());

  log(`starting server (DATA_DIR ${childEnv.DATA_DIR})`);
  const url = await listening;
  log(`server listening on ${url}`);
  const health = await fetch(`${url}/healthz`);
  if (health.status !== 200) throw new Error(`server listens but answered /healthz with ${health.status}:\n${tail.join('\n')}`);
  return { child, url, problems };
}

async function stopServer(server: Server): Promise<void> {
  const { child } = server;
  if (child.exitCode !== null || child.signalCode !== null) {
    log(`server had already exited (${child.exitCode ?? child.signalCode})`);
    return;
  }
  child.kill('SIGTERM');
  const result = await Promise.race([exited(child), sleep(STOP_TIMEOUT_MS).then(() => undefined)]);
  if (!result) {
    log(`server did not stop within ${STOP_TIMEOUT_MS} ms of SIGTERM; killing it`);
    child.kill('SIGKILL');
    await exited(child);
  } else if (result.code !== 0) {
    log(`server exited with ${result.code ?? result.signal} after SIGTERM (expected 0)`);
  }
}

interface DreddSummary {
  passing: number;
  failing: number;
  errors: number;
  skipped: number;
  total: number;
}

async function runDredd(specFile: string, server: Server, adminToken: string, twilio: TwilioStandIn) {
  const args = [
    realpathSync(DREDD_CLI),
    specFile,
    server.url,
    `--hookfiles=${HOOKS_PATH}`,
    '--language=nodejs',
    '--no-color',
    '--loglevel=warning',
  ];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      ...env,
      CONTRACT_SERVER_URL: server.url,
      CONTRACT_ADMIN_TOKEN: adminToken,
      CONTRACT_SPEC_PATH: SPEC_PATH,
      CONTRACT_TWILIO: JSON.stringify({ accountSid: twilio.accountSid, authToken: twilio.authToken, failing: FAILING_NUMBER }),
      NO_COLOR: '1',
      FORCE_COLOR: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let summary: DreddSummary | undefined;
  let parserWarnings = 0;
  let skipLines = 0;
  for (const [stream, out] of [
    [child.stdout!, process.stdout],
    [child.stderr!, process.stderr],
  ] as const) {
    createInterface({ input: stream }).on('line', (raw) => {
      const line = raw.replace(/\u001b\[[0-9;]*m/g, '');
      const complete = /complete: (\d+) passing, (\d+) failing, (\d+) errors, (\d+) skipped, (\d+) total/.exec(line);
      if (complete) {
        const [passing, failing, errors, skipped, total] = complete.slice(1).map(Number);
        summary = { passing, failing, errors, skipped, total };
      }
      if (!VERBOSE) {
        if (line.includes('API description parser warning')) {
          parserWarnings++;
          return;
        }
        if (/^skip: /.test(line)) {
          skipLines++;
          return;
        }
        if (line.includes("property 'padLevels'") || line.includes('node --trace-warnings')) return;
      }
      out.write(line + '\n');
    });
  }
  const { code, signal } = await exited(child);
  if (parserWarnings) log(`${parserWarnings} Dredd parser warning(s) about unsupported keywords hidden (CONTRACT_VERBOSE=1 shows them)`);
  if (skipLines) log(`${skipLines} Dredd skip line(s) hidden; the hooks' list above gives the reasons`);
  return { code: code ?? 1, signal, summary };
}

async function main(): Promise<number> {
  const started = Date.now();
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'lia-contract-'));
  const adminToken = `adm_contract_${randomBytes(16).toString('hex')}`;
  let server: Server | undefined;
  let twilio: TwilioStandIn | undefined;
  let build: string | undefined;
  let exitCode = 1;
  try {
    twilio = await startTwilioStandIn();
    twilio.fail.add(FAILING_NUMBER);
    // Built ahead, as `npm start` runs it: the child loads JavaScript instead of having tsx compile the whole
    // server (about 3.5 s of CPU); not into dist/, which the embedded tests rebuild.
    build = await buildServer('contract-');
    server = await startServer(build, tmp, adminToken, twilio);
    log(`server ready after ${((Date.now() - started) / 1000).toFixed(1)} s; running Dredd`);
    const dreddStarted = Date.now();
    const result = await runDredd(SPEC_PATH, server, adminToken, twilio);
    log(`Dredd finished in ${((Date.now() - dreddStarted) / 1000).toFixed(1)} s with exit code ${result.code}${result.signal ? ` (${result.signal})` : ''}`);
    exitCode = result.code;
    if (!result.summary) {
      log('no Dredd summary line found: treating the run as failed');
      exitCode = exitCode || 1;
    } else {
      const { passing, failing, errors, skipped, total } = result.summary;
      log(`summary: ${passing} passing, ${failing} failing, ${errors} errors, ${skipped} skipped, ${total} total`);
      if (passing + failing + errors === 0) {
        log('no transaction was checked: treating the run as failed');
        exitCode = exitCode || 1;
      }
    }
  } catch (err) {
    log(`failed: ${err instanceof Error ? err.message : String(err)}`);
    exitCode = 1;
  } finally {
    if (server) {
      await stopServer(server);
      if (server.problems.length) {
        log(`server warnings/errors (${server.problems.length}):`);
        for (const line of server.problems.slice(0, 30)) process.stdout.write(`  ${line}\n`);
      }
    }
    killAll('SIGKILL');
    await twilio?.close();
    if (build) await rm(build, { recursive: true, force: true }).catch(() => undefined);
    if (['1', 'true', 'yes'].includes((env.CONTRACT_KEEP_TMP ?? '').toLowerCase())) {
      log(`kept ${tmp}`);
    } else {
      await rm(tmp, { recursive: true, force: true }).catch(() => undefined);
    }
  }
  log(`${exitCode === 0 ? 'passed' : 'FAILED'} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return exitCode;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    log(`crashed: ${err instanceof Error ? err.stack : String(err)}`);
    killAll('SIGKILL');
    process.exit(1);
  },
);
