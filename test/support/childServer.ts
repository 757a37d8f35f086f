// The real server (`src/main.ts`) in a child process, for tests that kill it as a crash would
// (SIGKILL: no shutdown, no word to anyone).
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { freePort } from './freePort.js';

const root = path.resolve(import.meta.dirname, '../..');

export interface ChildServer {
  process: ChildProcess;
  url: string;
  exited: Promise<number | null>;
  output(): string;
}

/** Starts the server with `env` added to this process's and waits until it answers /healthz. */
export async function startChildServer(env: Record<string, string>): Promise<ChildServer> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      exitCode = code;
      resolve(code);
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  await pollUntil(async () => {
    if (exitCode !== undefined) throw new Error(`the server exited (${exitCode}):\n${output}`);
    return (await fetch(`${url}/healthz`).catch(() => null))?.ok === true;
  }, 'the server answers /healthz');
  return { process: child, url, exited, output: () => output };
}

/** Checks `condition` every 50 ms until it holds; fails after `timeoutMs`. */
export async function pollUntil(condition: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
