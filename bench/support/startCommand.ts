// The command `npm start` runs, read from package.json at run time and spawned without npm in between
// (npm's own process would add its start-up and memory to the figures). Whatever the start script is
// today (`node --import tsx src/main.ts`, or `node dist/src/main.js` after a build), the benchmark
// measures that; a prestart script (the build) runs once before.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

export interface StartCommand {
  /** Arguments to give to node (process.execPath): its options, then the entry file and its arguments. */
  nodeArgs: string[];
  /** Variables the script sets before `node` (FOO=bar node ...). */
  env: Record<string, string>;
  /** The script as written, for the report. */
  script: string;
}

export interface StartScripts {
  start: StartCommand;
  /** What npm runs before start (e.g. the ahead-of-time build): run once before anything is measured. */
  prestart?: string;
}

/**
 * Splits a start script of the form `[NAME=value ...] node [args ...]` into its parts. Anything a shell
 * would have to interpret (&&, pipes, quotes, $variables) is refused with the script named, so the
 * benchmark never measures something other than what `npm start` runs.
 */
export function parseStartScript(script: string): StartCommand {
  if (/[&|;<>`$"'\\()]/.test(script)) {
    throw new Error(`the start script "${script}" needs a shell; the benchmark spawns only "[NAME=value ...] node [args ...]" directly`);
  }
  const words = script.trim().split(/\s+/);
  const env: Record<string, string> = {};
  while (words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]!)) {
    const word = words.shift()!;
    const eq = word.indexOf('=');
    env[word.slice(0, eq)] = word.slice(eq + 1);
  }
  if (words.shift() !== 'node' || words.length === 0) {
    throw new Error(`the start script "${script}" does not start with node; the benchmark spawns only "[NAME=value ...] node [args ...]" directly`);
  }
  return { nodeArgs: words, env, script };
}

export async function readStartScripts(root: string): Promise<StartScripts> {
  const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
  const script = pkg.scripts?.start;
  if (!script) throw new Error('package.json has no start script');
  return { start: parseStartScript(script), prestart: pkg.scripts?.prestart };
}

/** `npm run prestart` when there is one, as `npm start` would before starting: not part of any figure. */
export async function runPrestart(root: string, scripts: StartScripts): Promise<void> {
  if (!scripts.prestart) return;
  console.log(`running prestart once first (${scripts.prestart}), as npm start does`);
  await promisify(execFile)('npm', ['run', '--silent', 'prestart'], { cwd: root, maxBuffer: 16 << 20 });
}
