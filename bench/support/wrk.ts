// wrk (https://github.com/wg/wrk) as the load generator: one Lua script per run says what request to
// send (method, headers, body, a unique Idempotency-Key per request and paths taken in turn when asked) and prints its summary
// as one JSON line from done(), so nothing depends on wrk's human-readable text.
import { spawn } from 'node:child_process';
import { access, constants } from 'node:fs/promises';

export const WRK_PATH = process.env.WRK_PATH || '/usr/bin/wrk';
export const WRK_MISSING =
  `wrk was not found at ${WRK_PATH}. Install it (Debian/Ubuntu: apt-get install -y wrk; macOS: brew install wrk) ` +
  'or set WRK_PATH to the wrk binary.';

export interface WrkRequest {
  method: 'GET' | 'POST';
  /** Path and query, e.g. /v1/sessions/ses_x/messages?limit=20. */
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Send a new Idempotency-Key with every request, starting with this prefix (unique per run). */
  idempotencyKeyPrefix?: string;
  /** Send each request to the next of these paths instead of `path` (round robin, the threads offset). */
  spreadPaths?: string[];
  /** Each connection waits this long after an answer before its next request (wrk's delay()). */
  pauseMs?: number;
}

export interface WrkResult {
  requests: number;
  seconds: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Socket errors (connect, read, write, timeout) and answers with a status of 400 or more. */
  errors: { connect: number; read: number; write: number; timeout: number; status: number };
}

const MARKER = 'BENCH_WRK_JSON ';

/** A Lua string literal holding the text exactly (any byte, quotes, newlines). */
export function luaString(text: string): string {
  let out = '"';
  for (const byte of Buffer.from(text, 'utf8')) {
    if (byte === 0x22 || byte === 0x5c) out += `\\${String.fromCharCode(byte)}`;
    else if (byte >= 0x20 && byte < 0x7f) out += String.fromCharCode(byte);
    else out += `\\${byte.toString().padStart(3, '0')}`;
  }
  return `${out}"`;
}

export function wrkScript(request: WrkRequest): string {
  const lines = [`wrk.method = ${luaString(request.method)}`, `wrk.path = ${luaString(request.path)}`];
  for (const [name, value] of Object.entries(request.headers)) lines.push(`wrk.headers[${luaString(name)}] = ${luaString(value)}`);
  if (request.body !== undefined) lines.push(`wrk.body = ${luaString(request.body)}`);
  const keyed = request.idempotencyKeyPrefix !== undefined;
  const spread = request.spreadPaths?.length ? request.spreadPaths : undefined;
  if (keyed || spread) {
    lines.push(
      // setup() runs in wrk's main Lua state once per thread: it numbers the threads so no two share a key
      // (or start on the same path).
      'local threads = 0',
      'function setup(thread) threads = threads + 1; thread:set("thread_number", threads) end',
      'local sent = 0',
    );
    if (spread) lines.push(`local paths = { ${spread.map(luaString).join(', ')} }`);
    lines.push('function request()', '  sent = sent + 1');
    if (keyed) lines.push(`  wrk.headers["Idempotency-Key"] = ${luaString(request.idempotencyKeyPrefix!)} .. thread_number .. "-" .. sent`);
    lines.push(spread ? '  return wrk.format(nil, paths[(thread_number * 7 + sent) % #paths + 1])' : '  return wrk.format()', 'end');
  }
  if (request.pauseMs !== undefined) lines.push(`function delay() return ${request.pauseMs} end`);
  lines.push(
    'function done(summary, latency, requests)',
    '  local e = summary.errors',
    `  io.write(string.format(${luaString(MARKER)} .. '{"requests":%d,"duration_us":%d,"p50_us":%.1f,"p99_us":%.1f,"max_us":%.1f,' ..`,
    `    '"connect":%d,"read":%d,"write":%d,"timeout":%d,"status":%d}\\n',`,
    '    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.max,',
    '    e.connect, e.read, e.write, e.timeout, e.status))',
    'end',
  );
  return lines.join('\n') + '\n';
}

/** The summary line the script's done() prints; an error naming the output when it is missing. */
export function parseWrkOutput(stdout: string): WrkResult {
  const line = stdout.split('\n').find((l) => l.startsWith(MARKER));
  if (!line) throw new Error(`wrk printed no summary; its output was:\n${stdout.trim()}`);
  const raw = JSON.parse(line.slice(MARKER.length)) as Record<string, number>;
  const seconds = raw.duration_us! / 1e6;
  return {
    requests: raw.requests!,
    seconds,
    rps: raw.requests! / seconds,
    p50Ms: raw.p50_us! / 1000,
    p99Ms: raw.p99_us! / 1000,
    maxMs: raw.max_us! / 1000,
    errors: { connect: raw.connect!, read: raw.read!, write: raw.write!, timeout: raw.timeout!, status: raw.status! },
  };
}

export const errorCount = (r: WrkResult) => Object.values(r.errors).reduce((a, b) => a + b, 0);

export async function wrkAvailable(): Promise<boolean> {
  return access(WRK_PATH, constants.X_OK).then(
    () => true,
    () => false,
  );
}

export interface WrkLoad {
  baseUrl: string;
  scriptFile: string;
  connections: number;
  threads: number;
  seconds: number;
}

export function runWrk(load: WrkLoad): Promise<WrkResult> {
  const args = [`-t${load.threads}`, `-c${load.connections}`, `-d${load.seconds}s`, '--timeout', '10s', '-s', load.scriptFile, load.baseUrl];
  return new Promise((resolve, reject) => {
    const wrk = spawn(WRK_PATH, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    wrk.stdout.on('data', (chunk) => (out += chunk));
    wrk.stderr.on('data', (chunk) => (out += chunk));
    wrk.on('error', reject);
    wrk.on('close', (code) => {
      if (code !== 0) reject(new Error(`wrk exited with ${code}:\n${out.trim()}`));
      else {
        try {
          resolve(parseWrkOutput(out));
        } catch (err) {
          reject(err);
        }
      }
    });
  });
}
