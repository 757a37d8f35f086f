// `npm run check:imports` (part of `npm test`): the import graph stays layered. dependency-cruiser checks
// the module rules of .dependency-cruiser.cjs (no cycle between modules, no import up a layer); this
// also checks that no two folders of src/ import each other, which the module rules cannot see: two
// folders that import each other are one part in two places.
//
// The folder cycles still to be cut are listed below. A new one fails the check, and so does a listed
// one that is gone: the list only shrinks.
import { cruise } from 'dependency-cruiser';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const KNOWN_FOLDER_CYCLES = new Set([
  'src/appContext.ts <-> src/http',
  'src/appContext.ts <-> src/sessions',
  'src/calls <-> src/events',
  'src/calls <-> src/telephony',
  'src/calls/media <-> src/engines',
  'src/console <-> src/web',
  'src/generated <-> src/http',
  'src/money <-> src/services',
]);

/** The part a module belongs to: a folder of src/ (the media plane counts as its own), a loose file, or a top folder. */
function partOf(path) {
  const parts = path.split('/');
  if (parts[0] !== 'src') return parts[0];
  if (parts.length === 2) return path;
  if (parts[1] === 'calls' && parts[2] === 'media') return 'src/calls/media';
  return `src/${parts[1]}`;
}

const { output } = await cruise(['src', 'handlers'], { ruleSet: require('../.dependency-cruiser.cjs'), outputType: 'json', validate: true });
const result = typeof output === 'string' ? JSON.parse(output) : output;

const problems = result.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`);

const imports = new Map();
for (const module of result.modules) {
  for (const dependency of module.dependencies) {
    const to = dependency.resolved;
    if (!/^(src|handlers)\//.test(to)) continue;
    const [a, b] = [partOf(module.source), partOf(to)];
    if (a === b) continue;
    if (!imports.has(a)) imports.set(a, new Map());
    imports.get(a).set(b, `${module.source} -> ${to}`);
  }
}
const found = new Map();
for (const [a, targets] of imports) {
  for (const [b, example] of targets) {
    const back = imports.get(b)?.get(a);
    if (!back || a > b) continue;
    found.set(`${a} <-> ${b}`, `${example}; ${back}`);
  }
}
for (const [cycle, example] of found) {
  if (!KNOWN_FOLDER_CYCLES.has(cycle)) problems.push(`folder cycle ${cycle} (${example}): cut it with an interface or move the shared part down`);
}
for (const cycle of KNOWN_FOLDER_CYCLES) {
  if (!found.has(cycle)) problems.push(`folder cycle ${cycle} is gone: remove it from KNOWN_FOLDER_CYCLES in scripts/checkImports.mjs`);
}

if (problems.length) {
  console.error(`import layering: ${problems.length} problem(s)\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`✔ import layering holds (${result.summary.totalCruised} modules; ${KNOWN_FOLDER_CYCLES.size} folder cycles still listed to cut)`);
