// Fails when the generated files differ from what the contract gives, or a handler is missing.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { generatedFiles, missingHandlers } from './outputs.js';

const problems: string[] = [];
for (const [file, content] of await generatedFiles()) {
  const current = existsSync(file) ? readFileSync(file, 'utf8') : null;
  if (current !== content) problems.push(`${path.relative(process.cwd(), file)} is out of date`);
}
for (const op of missingHandlers()) problems.push(`no handler module for ${op.operationId}`);

if (problems.length) {
  console.error(`codegen drift:\n  ${problems.join('\n  ')}\nrun \`npm run codegen\` and commit the result`);
  process.exit(1);
}
console.log('codegen: generated files are up to date');
