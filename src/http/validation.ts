import * as OpenApiValidator from 'express-openapi-validator';
import type { RequestHandler } from 'express';
import type { AppContext } from './context.js';
import { errors, type ValidationIssue } from '../errors.js';
import { bodyBounds, type BodyBounds } from './bodyBounds.js';
import { contract, contractCopy } from './contract.js';
import type { OperationEntry } from './handler.js';

export const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;

/** One file per upload, and a few short fields beside it (sender, author_name). */
const UPLOAD_LIMITS = { fileSize: MAX_UPLOAD_BYTES, files: 1, fields: 20, parts: 21, fieldSize: 64 * 1024, fieldNameSize: 100 };

/**
 * The contract's request validator (every problem at once) and, when configured, its response
 * validator: a handler answering outside the contract then fails with a 500, which tests catch.
 * Built once; `forOperation` gives the middlewares of one operation. The library finds a request's
 * operation by compiling and trying every path of the contract on every request; our router has already
 * matched the operation, so each operation's match is taken from the library once and reused.
 *
 * Each stage of the library waits for a promise before it works, so a stage that has nothing to do
 * still costs a turn of the event loop: the path-parameter stage only installs Express parameter
 * hooks, once, and is left out after its first success; the upload stage only reads multipart bodies,
 * and is left out of operations whose contract takes no body at all; the request stage checks
 * parameters and bodies, and is left out of operations that take neither (/healthz, /v1/account).
 */
export function contractValidator(app: AppContext): { forOperation(op: Pick<OperationEntry, 'method' | 'path'>): RequestHandler[] } {
  const middlewares = libraryStages(app.config.validateResponses);
  // express-openapi-validator 5.6 names its stages; a new version that renames them must be looked at.
  const stage = (name: string) => {
    const found = middlewares.find((middleware) => middleware.name === name);
    if (!found) throw new Error(`express-openapi-validator: no ${name}; check its stages`);
    return found;
  };
  const pathParams = onceSucceeded(stage('pathParamsMiddleware'));
  const metadata = stage('metadataMiddleware');
  const multipart = stage('multipartMiddleware');
  // Security is not validated by the library (our guards do it): its stage would only cost a promise.
  const security = stage('securityMiddleware');
  const request = stage('requestMiddleware');
  return {
    forOperation: (op) => {
      const takesBody = documentedBodyTypes(op).length > 0;
      const takesInput = takesBody || documentedParameters(op).length > 0;
      const bounds = bodyBounds(op);
      return middlewares.flatMap((middleware) => {
        if (middleware === security || (middleware === multipart && !takesBody) || (middleware === request && !takesInput)) return [];
        if (middleware === metadata) return [matchedOnce(metadata)];
        if (middleware === request && bounds) return [namingFields(bounds, request)];
        return [middleware === pathParams.stage ? pathParams.middleware : middleware];
      });
    },
  };
}

/**
 * The request stage, with the fields the body's bounds named (./bodyBounds.ts: unknown fields with the
 * one probably meant, keys too long) listed beside its own problems, in place of its bare "must NOT
 * have additional properties".
 */
function namingFields(bounds: BodyBounds, request: RequestHandler): RequestHandler {
  return (req, res, next) => {
    const mediaType = mediaTypeOf(req);
    const fields = bounds.fieldIssues(mediaType, req.body);
    if (!fields.length) return request(req, res, next);
    request(req, res, (err?: unknown) => {
      if (!err) return next(errors.invalid(fields));
      if (!isValidatorError(err) || err.status !== 400) return next(err);
      const named = new Set(fields.map((issue) => placeOf(issue.loc)));
      const others = issuesFrom(err).filter((issue) => !(issue.type === UNKNOWN_FIELD && named.has(placeOf(issue.loc))));
      next(errors.invalid([...fields, ...others]));
    });
  };
}

/**
 * The library's stages, built once per process for each setting of response validation. Building them
 * compiles the whole contract (about 0.2 s of CPU per server), and what they hold depends on the contract
 * alone, so servers started in one process (the tests start hundreds) share them. Its path-parameter stage
 * installs Express parameter hooks on the app of the first request it sees only; they set the path
 * parameters the library matched, which later requests take from Express anyway (matchedOnce), so a server
 * without them validates the same parameters.
 */
const builtStages = new Map<boolean, RequestHandler[]>();

function libraryStages(validateResponses: boolean): RequestHandler[] {
  let stages = builtStages.get(validateResponses);
  if (!stages) {
    stages = OpenApiValidator.middleware({
      apiSpec: withoutExamples(contractCopy()) as never,
      validateApiSpec: true,
      validateRequests: { allErrors: true, allowUnknownQueryParameters: true },
      validateResponses: validateResponses ? { allErrors: true } : false,
      validateSecurity: false,
      validateFormats: true,
      ignoreUndocumented: true,
      fileUploader: { limits: UPLOAD_LIMITS },
    }) as RequestHandler[];
    builtStages.set(validateResponses, stages);
  }
  return stages;
}

