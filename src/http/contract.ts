// The contract, read once: the validator, /openapi.json and /openapi.yaml all serve this one document.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';

const specFile = fileURLToPath(new URL('../../openapi/openapi.yaml', import.meta.url));

export const contractYaml = readFileSync(specFile, 'utf8');
export const contract: Record<string, any> = YAML.parse(contractYaml);
export const contractJson = JSON.stringify(contract);

/** A private copy for consumers that annotate the document they are given. */
export const contractCopy = (): Record<string, any> => JSON.parse(contractJson);
