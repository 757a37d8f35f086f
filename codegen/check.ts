// Fails when the generated files differ from what the contract gives, a handler is missing, an
// example does not match its schema, a request property has a default (see requestDefaults), or a
// request schema is not strict and bounded (see unboundedRequestSchemas).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { invalidExamples } from './examples.js';
import { generatedFiles, missingHandlers, readSpec, requestDefaults, unboundedRequestSchemas } from './outputs.js';

const problems: string[] = [];
for (const [file, content] of await generatedFiles()) {
  const current = existsSync(file) ? readFileSync(file, 'utf8') : null;
  if (current !== content) problems.push(`${path.relative(process.cwd(), file)} is out of date`);
}
for (const op of missingHandlers()) problems.push(`no handler module for ${op.operationId}`);
const spec = readSpec();
for (const problem of invalidExamples(spec)) problems.push(`example ${problem}`);
for (const problem of requestDefaults(spec)) {
  problems.push(`${problem}: give it in the description (generators' default flags would make it required)`);
}
for (const problem of unboundedRequestSchemas(spec)) problems.push(problem);

if (problems.length) {
  console.error(`codegen check failed:\n  ${problems.join('\n  ')}\nfix the contract, run \`npm run codegen\` and commit the result`);
  process.exit(1);
}
console.log('codegen: generated files are up to date');
