// Writes the generated types and operation table, and the start of a handler for every operation without one.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { generatedFiles, handlerFile, missingHandlers, stubSource } from './outputs.js';

for (const [file, content] of await generatedFiles()) {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
  console.log(`wrote ${path.relative(process.cwd(), file)}`);
}
for (const op of missingHandlers()) {
  mkdirSync(path.dirname(handlerFile(op)), { recursive: true });
  writeFileSync(handlerFile(op), stubSource(op));
  console.log(`stub  ${path.relative(process.cwd(), handlerFile(op))} (does not compile until it answers)`);
}
