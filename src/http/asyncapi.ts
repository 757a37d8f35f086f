// The AsyncAPI document (openapi/asyncapi.yaml) as served at /asyncapi.json and /asyncapi.yaml. The
// event schemas have one source, the contract: the file names them as OpenAPI-format payloads
// (`openapi.yaml#/components/schemas/...`), and the served document carries copies of them (and of the
// schemas they use), converted from OpenAPI 3.0's dialect to AsyncAPI's JSON Schema, so that it stands
// alone. Built on first use, not at start-up (nor is the YAML parser loaded before then).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { contractCopy } from './contract.js';

type Json = Record<string, any>;

const sourceFile = fileURLToPath(new URL('../../openapi/asyncapi.yaml', import.meta.url));
const CONTRACT_SCHEMA = /^openapi\.yaml#\/components\/schemas\/([^/]+)$/;
const LOCAL_SCHEMA = /^#\/components\/schemas\/([^/]+)$/;
const OPENAPI_FORMAT = /^application\/vnd\.oai\.openapi/;
/** Keywords whose values are data, not schemas: copied as they are. */
const LITERAL_KEYWORDS = new Set(['enum', 'const', 'default', 'examples', 'required']);

export const readAsyncApiSource = async (): Promise<Json> => (await import('yaml')).default.parse(readFileSync(sourceFile, 'utf8'));

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** An OpenAPI 3.0 schema as JSON Schema: `nullable` becomes a null type, `example` `examples`; `discriminator` goes (its `oneOf` decides). */
function toJsonSchema(schema: unknown, uses: (name: string) => void): unknown {
  if (Array.isArray(schema)) return schema.map((item) => toJsonSchema(item, uses));
  if (!isObject(schema)) return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'nullable' || key === 'discriminator' || key === 'example') continue;
    if (key === '$ref') {
      const name = LOCAL_SCHEMA.exec(value)?.[1];
      if (!name) throw new Error(`asyncapi: the contract's schemas may only refer to each other, not to ${value}`);
      uses(name);
      out.$ref = value;
    } else if (key === 'properties') {
      out.properties = Object.fromEntries(Object.entries<unknown>(value).map(([name, property]) => [name, toJsonSchema(property, uses)]));
    } else {
      out[key] = LITERAL_KEYWORDS.has(key) ? value : toJsonSchema(value, uses);
    }
  }
  if ('example' in schema) out.examples = [schema.example];
  if (schema.nullable === true) {
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    if (out.type === undefined) return { anyOf: [out, { type: 'null' }] };
  }
  return out;
}

/** `source` with every contract schema it names replaced by a local one, and those schemas copied in. */
export function bundleAsyncApi(source: Json, openapi: Json): Json {
  const wanted: string[] = [];
  const want = (name: string) => {
    if (!wanted.includes(name)) wanted.push(name);
    return { $ref: `#/components/schemas/${name}` };
  };
  const inline = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(inline);
    if (!isObject(node)) return node;
    const schemaRef = typeof node.schemaFormat === 'string' && OPENAPI_FORMAT.test(node.schemaFormat) ? node.schema?.$ref : node.$ref;
    const name = typeof schemaRef === 'string' ? CONTRACT_SCHEMA.exec(schemaRef)?.[1] : undefined;
    if (name) return want(name);
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, inline(value)]));
  };
  const document = inline(source) as Json;
  const schemas: Json = { ...document.components?.schemas };
  // The list grows while it is walked: each copied schema adds the ones it refers to.
  for (let i = 0; i < wanted.length; i++) {
    const name = wanted[i];
    const schema = openapi.components?.schemas?.[name];
    if (!schema) throw new Error(`asyncapi: the contract has no schema ${name}`);
    if (name in schemas) throw new Error(`asyncapi: schema ${name} is in both documents`);
    schemas[name] = toJsonSchema(schema, want);
  }
  return { ...document, components: { ...document.components, schemas } };
}

export interface Addresses {
  publicBaseUrl: string;
  audioSocketHost: string;
  audioSocketPort: number;
}

/** The document as this deployment serves it: its servers are where this server is reached. */
export async function servedAsyncApi(addresses: Addresses): Promise<Json> {
  const document = bundleAsyncApi(await readAsyncApiSource(), contractCopy());
  const base = new URL(addresses.publicBaseUrl);
  const secure = base.protocol === 'https:';
  const { api, events, audiosocket } = document.servers;
  Object.assign(api, { host: base.host, protocol: secure ? 'wss' : 'ws' });
  Object.assign(events, { host: base.host, protocol: secure ? 'https' : 'http' });
  Object.assign(audiosocket, { host: `${addresses.audioSocketHost}:${addresses.audioSocketPort}` });
  return document;
}