/** A stage that has nothing left to do once it has succeeded: skipped from then on. */
function onceSucceeded(stage: RequestHandler): { stage: RequestHandler; middleware: RequestHandler } {
  let done = false;
  const middleware: RequestHandler = (req, res, next) => {
    if (done) return next();
    stage(req, res, (err?: unknown) => {
      if (!err) done = true;
      next(err);
    });
  };
  return { stage, middleware };
}

/** What the validator's metadata stage puts on a request (`req.openapi`). */
interface OperationMatch {
  pathParams: Record<string, string>;
  [other: string]: unknown;
}

/**
 * The library's metadata stage for one operation, run on its first request only: later requests of the
 * operation get the same match, with their own path parameters (Express decoded them as the library does).
 */
function matchedOnce(metadata: RequestHandler): RequestHandler {
  let match: Omit<OperationMatch, 'pathParams'> | undefined;
  return (req, res, next) => {
    const request = req as typeof req & { openapi?: OperationMatch };
    if (match) {
      request.openapi = { ...match, pathParams: req.params as Record<string, string> };
      return next();
    }
    metadata(req, res, (err?: unknown) => {
      if (!err && request.openapi) {
        const { pathParams: _ownParams, ...rest } = request.openapi;
        match = rest;
      }
      next(err);
    });
  };
}

/**
 * The body's presence and media type, checked before the validator (which would answer 415 naming
 * "undefined"): every malformed request is a 422 listing what is wrong. A request without a body is
 * fine where the body is optional (its defaults apply); where it is required, `body` is missing. A
 * body of a type the operation does not take is a problem of the Content-Type header.
 */
export function documentedBody(op: Pick<OperationEntry, 'method' | 'path'>): RequestHandler | null {
  const requestBody = contract.paths[op.path]?.[op.method]?.requestBody;
  if (!requestBody) return null;
  const accepted = documentedBodyTypes(op);
  const expected = accepted.join(' or ');
  return (req, _res, next) => {
    const hasBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
    if (!hasBody) {
      if (requestBody.required) return next(errors.invalid([{ loc: ['body'], msg: `a request body is required (${expected})`, type: 'missing' }]));
      return next();
    }
    const mediaType = mediaTypeOf(req);
    if (!accepted.includes(mediaType)) return next(errors.invalid([unsupportedType(mediaType, expected)]));
    next();
  };
}

/** The body's media type, without its parameters (`application/json; charset=utf-8` -> `application/json`). */
const mediaTypeOf = (req: { headers: { 'content-type'?: string } }) => (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();

/** The parameters (path, query, header, cookie) the contract gives the operation, its path's included. */
function documentedParameters(op: Pick<OperationEntry, 'method' | 'path'>): unknown[] {
  const pathItem = contract.paths[op.path];
  return [...(pathItem?.parameters ?? []), ...(pathItem?.[op.method]?.parameters ?? [])];
}

/** The media types of the operation's request body (none: it takes no body). */
export function documentedBodyTypes(op: Pick<OperationEntry, 'method' | 'path'>): string[] {
  return Object.keys(contract.paths[op.path]?.[op.method]?.requestBody?.content ?? {});
}

const unsupportedType = (mediaType: string, expected: string): ValidationIssue => ({
  loc: ['header', 'Content-Type'],
  msg: mediaType ? `the body is ${mediaType}; this operation takes ${expected}` : `the body has no Content-Type; this operation takes ${expected}`,
  type: 'unsupported_media_type',
});

/**
 * Examples are documentation, not rules; the validator's schema compiler would otherwise read the `id`
 * fields of example objects as schema identifiers and refuse them as duplicates.
 */
function withoutExamples(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutExamples);
  if (typeof node !== 'object' || node === null) return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key]) => key !== 'example' && key !== 'examples')
      .map(([key, value]) => [key, withoutExamples(value)]),
  );
}

interface ValidatorErrorItem {
  path: string;
  message: string;
  errorCode?: string;
}

export interface ValidatorError {
  status: number;
  message: string;
  errors?: ValidatorErrorItem[];
}

export function isValidatorError(err: unknown): err is ValidatorError {
  return (
    typeof err === 'object' &&
    err !== null &&
    typeof (err as ValidatorError).status === 'number' &&
    Array.isArray((err as ValidatorError).errors)
  );
}

// The validator names the request's parts as Express does; the contract's `loc` names them as HTTP does.
const PART_NAMES: Record<string, string> = { params: 'path', headers: 'header' };

/** `/body/text/3` or `.body.text[3]` -> ['body', 'text', 3]; `/params/message_id` -> ['path', 'message_id']. */
export function locationOf(path: string): Array<string | number> {
  return path
    .replace(/\[(\d+)\]/g, '.$1')
    .split(/[./]/)
    .filter(Boolean)
    .map((part, index) => (index === 0 ? (PART_NAMES[part] ?? part) : /^\d+$/.test(part) ? Number(part) : part));
}

