// `npm run build` (and `npm start`, before it starts): the server compiled ahead of time into dist/, so a
// start loads JavaScript instead of compiling TypeScript with tsx. Each file becomes one file (no bundle):
// dist/ mirrors the project, so paths a module resolves from its own location (the contract, migrations,
// the pages' assets) find their copies here. Takes well under a second; `npm run dev` skips it.
//
//   node scripts/build.mjs [out]    out: default dist/; the tests build into a directory of their run
//                                   (test/support/serverBuild.ts). Inside the project, so that the
//                                   build finds node_modules and package.json's "type" as dist/ does.
import { cp, mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import YAML from 'yaml';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.resolve(root, process.argv[2] ?? 'dist');

/** Every TypeScript source under `dir`, declaration files aside. */
async function sources(dir) {
  const entries = await readdir(path.join(root, dir), { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

const started = performance.now();
await rm(out, { recursive: true, force: true }); // no file of a deleted source survives
await build({
  entryPoints: (await Promise.all(['src', 'handlers', 'migrations'].map(sources))).flat(),
  outdir: out,
  outbase: root,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: 'linked',
  logLevel: 'warning',
});
// The pages' own files (HTML, browser JavaScript, CSS, the word catalogue) are served as they are.
for (const entry of await readdir(path.join(root, 'src/web'), { withFileTypes: true })) {
  if (entry.isDirectory()) await cp(path.join(root, 'src/web', entry.name), path.join(out, 'src/web', entry.name), { recursive: true });
}
// The contract as the server reads it (src/http/contract.ts): the YAML it serves, and the same document
// already parsed, so a start does not parse YAML.
const yaml = await readFile(path.join(root, 'openapi/openapi.yaml'), 'utf8');
await mkdir(path.join(out, 'openapi'), { recursive: true });
await writeFile(path.join(out, 'openapi/openapi.yaml'), yaml);
await writeFile(path.join(out, 'openapi/openapi.json'), JSON.stringify(YAML.parse(yaml)));
// The AsyncAPI source, bundled with the contract's event schemas on first request (src/http/asyncapi.ts).
await cp(path.join(root, 'openapi/asyncapi.yaml'), path.join(out, 'openapi/asyncapi.yaml'));
console.log(`[build] ${path.relative(root, out)}/ in ${Math.round(performance.now() - started)} ms`);
