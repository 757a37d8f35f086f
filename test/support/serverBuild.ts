// globalSetup of the database tests: the server built once per run (scripts/build.mjs), for the tests that
// start it as a child process. Such a child then loads JavaScript instead of having tsx compile the whole
// server in it (about 3.5 s of CPU a start). A directory of this run's own, made from the current source:
// the embedded tests, which run beside these, rebuild dist/ (lifecycle.embedded.test.ts).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The directory of the run's build (scripts/build.mjs). */
    serverBuild: string;
  }
}

const root = path.resolve(import.meta.dirname, '../..');

/**
 * Builds the server (scripts/build.mjs, as `npm start` does) into a new directory named `<prefix>...` under
 * .test-builds/: inside the project (git ignores it), so that the build finds node_modules and package.json as
 * dist/ does. The caller removes it. Also the contract tests' server (contract-tests/run.ts).
 */
export async function buildServer(prefix: string): Promise<string> {
  const parent = path.join(root, '.test-builds');
  await mkdir(parent, { recursive: true });
  const out = await mkdtemp(path.join(parent, prefix));
  const build = spawn(process.execPath, ['scripts/build.mjs', out], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  const [code] = await once(build, 'exit');
  if (code !== 0) throw new Error(`scripts/build.mjs exited ${code}`);
  return out;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const out = await buildServer('run-');
  project.provide('serverBuild', out);
  return () => rm(out, { recursive: true, force: true });
}