const UNKNOWN_FIELD = 'unknown_field';
/** The validator's names of rules that the contract's errors name otherwise. */
const RENAMED_RULES: Record<string, string> = { additionalProperties: UNKNOWN_FIELD };

/** `required.openapi.validation` -> `required`. */
const issueType = (errorCode?: string) => {
  const rule = errorCode?.replace(/\.openapi\.(validation|requestValidation)$/, '') ?? 'invalid';
  return RENAMED_RULES[rule] ?? rule;
};

export function issuesFrom(err: ValidatorError): ValidationIssue[] {
  return oneIssuePerAlternatives(
    (err.errors ?? []).map((item) => ({
      loc: locationOf(item.path),
      msg: item.message,
      type: issueType(item.errorCode),
    })),
  );
}

const placeOf = (loc: ValidationIssue['loc']) => JSON.stringify(loc);
const isAlternatives = (issue: ValidationIssue) => issue.type === 'anyOf' || issue.type === 'oneOf';

/**
 * A value that matches none of its alternatives fails each one, and the validator reports them all
 * (`must be string`, `must be number`, ..., `must match a schema in anyOf`). The client gets, where
 * the first of them stood: the broken rules inside or on the value when it had a right type, or else
 * one issue naming the types it may have. One pass to group the issues by place, one to answer: a
 * body with thousands of bad values costs thousands of steps, not millions.
 */
function oneIssuePerAlternatives(issues: ValidationIssue[]): ValidationIssue[] {
  const atPlace = new Map<string, ValidationIssue[]>();
  const alternatives = new Set<string>();
  for (const issue of issues) {
    const place = placeOf(issue.loc);
    const here = atPlace.get(place);
    if (here) here.push(issue);
    else atPlace.set(place, [issue]);
    if (isAlternatives(issue)) alternatives.add(place);
  }
  if (!alternatives.size) return issues;
  // Places of alternatives with a problem inside the value (an array item, a property): its type was right.
  const withInnerProblem = new Set<string>();
  for (const issue of issues) {
    for (let depth = 1; depth < issue.loc.length; depth++) {
      const enclosing = placeOf(issue.loc.slice(0, depth));
      if (alternatives.has(enclosing)) withInnerProblem.add(enclosing);
    }
  }
  const settled = new Set<string>();
  return issues.flatMap((issue) => {
    const place = placeOf(issue.loc);
    if (!alternatives.has(place)) return [issue];
    if (settled.has(place)) return [];
    settled.add(place);
    return withInnerProblem.has(place) ? [] : issuesOfAlternatives(issue.loc, atPlace.get(place)!);
  });
}

/** The issues reported for a value of alternatives, from every issue found at its place. */
function issuesOfAlternatives(loc: ValidationIssue['loc'], here: ValidationIssue[]): ValidationIssue[] {
  const broken = here.filter((other) => other.type !== 'type' && !isAlternatives(other));
  if (broken.length) return broken;
  const types = here.filter((other) => other.type === 'type').map((other) => other.msg.replace(/^must be /, ''));
  if (!types.length) return here.filter(isAlternatives).slice(0, 1);
  const list = types.length > 1 ? `${types.slice(0, -1).join(', ')} or ${types.at(-1)}` : types[0];
  return [{ loc, msg: `must be ${list}`, type: 'type' }];
}

/**
 * An upload the multipart parser could not read (truncated, wrong boundary, a field over its limit): the
 * validator passes multer's and busboy's errors on as its own, without a rule's code.
 */
const isBrokenUpload = (err: ValidatorError, req: { headers: Record<string, unknown> }) =>
  String(req.headers['content-type'] ?? '').toLowerCase().startsWith('multipart/') &&
  (err.errors ?? []).every((item) => item.errorCode === undefined);

/** The validator's own statuses, mapped to the catalogue (its 400 is our 422). */
export function fromValidatorError(err: ValidatorError, req: { method: string; path: string; headers: Record<string, unknown> }) {
  if (isBrokenUpload(err, req)) {
    if (err.status === 413) {
      return errors.payloadTooLarge(
        err.message === 'File too large'
          ? `the upload is larger than ${MAX_UPLOAD_BYTES / 1024 / 1024} MB`
          : `the upload has too many files or parts (${err.message}): send one file`,
      );
    }
    return errors.invalid([{ loc: ['body'], msg: `the multipart body cannot be read: ${err.message}`, type: 'multipart_invalid' }]);
  }
  switch (err.status) {
    case 400:
      return errors.invalid(issuesFrom(err));
    case 404:
      return errors.routeNotFound(req.method, req.path);
    case 415:
      return errors.invalid([{ loc: ['header', 'Content-Type'], msg: err.message, type: 'unsupported_media_type' }]);
    case 413:
      return errors.payloadTooLarge(`the upload is larger than ${MAX_UPLOAD_BYTES / 1024 / 1024} MB`);
    default:
      return undefined;
  }
}
