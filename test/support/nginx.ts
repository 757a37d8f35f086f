// nginx in front of server instances, configured from deploy/nginx.conf itself (its routing, timeouts,
// buffering and retries), with only the addresses and the paths of a run changed. Used by the load
// balancer test and `npm run bench:cluster`. Needs nginx (NGINX_PATH, default /usr/sbin/nginx).
import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './freePort.js';
import { waitUntil } from './waiting.js';

export const NGINX_PATH = process.env.NGINX_PATH || '/usr/sbin/nginx';
const DEPLOYED = path.resolve(import.meta.dirname, '../../deploy/nginx.conf');

export interface Nginx {
  url: string;
  stop(): Promise<void>;
}

/** Fails with what to do when nginx is not installed. */
export async function requireNginx(): Promise<void> {
  await access(NGINX_PATH, constants.X_OK).catch(() => {
    throw new Error(`nginx not found at ${NGINX_PATH}: install it (apt-get install -y nginx-light) or set NGINX_PATH`);
  });
}

/** deploy/nginx.conf with `upstreams` (host:port) for its app servers, listening on `port`, its files in `workDir`. */
export async function nginxConfig(upstreams: string[], port: number, workDir: string): Promise<string> {
  let config = await readFile(DEPLOYED, 'utf8');
  const edit = (pattern: RegExp, replace: (...groups: string[]) => string) => {
    if (!pattern.test(config)) throw new Error(`deploy/nginx.conf no longer has ${pattern}: update test/support/nginx.ts`);
    config = config.replace(pattern, replace);
  };
  // Each upstream's list of app servers, with their parameters.
  edit(/^( *)server app1:8080([^;]*);\n *server app2:8080[^;]*;\n/gm, (_, indent, params) =>
    upstreams.map((upstream) => `${indent}server ${upstream}${params};\n`).join(''),
  );
  edit(/^( *)listen 8080;/m, (_, indent) => `${indent}listen 127.0.0.1:${port};`);
  edit(/^http \{\n/m, () =>
    ['http {', '  access_log off;', ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `  ${kind}_temp_path ${workDir}/${kind};`), ''].join('\n'),
  );
  return `pid ${workDir}/nginx.pid;\nerror_log ${workDir}/error.log;\nworker_processes 1;\n${config}`;
}

/** Starts nginx (deploy/nginx.conf's settings) in front of `upstreams` and waits until it answers /healthz. */
export async function startNginx(upstreams: string[]): Promise<Nginx> {
  await requireNginx();
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'lia-nginx-'));
  // nginx cannot report a port the kernel chose, so it gets one that was free a moment ago: any socket of the
  // run may take it meanwhile, and then nginx exits (EADDRINUSE) and starts again on another.
  for (;;) {
    const started = await startOn(await freePort(), upstreams, workDir);
    if (started) return started;
  }
}

/** nginx on `port`; null when the port was taken before nginx could bind it. */
async function startOn(port: number, upstreams: string[], workDir: string): Promise<Nginx | null> {
  const file = path.join(workDir, 'nginx.conf');
  const errorLog = path.join(workDir, 'error.log');
  await writeFile(file, await nginxConfig(upstreams, port, workDir));
  await rm(errorLog, { force: true });
  const proc = spawn(NGINX_PATH, ['-e', errorLog, '-c', file, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  // Ready when nginx itself answers (a server that took the port would answer /healthz too, without nginx's
  // Server header), failed when it exits: no deadline of its own (the test's timeout bounds a hang).
  const answers = () => fetch(`${url}/healthz`).then((res) => res.ok && res.headers.get('server')?.startsWith('nginx') === true, () => false);
  const ended = () => proc.exitCode !== null || proc.signalCode !== null;
  await waitUntil(async () => ended() || (await answers()), `nginx answering on ${url}`);
  if (ended()) {
    const why = stderr + (await readFile(errorLog, 'utf8').catch(() => ''));
    if (why.includes('Address already in use')) return null;
    throw new Error(`nginx did not start: ${why}`);
  }
  return {
    url,
    async stop() {
      proc.kill('SIGQUIT');
      await exited;
      await rm(workDir, { recursive: true, force: true });
    },
  };
}
