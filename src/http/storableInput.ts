// What the contract cannot say about a request: every string in it can be stored, every number is
// finite, and its structures end. PostgreSQL refuses NUL in text and jsonb, and an unpaired surrogate
// becomes an invalid jsonb escape (or is silently replaced in text); a query parameter such as
// `limit=1e309` is read as Infinity, which the validator's bounds let through; code that walks a
// structure recursively overflows its stack on a body nested thousands deep. So one walk over the path,
// query and body refuses them all with a 422 naming each place, before any handler or service sees
// the request.
import type { RequestHandler } from 'express';
import { errors, type ValidationIssue } from '../errors.js';
import { contract } from './contract.js';
import { resolved } from './refs.js';
import type { OperationEntry } from './handler.js';

/** Deeper than any body the contract describes (metadata is three levels down), far below a stack overflow. */
export const MAX_NESTING_DEPTH = 32;

const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

type Location = ValidationIssue['loc'];

function problemOf(text: string): Omit<ValidationIssue, 'loc'> | undefined {
  if (text.includes('\u0000')) return { msg: 'must not contain the NUL character (U+0000)', type: 'nul_character' };
  const surrogate = UNPAIRED_SURROGATE.exec(text);
  if (surrogate) {
    const code = surrogate[0].charCodeAt(0).toString(16).toUpperCase();
    return { msg: `must be well-formed Unicode: it contains an unpaired surrogate (U+${code})`, type: 'unpaired_surrogate' };
  }
  return undefined;
}

type Task = { loc: Location; value: unknown } | { loc: Location; name: string };

/**
 * Every string (values and object keys) that cannot be stored, every number that is not finite, and
 * every structure nested too deep, in
 * one pass over the parts given. Iterative, so no input can overflow the stack; each value is visited once.
 */
export function unstorableParts(parts: Array<[string, unknown]>): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const pending: Task[] = parts.map(([part, value]) => ({ loc: [part], value })).reverse();
  while (pending.length) {
    const task = pending.pop()!;
    const { loc } = task;
    if ('name' in task) {
      const problem = problemOf(task.name);
      if (problem) issues.push({ loc, msg: `its name ${problem.msg}`, type: problem.type });
      continue;
    }
    const { value } = task;
    if (typeof value === 'string') {
      const problem = problemOf(value);
      if (problem) issues.push({ loc, ...problem });
      continue;
    }
    if (typeof value === 'number' && !Number.isFinite(value)) {
      issues.push({ loc, msg: 'must be a finite number', type: 'type' });
      continue;
    }
    if (typeof value !== 'object' || value === null || Buffer.isBuffer(value)) continue;
    // loc[0] is the part (body, query, path), so a value's depth is the number of containers around it.
    if (loc.length > MAX_NESTING_DEPTH) {
      issues.push({ loc, msg: `must not be nested more than ${MAX_NESTING_DEPTH} levels deep`, type: 'too_deep' });
      continue;
    }
    const entries: Array<[string | number, unknown]> = Array.isArray(value)
      ? value.map((item, index) => [index, item])
      : Object.entries(value);
    // A stack: pushed last to first, so places are reported in the order they appear, a name before its value.
    for (let index = entries.length - 1; index >= 0; index--) {
      const [key, item] = entries[index];
      const itemLoc = [...loc, key];
      pending.push({ loc: itemLoc, value: item });
      if (typeof key === 'string') pending.push({ loc: itemLoc, name: key });
    }
  }
  return issues;
}

/**
 * Path parameters name what a request is about, and the guards look them up (a call key's call) before
 * anything else is checked: a path that cannot be stored names nothing, so it is refused first.
 */
export const storablePath: RequestHandler = (req, _res, next) => {
  const issues = unstorableParts([['path', req.params]]);
  next(issues.length ? errors.invalid(issues) : undefined);
};

/**
 * Refuses a request with an unstorable string or a too deeply nested structure in the query parameters
 * the operation declares (others are ignored, as they are everywhere) or its body. Null for an
 * operation that takes neither: there is nothing to check.
 */
export function storableInput(op: Pick<OperationEntry, 'method' | 'path'>): RequestHandler | null {
  const operation = contract.paths[op.path]?.[op.method];
  const parameters: Array<Record<string, any>> = operation?.parameters ?? [];
  const declaredQuery = new Set(parameters.map((parameter) => resolved(contract, parameter)).filter((p) => p.in === 'query').map((p) => p.name));
  if (!declaredQuery.size && !operation?.requestBody) return null;
  return (req, _res, next) => {
    const query = Object.entries(req.query ?? {}).filter(([name]) => declaredQuery.has(name));
    const issues = unstorableParts([
      ['query', Object.fromEntries(query)],
      ['body', req.body],
    ]);
    next(issues.length ? errors.invalid(issues) : undefined);
  };
}
