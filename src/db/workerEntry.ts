// Starting a worker thread from a module next to the caller: the compiled JavaScript (dist/, `npm start`)
// or, under tsx and vitest, the TypeScript source through tsx.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

const require = createRequire(import.meta.url);

/** Starts the worker `name` (a module name without extension) that sits next to the module at `callerUrl`. */
export function startWorker(callerUrl: string, name: string, options: Pick<WorkerOptions, 'workerData' | 'transferList'>): Worker {
  const entry = new URL(callerUrl.endsWith('.ts') ? `./${name}.ts` : `./${name}.js`, callerUrl);
  if (entry.pathname.endsWith('.js')) return new Worker(entry, options);
  // Node 20 does not pass its module hooks (`--import tsx`) on to worker threads; tsx's require hook works in one.
  // The bootstrap runs as CommonJS or, under `node --input-type=module`, as a module: it needs no `require` of its own.
  const [tsx, file] = [require.resolve('tsx/cjs/api'), fileURLToPath(entry)].map((path) => JSON.stringify(path));
  const bootstrap = `import('node:module').then(({ createRequire }) => { const load = createRequire(${file}); load(${tsx}).register(); load(${file}); });`;
  return new Worker(bootstrap, { ...options, eval: true });
}
