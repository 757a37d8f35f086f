// The typed shape of an operation handler, derived from the generated contract types.
import type { Request, Response } from 'express';
import type { operations } from '../generated/api.js';
import type { AppContext } from '../appContext.js';
import type { ApiPrincipal } from '../auth/principal.js';
import { errors } from '../errors.js';

export type OperationId = keyof operations;
type Op<K extends OperationId> = operations[K];

/** `never` (no such part in the contract) becomes an empty object, so handlers can destructure. */
type Present<T> = [T] extends [never] ? Record<string, never> : [T] extends [undefined] ? Record<string, never> : NonNullable<T>;

export type PathParams<K extends OperationId> = Present<Op<K>['parameters']['path']>;
export type QueryParams<K extends OperationId> = Present<Op<K>['parameters']['query']>;

type BodyContent<K extends OperationId> = Op<K> extends { requestBody?: { content: infer C } } ? C : never;
export type RequestBody<K extends OperationId> = BodyContent<K> extends { 'application/json': infer B }
  ? B
  : BodyContent<K> extends { 'application/x-www-form-urlencoded': infer B }
    ? B
    : BodyContent<K> extends { 'multipart/form-data': infer B }
      ? B
      : undefined;

type SuccessStatus<K extends OperationId> = Extract<keyof Op<K>['responses'], 200 | 201 | 204>;
type ResponseBody<R> = R extends { content: { 'application/json': infer B } } ? B : undefined;

/** What a handler returns: one of the operation's documented success answers. */
export type HandlerResult<K extends OperationId> = {
  [S in SuccessStatus<K>]: { status: S; body: ResponseBody<Op<K>['responses'][S]>; headers?: Record<string, string> };
}[SuccessStatus<K>];

/** A handler that wrote the response itself (event streams, audio). */
export interface SentByHandler {
  sent: true;
}

export interface HandlerInput<K extends OperationId> {
  app: AppContext;
  params: PathParams<K>;
  query: QueryParams<K>;
  body: RequestBody<K>;
  /** The API key or app behind a /v1 request; absent on public and admin operations. */
  principal: ApiPrincipal | undefined;
  /** Set when the request carries an Idempotency-Key: ties charges to the request so a retry pays once. */
  requestRef: string | null;
  req: Request;
  res: Response;
}

export type Handler<K extends OperationId> = (input: HandlerInput<K>) => Promise<HandlerResult<K> | SentByHandler>;

export function defineHandler<K extends OperationId>(handler: Handler<K>): Handler<K> {
  return handler;
}

/** The principal of an operation that requires an API key; the router guarantees it is there. */
export function requirePrincipal(principal: ApiPrincipal | undefined): ApiPrincipal {
  if (!principal) throw new Error('operation needs an authenticated principal');
  return principal;
}

/** The call side of a public call operation; the router authenticated X-Call-Key before the handler. */
export function requireCallSide(req: Request): NonNullable<Request['callSide']> {
  if (!req.callSide) throw new Error('operation needs an authenticated call side');
  return req.callSide;
}

/** The session of a customer chat operation; the router authenticated X-Chat-Key before the handler. */
export function requireChatSession(req: Request): NonNullable<Request['chatSession']> {
  if (!req.chatSession) throw new Error('operation needs an authenticated chat session');
  return req.chatSession;
}

/** Placeholder that codegen writes for an operation nobody has implemented yet. */
export function notImplemented(operationId: string): Handler<OperationId> {
  return async () => {
    throw errors.notImplemented(operationId);
  };
}

export interface OperationEntry {
  operationId: string;
  method: 'get' | 'put' | 'post' | 'delete' | 'patch';
  path: string;
  expressPath: string;
  tag: string;
  scope: string | null;
  auth: 'api' | 'callKey' | 'chatKey' | 'admin' | 'none';
  // Method syntax on purpose: each handler is typed against its own operation, and the table, which
  // only calls it with what the validator let through, accepts them all.
  handler(input: UntypedHandlerInput): Promise<{ status: number; body?: unknown; headers?: Record<string, string> } | SentByHandler>;
}

interface UntypedHandlerInput {
  app: AppContext;
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  body: unknown;
  principal: ApiPrincipal | undefined;
  requestRef: string | null;
  req: Request;
  res: Response;
}
