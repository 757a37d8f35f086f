// `npm run check:imports` (part of `npm test`): the import graph stays layered. dependency-cruiser checks
// the module rules of .dependency-cruiser.cjs (no cycle between modules, no import up a layer); this
// also checks that no two folders of src/ import each other, which the module rules cannot see: two
// folders that import each other are one part in two places.
import { cruise } from 'dependency-cruiser';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** The part a module belongs to: a folder of src/ (the media plane and its transports count as their own), a loose file, or a top folder. */
function partOf(path) {
  const parts = path.split('/');
  if (parts[0] !== 'src') return parts[0];
  if (parts.length === 2) return path;
  if (parts[1] === 'calls' && parts[2] === 'media') return parts[3] === 'transports' ? 'src/calls/media/transports' : 'src/calls/media';
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
for (const [a, targets] of imports) {
  for (const [b, example] of targets) {
    const back = imports.get(b)?.get(a);
    if (!back || a > b) continue;
    problems.push(`folder cycle ${a} <-> ${b} (${example}; ${back}): cut it with an interface or move the shared part down`);
  }
}

if (problems.length) {
  console.error(`import layering: ${problems.length} problem(s)\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`✔ import layering holds (${result.summary.totalCruised} modules, no two parts import each other)`);
