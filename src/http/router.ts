import express, { type ErrorRequestHandler, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { AppContext } from './context.js';
import { errors } from '../errors.js';
import {
  authenticateAdmin,
  authenticateApi,
  authenticateCallKey,
  authenticateChatKey,
  presentedCredential,
  requireScope,
} from './authenticate.js';
import type { Answer, JsonAnswer, OperationEntry, UploadedFile } from './handler.js';
import { perCall, perPrincipal, perSession, rateLimit } from './rateLimit.js';
import { toApiError } from './errorHandler.js';
import { openEventStream } from './sse.js';
import { storableInput, storablePath } from './storableInput.js';
import { bodyBounds } from './bodyBounds.js';
import { contractValidator, documentedBody, documentedBodyTypes } from './validation.js';
import { matchTemplate, middlewareChain, pathTemplate, requestSegments, type PathTemplate } from './dispatch.js';
import { requestFingerprint, requestRefFor, runIdempotently } from '../idempotency/idempotency.js';
import { SerializedJson } from '../lib/serializedJson.js';

/**
 * Every operation of the contract, in the order a careful API answers: who are you (401), too many
 * requests (429), may you (403), is the request well-formed (422), then the handler.
 *
 * A request is handed to the first operation, in the contract's order, whose method and path it has
 * (HEAD is answered as GET, as Express routes did). A request no operation matches goes on (to the
 * pages, then to `unmatchedOperation`). The table of operations (handlers/operations.ts, generated) is
 * handed in by the composition root: the HTTP layer names no handler.
 */
export function operationsRouter(app: AppContext, operations: readonly OperationEntry[]): RequestHandler {
  const validate = contractValidator(app);
  const guards = {
    api: (op: OperationEntry) => [authenticateApi(app), rateLimit(app, perPrincipal), requireScope(op.scope!)],
    admin: () => [authenticateAdmin(app)],
    callKey: () => [authenticateCallKey(app), rateLimit(app, perCall)],
    chatKey: () => [authenticateChatKey(app), rateLimit(app, perSession)],
    // The app authenticates inside the grant (RFC 6749 2.3), whose errors have their own shape.
    oauthClient: () => [],
    none: () => [],
  } satisfies Record<OperationEntry['auth'], (op: OperationEntry) => RequestHandler[]>;

  const routes = templated(operations).map(({ op, template }) => {
    const body = documentedBody(op);
    const input = storableInput(op);
    const run = middlewareChain([
      ...bodyParsers(op),
      ...(template.segments.some((segment) => 'parameter' in segment) ? [storablePath] : []),
      ...guards[op.auth](op),
      ...(body ? [body] : []),
      ...validate.forOperation(op),
      ...(op.auth === 'oauthClient' ? [asOAuthError] : []),
      ...(input ? [input] : []),
      invoke(app, op),
    ]);
    return { op, method: op.method.toUpperCase(), template, run };
  });
  return (req, res, next) => {
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const segments = requestSegments(req.path);
    for (const route of routes) {
      if (route.method !== method) continue;
      const params = matchTemplate(route.template, segments);
      if (!params) continue;
      req.params = params;
      req.operationId = route.op.operationId;
      return route.run(req, res, next);
    }
    next();
  };
}

/** Every operation with its path split into segments, in the contract's order. */
const templated = (operations: readonly OperationEntry[]) => operations.map((op) => ({ op, template: pathTemplate(op.path) }));

// Large enough for a full translate request (50,000 characters of up to 4 bytes, plus JSON).
const JSON_BODY_LIMIT = '1mb';
const UTF8 = new Set(['utf-8', 'utf8']);

/**
 * The operation's JSON reader: UTF-8 only (RFC 8259 8.1), and the body's bounds counted on its bytes
 * before it is parsed (./bodyBounds.ts), so a body built to be big is refused without being parsed.
 */
function parseJson(op: OperationEntry): RequestHandler {
  const bounds = bodyBounds(op);
  return express.json({
    limit: JSON_BODY_LIMIT,
    verify: (_req, _res, bytes, encoding) => {
      if (!UTF8.has(encoding)) {
        throw errors.invalid([{ loc: ['header', 'Content-Type'], msg: `the charset ${encoding} is not supported; send utf-8`, type: 'unsupported_charset' }]);
      }
      const exceeded = bounds?.exceededInJson(bytes) ?? [];
      if (exceeded.length) throw errors.invalid(exceeded);
    },
  });
}
/** Form bodies: the contract's form operations and Twilio's webhooks. */
export const parseForm = express.urlencoded({ extended: false, limit: '64kb' });

/**
 * The parsers of the media types the operation takes, and no others: a GET pays for none. They run
 * first, as they did for every route before, so a broken body is answered the same way. Multipart
 * uploads are read by the validator's upload stage.
 */
function bodyParsers(op: OperationEntry): RequestHandler[] {
  const types = documentedBodyTypes(op);
  return [...(types.includes('application/json') ? [parseJson(op)] : []), ...(types.includes('application/x-www-form-urlencoded') ? [parseForm] : [])];
}

function invoke(app: AppContext, op: OperationEntry): RequestHandler {
  return async (req: Request, res: Response) => {
    const idempotencyKey = op.method === 'post' && req.principal ? req.get('idempotency-key') : undefined;
    const files = uploadedFiles(req);
    // Events the operation commits are published once its answer is out: the client is not kept waiting
    // for the fan-out to every stream. The operation sees the bus through the hold. An event stream's
    // answer lasts, so its hold ends when it starts.
    const publications = app.events.hold();
    // A client that left while its request was read or authenticated has had its 'close' already: a
    // hold waiting for it would keep every later event of the organization back for good.
    if (res.closed) publications.release();
    else res.once('close', publications.release);
    const principal = req.principal;
    // The clock is read through the server's own, not copied: what outlives the request (a stream's
    // timer for its key's end) reads the clock of the moment, which tests move.
    const requestApp: AppContext = {
      ...app,
      now: () => app.now(),
      events: publications.events,
      actingApp: principal?.kind === 'app' ? principal.appId : null,
    };
    const run = (requestRef: string | null) =>
      op.handler({
        app: requestApp,
        params: req.params,
        query: req.query,
        body: req.body,
        requestRef,
        accepts: (types) => req.accepts([...types]),
        principal,
        callSide: req.callSide,
        chat: req.chat,
        clientAuthorization: op.auth === 'oauthClient' ? (req.get('authorization') ?? null) : undefined,
        files,
      });
    if (!idempotencyKey) {
      const answer = await run(null);
      if ('eventStream' in answer) publications.release();
      await send(app, req, res, answer);
      return;
    }
    const principalKey = req.principal!.rateLimitKey;
    const request = {
      principalKey,
      idempotencyKey,
      fingerprint: requestFingerprint(req.method, req.path, req.body, Object.values(files).map((file) => file!.data)),
      credential: presentedCredential(req)!,
      instanceId: app.instanceId,
    };
    const answer = await runIdempotently(app.db, request, async () => {
      const result = await run(requestRefFor(principalKey, idempotencyKey));
      // What is stored to replay is the value: an answer already serialised is not.
      if (!isJson(result) || result.body instanceof SerializedJson) throw new Error(`${op.operationId} answers with more than JSON values and cannot be idempotent`);
      return result;
    });
    await send(app, req, res, answer.replayed ? { ...answer, headers: { 'Idempotent-Replayed': 'true' } } : answer);
  };
}

/** The files the contract validator's multipart parser left on the request, by field. */
function uploadedFiles(req: Request): Partial<Record<string, UploadedFile>> {
  const files = Array.isArray(req.files) ? req.files : [];
  return Object.fromEntries(
    files.map((file) => [file.fieldname, { data: file.buffer, mimeType: file.mimetype, filename: file.originalname }]),
  );
}

const isJson = (answer: Answer): answer is JsonAnswer => !('eventStream' in answer) && !('binary' in answer);

/** Writes a handler's answer: JSON (or nothing), bytes as they are, or an event stream it opens. */
async function send(app: AppContext, req: Request, res: Response, answer: Answer): Promise<void> {
  if ('eventStream' in answer) return openEventStream(app, req, res, answer.eventStream);
  if ('binary' in answer) {
    const { contentType, data, cacheControl } = answer.binary;
    res.status(answer.status).type(contentType);
    if (cacheControl) res.set('Cache-Control', cacheControl);
    res.send(data);
    return;
  }
  if (answer.headers) res.set(answer.headers);
  if (answer.body === undefined) res.status(answer.status).end();
  else if (!(answer.body instanceof SerializedJson)) res.status(answer.status).json(answer.body);
  // The contract's response validator (tests) checks values handed to res.json.
  else if (app.config.validateResponses) res.status(answer.status).json(JSON.parse(answer.body.bytes.toString()));
  else writeJsonBytes(req, res, answer.status, answer.body.bytes);
}

/**
 * Serialised JSON written as it is, with the headers res.json would send: Express's send would look
 * its type up and check the request's freshness (no ETags here) on every answer, for nothing.
 */
function writeJsonBytes(req: Request, res: Response, status: number, bytes: Buffer): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', bytes.length);
  res.end(req.method === 'HEAD' ? undefined : bytes);
}

