// npm run bench:bodies [-- --reps 5 --db pglite|postgres]
//
// How long the worst request bodies one free test key can send hold the server's event loop (issue 33:
// no more than 50 ms each): an object or a list far past its bound, thousands of unknown fields, deep
// nesting, the largest valid translation, message and voice message, several of them at once. Each is
// sent --reps times to the server as `npm start` runs it; the figure is the longest event-loop delay the
// server process saw while answering (monitorEventLoopDelay, 5 ms resolution, bench/support/
// loopDelayPreload.mjs), beside the same figure for a small valid request in the same run.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { wavHeader } from '../src/calls/media/audio/pcm.js';
import { freePort } from '../test/support/freePort.js';
import { BACKEND_NAMES, createBenchDatabase, type Backend } from './support/databases.js';
import { num, table, withSpread } from './support/format.js';
import { formatGoals, goal, type Goal } from './support/goals.js';
import { machineLine } from './support/machine.js';
import { positiveInteger } from './support/options.js';
import { ROOT, serverEnv, startServerProcess, type ServerProcess } from './support/serverProcess.js';
import { readStartScripts, runPrestart } from './support/startCommand.js';
import { newAdminToken } from './support/seed.js';
import { spread } from './support/stats.js';

const { values: flags } = parseArgs({ options: { reps: { type: 'string' }, db: { type: 'string' } } });
const REPS = positiveInteger('reps', flags.reps, 5);
const BACKEND = (flags.db ?? 'pglite') as Backend;
if (!(BACKEND in BACKEND_NAMES)) throw new Error(`--db takes pglite or postgres, not ${flags.db}`);
const LOOP_GOAL_MS = 50;

interface Request {
  path: string;
  body: string | FormData;
  /** Sent this many times at once. */
  together?: number;
}

interface Case {
  name: string;
  request(fixtures: Fixtures): Request;
  baseline?: true;
}

interface Fixtures {
  sessionId: string;
}

const json = (value: unknown) => JSON.stringify(value);
const keys = (count: number, value: unknown) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, value]));
/** A WAV file of `seconds` of a 440 Hz tone, 16 kHz mono PCM16. */
function wav(seconds: number): Blob {
  const rate = 16_000;
  const pcm = Buffer.alloc(rate * seconds * 2);
  for (let i = 0; i < rate * seconds; i++) pcm.writeInt16LE(Math.round(8_000 * Math.sin((2 * Math.PI * 440 * i) / rate)), i * 2);
  return new Blob([Buffer.concat([wavHeader(pcm.length, rate), pcm])], { type: 'audio/wav' });
}
const voice = (audio: Blob, name = 'voice.wav') => {
  const form = new FormData();
  form.append('sender', 'customer');
  form.append('audio', audio, name);
  return form;
};
/** Chromium's recording of 125 s of Opus in WebM: every packet is decoded to measure it. */
const longOpus = new Blob([readFileSync(path.join(ROOT, 'test/fixtures/audio/long-125s.webm'))], { type: 'audio/webm' });
const finnish = 'Hei, tilaukseni on myöhässä ja haluaisin tietää, milloin se saapuu. ';

const CASES: Case[] = [
  { name: 'baseline: POST /v1/calls, a valid small body', baseline: true, request: () => ({ path: '/v1/calls', body: json({ agent_language: 'en' }) }) },
  { name: 'metadata of 60,000 keys, every value wrong', request: () => ({ path: '/v1/calls', body: json({ agent_language: 'en', metadata: keys(60_000, []) }) }) },
  { name: 'the same, 4 at once', request: () => ({ path: '/v1/calls', body: json({ agent_language: 'en', metadata: keys(60_000, []) }), together: 4 }) },
  { name: '60,000 unknown fields', request: () => ({ path: '/v1/calls', body: json({ agent_language: 'en', ...keys(60_000, []) }) }) },
  { name: 'translate: a list of 200,000 texts', request: () => ({ path: '/v1/translate', body: json({ target: 'fi', text: Array.from({ length: 200_000 }, () => 1) }) }) },
  { name: 'glossary of 60,000 terms', request: () => ({ path: '/v1/translate', body: json({ target: 'fi', text: 'hi', glossary: keys(60_000, 1) }) }) },
  { name: 'JSON nested 100,000 deep', request: () => ({ path: '/v1/calls', body: `{"agent_language":"en","metadata":{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}}` }) },
  { name: 'message text of 900,000 characters', request: (f) => ({ path: `/v1/sessions/${f.sessionId}/messages`, body: json({ sender: 'customer', text: 'x'.repeat(900_000) }) }) },
  {
    name: 'translate: 100 texts, 50,000 characters (valid)',
    request: () => ({ path: '/v1/translate', body: json({ target: 'en', text: Array.from({ length: 100 }, () => finnish.repeat(8).slice(0, 500)) }) }),
  },
  { name: 'translate: 5 texts of 10,000 characters (valid)', request: () => ({ path: '/v1/translate', body: json({ target: 'en', text: Array.from({ length: 5 }, () => finnish.repeat(150).slice(0, 10_000)) }) }) },
  { name: 'message of 4,000 characters (valid)', request: (f) => ({ path: `/v1/sessions/${f.sessionId}/messages`, body: json({ sender: 'customer', text: finnish.repeat(60).slice(0, 4_000) }) }) },
  { name: 'voice message, WAV of 2 minutes (valid)', request: (f) => ({ path: `/v1/sessions/${f.sessionId}/voice`, body: voice(wav(120)) }) },
  { name: 'voice message, WAV of 5 minutes (too long)', request: (f) => ({ path: `/v1/sessions/${f.sessionId}/voice`, body: voice(wav(300)) }) },
  { name: 'voice message, Opus of 125 s (too long)', request: (f) => ({ path: `/v1/sessions/${f.sessionId}/voice`, body: voice(longOpus, 'voice.webm') }) },
];

