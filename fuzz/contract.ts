// The operations of openapi/openapi.yaml as the fuzzer needs them: where, who may call, what goes in.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';

export type Schema = Record<string, any>;

export type Auth = 'api' | 'callKey' | 'chatKey' | 'admin' | 'none';

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: Schema;
}

export interface FuzzOperation {
  operationId: string;
  method: string;
  /** The template, e.g. /v1/calls/{call_id}. */
  path: string;
  auth: Auth;
  parameters: Parameter[];
  /** Media type -> schema, when the operation takes a body. */
  body: { required: boolean; content: Record<string, Schema> } | undefined;
}

const contractFile = fileURLToPath(new URL('../openapi/openapi.yaml', import.meta.url));

/** Follows `$ref`s everywhere in a node (the contract has no cycles). */
function resolver(document: Schema) {
  const follow = (ref: string): Schema =>
    ref
      .replace(/^#\//, '')
      .split('/')
      .reduce((node: Schema, part: string) => node[part], document);
  const resolve = (node: unknown): any => {
    if (Array.isArray(node)) return node.map(resolve);
    if (typeof node !== 'object' || node === null) return node;
    const record = node as Schema;
    if (typeof record.$ref === 'string') return resolve(follow(record.$ref));
    return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, resolve(value)]));
  };
  return resolve;
}

function authOf(operation: Schema): Auth {
  const security: Array<Record<string, unknown>> | undefined = operation.security;
  if (!security) return 'api';
  const schemes = security.flatMap((entry) => Object.keys(entry));
  if (schemes.includes('CallKey')) return 'callKey';
  if (schemes.includes('ChatKey')) return 'chatKey';
  if (schemes.includes('AdminToken')) return 'admin';
  return schemes.length ? 'api' : 'none';
}

/** From openapi.yaml, or from the openapi.json a build made of it (parsed in a fraction of the time). */
export function loadOperations(file = contractFile): FuzzOperation[] {
  const text = readFileSync(file, 'utf8');
  const document = file.endsWith('.json') ? JSON.parse(text) : YAML.parse(text);
  const resolve = resolver(document);
  const operations: FuzzOperation[] = [];
  for (const [path, item] of Object.entries<Schema>(document.paths)) {
    for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
      const operation = item[method];
      if (!operation) continue;
      const requestBody = operation.requestBody ? resolve(operation.requestBody) : undefined;
      operations.push({
        operationId: operation.operationId,
        method: method.toUpperCase(),
        path,
        auth: authOf(operation),
        parameters: resolve(operation.parameters ?? []).map((p: Schema) => ({
          name: p.name,
          in: p.in,
          required: Boolean(p.required),
          schema: p.schema ?? {},
        })),
        body: requestBody && {
          required: Boolean(requestBody.required),
          content: Object.fromEntries(Object.entries<Schema>(requestBody.content ?? {}).map(([type, media]) => [type, media.schema ?? {}])),
        },
      });
    }
  }
  return operations;
}
