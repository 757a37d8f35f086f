// The contract's examples checked against their own schemas: every `example` and `examples` entry
// beside a `schema` (media types, parameters, headers) and every `example` inside a schema. Prism
// serves these examples as the mock's answers, so an invalid one would teach clients a wrong shape.
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { resolved } from '../src/http/refs.js';

type Json = Record<string, any>;

const pointer = (parts: string[]) => '#/' + parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');


/** Where each example is, the example, and a reference to the schema it must satisfy. */
function* examplesIn(spec: Json, node: any, at: string[]): Generator<{ where: string; value: unknown; schemaRef: string }> {
  if (!node || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const [index, item] of node.entries()) yield* examplesIn(spec, item, [...at, String(index)]);
    return;
  }
  const inComponentsExamples = at[0] === 'components' && at[1] === 'examples';
  if (inComponentsExamples) return; // checked where they are used, against the schema there
  if (node.schema && typeof node.schema === 'object') {
    const schemaRef = pointer([...at, 'schema']);
    if ('example' in node) yield { where: pointer([...at, 'example']), value: node.example, schemaRef };
    for (const [name, example] of Object.entries<any>(node.examples ?? {})) {
      yield { where: pointer([...at, 'examples', name]), value: resolved(spec, example)?.value, schemaRef };
    }
  }
  const isSchema = at.at(-1) === 'schema' || at.at(-2) === 'schemas' || at.at(-2) === 'properties' || at.at(-1) === 'items';
  if (isSchema && 'example' in node) yield { where: pointer([...at, 'example']), value: node.example, schemaRef: pointer(at) };
  for (const [key, child] of Object.entries(node)) {
    if (key === 'example' || key === 'examples') continue;
    yield* examplesIn(spec, child, [...at, key]);
  }
}

/**
 * A validator of the contract's schemas, addressed by JSON pointer: `ajv.getSchema('contract#/...')`.
 * OpenAPI 3.0 schemas: `nullable` is Ajv's own keyword; `example`, `x-...` and `discriminator` mapping
 * hints are annotations; `format: binary` marks an upload or download, not a string check.
 */
export function contractAjv(spec: Json): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: true, discriminator: true, validateSchema: false });
  addFormats.default(ajv);
  ajv.addFormat('binary', true);
  ajv.addSchema(spec, 'contract');
  return ajv;
}

/** One line per example that its schema refuses, naming where it is and what is wrong. */
export function invalidExamples(spec: Json): string[] {
  const ajv = contractAjv(spec);
  const problems: string[] = [];
  for (const { where, value, schemaRef } of examplesIn(spec, spec, [])) {
    if (value === undefined) {
      problems.push(`${where}: the example has no value`);
      continue;
    }
    const validate = ajv.getSchema(`contract${schemaRef}`);
    if (!validate) throw new Error(`codegen: cannot read the schema at ${schemaRef}`);
    if (!validate(value)) {
      const errors = (validate.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message}`).join('; ');
      problems.push(`${where} does not match ${schemaRef}: ${errors}`);
    }
  }
  return problems;
}