interface Sample {
  loopMaxMs: number;
  answerMs: number;
  statuses: number[];
}

async function measure(server: ServerProcess, key: string, request: Request): Promise<Sample> {
  const send = () =>
    fetch(server.url + request.path, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, ...(typeof request.body === 'string' ? { 'Content-Type': 'application/json' } : {}) },
      body: request.body,
    }).then(async (res) => {
      await res.arrayBuffer();
      return res.status;
    });
  await server.loopReset();
  const started = performance.now();
  const statuses = await Promise.all(Array.from({ length: request.together ?? 1 }, send));
  const answerMs = performance.now() - started;
  const loop = await server.loopRead();
  return { loopMaxMs: loop.maxMs, answerMs, statuses };
}

async function main() {
  const scripts = await readStartScripts(ROOT);
  console.log(`Request-body benchmark: ${REPS} repetitions of each case, ${BACKEND_NAMES[BACKEND]}, one test key`);
  console.log(`at start: ${machineLine()}`);
  await runPrestart(ROOT, scripts);
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'bench-bodies-'));
  const db = await createBenchDatabase(BACKEND, workDir);
  const adminToken = newAdminToken();
  const server = await startServerProcess({
    name: 'project',
    nodeArgs: scripts.start.nodeArgs,
    env: serverEnv({
      ...scripts.start.env,
      ...db.env,
      HOST: '127.0.0.1',
      ADMIN_TOKEN: adminToken,
      AUDIOSOCKET_PORT: String(await freePort()),
    }),
    readyPath: '/healthz',
    logFile: path.join(workDir, 'server.log'),
    measureLoop: true,
  });
  try {
    const admin = async (route: string, body: unknown) =>
      (await (await fetch(server.url + route, { method: 'POST', headers: { Authorization: `Bearer ${adminToken}`, 'Content-Type': 'application/json' }, body: json(body) })).json()) as Record<string, any>;
    const org = await admin('/admin/orgs', { name: 'Bench' });
    const { key } = await admin(`/admin/orgs/${org.org_id}/keys`, { mode: 'test' });
    const session = await (
      await fetch(server.url + '/v1/sessions', { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: json({ agent_language: 'en' }) })
    ).json();
    const fixtures: Fixtures = { sessionId: session.id };

    const rows: string[][] = [['case', 'status', 'loop max ms', 'answer ms']];
    const goals: Goal[] = [];
    let baselineLoop = Number.NaN;
    for (const testCase of CASES) {
      const request = testCase.request(fixtures);
      await measure(server, key, request); // warm-up: the first of a kind compiles code paths
      const samples: Sample[] = [];
      for (let rep = 0; rep < REPS; rep++) samples.push(await measure(server, key, request));
      const loop = spread(samples.map((s) => s.loopMaxMs));
      const statuses = [...new Set(samples.flatMap((s) => s.statuses))].join(',');
      rows.push([testCase.name, statuses, withSpread(loop, 1), withSpread(spread(samples.map((s) => s.answerMs)), 1)]);
      if (testCase.baseline) baselineLoop = loop.median;
      else goals.push(goal(`${testCase.name}: longest loop delay <= ${LOOP_GOAL_MS} ms`, loop.max, '<=', LOOP_GOAL_MS, (v) => `${num(v, 1)} ms`));
    }
    console.log(`\n${table(rows)}`);
    console.log(
      `\nloop max: the longest event-loop delay of the server process while it answered (median (min-max) of ${REPS});` +
        `\nthe baseline's ${num(baselineLoop, 1)} ms is what any request costs on this machine now. answer: client-side time to the whole answer.`,
    );
    console.log(`\nGoals (the worst repetition of each case):\n${formatGoals(goals)}`);
    console.log(`at end: ${machineLine()}`);
  } finally {
    await server.stop();
    await db.drop();
    await rm(workDir, { recursive: true, force: true });
  }
}

await main();

