// The contract's schemas as a JSON-schema validator, for what the server sends outside the request and
// response validation: events on streams, frames on sockets. ajv (express-openapi-validator's own)
// understands OpenAPI's `nullable`; `discriminator` is left to `oneOf`, which picks the same member.
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { contractCopy } from '../../src/http/contract.js';

// ajv-formats is CommonJS: its function is the default export, or that export's `default`.
const addFormats = ((addFormatsModule as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv) => Ajv;

export const newAjv = () => {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  return ajv;
};

/** A validator for a schema of `document` by its JSON pointer (`#/components/schemas/Event`). */
export function schemaValidator(document: Record<string, unknown>, id: string) {
  const ajv = newAjv();
  ajv.addSchema(document, id);
  const cache = new Map<string, ValidateFunction>();
  return (pointer: string): ValidateFunction => {
    let validate = cache.get(pointer);
    if (!validate) {
      validate = ajv.getSchema(`${id}${pointer}`);
      if (!validate) throw new Error(`${id} has no schema at ${pointer}`);
      cache.set(pointer, validate);
    }
    return validate;
  };
}

/** The contract's component schemas, by name. */
export function contractSchemas() {
  const contract = contractCopy();
  const byPointer = schemaValidator(contract, 'openapi.json');
  return {
    contract,
    schema: (name: string) => byPointer(`#/components/schemas/${name}`),
    /** `value` against the named schema: the problems ajv found, or an empty list. */
    problems(name: string, value: unknown): string[] {
      const validate = byPointer(`#/components/schemas/${name}`);
      return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);
    },
  };
}
