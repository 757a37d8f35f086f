// The contract, read once: the validator, /openapi.json and /openapi.yaml all serve this one document.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const specFile = fileURLToPath(new URL('../../openapi/openapi.yaml', import.meta.url));
// Beside the compiled server (scripts/build.mjs) the document is also there already parsed, as JSON.
const prebuiltJson = specFile.replace(/\.yaml$/, '.json');

export const contractYaml = readFileSync(specFile, 'utf8');
export const contractJson = existsSync(prebuiltJson)
  ? readFileSync(prebuiltJson, 'utf8')
  : JSON.stringify((await import('yaml')).default.parse(contractYaml));
export const contract: Record<string, any> = JSON.parse(contractJson);

/** A private copy for consumers that annotate the document they are given. */
export const contractCopy = (): Record<string, any> => JSON.parse(contractJson);