/**
 * A request the OAuth endpoints cannot read is RFC 6749's `invalid_request` (400), in its shape, rather
 * than this API's 422; the problems found are its description.
 */
const asOAuthError: ErrorRequestHandler = (err, req, _res, next) => {
  const apiError = toApiError(err, req);
  if (apiError.status !== 422 && apiError.status !== 400) return next(apiError);
  const description =
    typeof apiError.detail === 'string' ? apiError.detail : apiError.detail.map((issue) => `${issue.loc.join('.')}: ${issue.msg}`).join('; ');
  next(errors.oauth(400, 'invalid_request', description));
};

/** JSON 404 for unknown paths and 405 (with Allow) for a known path with another method. */
export function unmatchedOperation(operations: readonly OperationEntry[]): RequestHandler {
  const templatedOperations = templated(operations);
  return (req: Request, _res: Response, next: NextFunction) => {
    const segments = requestSegments(req.path);
    const allowed = templatedOperations.filter(({ template }) => isPathOf(template, segments)).map(({ op }) => op.method.toUpperCase());
    next(allowed.length ? errors.methodNotAllowed(req.method, allowed) : errors.routeNotFound(req.method, req.path));
  };
}

/** Whether the path is the operation's (a parameter that is not valid percent-encoding still is). */
function isPathOf(template: PathTemplate, segments: string[]): boolean {
  try {
    return matchTemplate(template, segments) !== undefined;
  } catch {
    return true;
  }
}
