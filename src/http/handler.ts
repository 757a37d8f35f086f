// The typed shape of an operation handler, derived from the generated contract types: its input is what
// the router resolved for the operation (by how the contract authenticates it), its result one of the
// operation's documented answers. Handlers never see the request or the response: only the HTTP
// layer reads headers and writes JSON, bytes and event streams.
import type { AppContext } from './context.js';
import type { ApiPrincipal } from '../auth/principal.js';
import type { CallRow, Side } from '../calls/calls.js';
import type { operations } from '../generated/api.js';
import type { OperationInputs } from '../generated/operationInputs.js';
import type { EventStream } from '../events/stream.js';
import type { SessionRow } from '../sessions/sessions.js';
import type { SerializedJson } from '../lib/serializedJson.js';

export type OperationId = keyof operations & keyof OperationInputs;
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

/** The call and side whose X-Call-Key a public call request carries. */
export interface CallSide {
  call: CallRow;
  side: Side;
}

/** The session whose X-Chat-Key a customer chat request carries, and the hash of that key. */
export interface ChatAccess {
  session: SessionRow;
  keyHash: string;
}

/** A file of a multipart upload, as received. */
export interface UploadedFile {
  data: Buffer;
  mimeType: string;
  /** The name the client gave it; may be empty. */
  filename: string;
}

/** What the router resolved before the handler runs, by how the contract authenticates the operation. */
interface ResolvedBy {
  /** The API key or app behind a /v1 request. */
  api: { principal: ApiPrincipal };
  callKey: { callSide: CallSide };
  chatKey: { chat: ChatAccess };
  /** The OAuth endpoints: the app's `Authorization` header (HTTP Basic), if it sent one. */
  oauthClient: { clientAuthorization: string | null };
  admin: Record<never, never>;
  none: Record<never, never>;
}

type FileFields<K extends OperationId> = OperationInputs[K]['files'];
/** The operation's uploaded files by field; only operations whose contract takes files have them. */
type Uploads<K extends OperationId> = [FileFields<K>] extends [never]
  ? Record<never, never>
  : { files: { [F in FileFields<K>]?: UploadedFile } };

export type HandlerInput<K extends OperationId> = {
  app: AppContext;
  params: PathParams<K>;
  query: QueryParams<K>;
  body: RequestBody<K>;
  /** Set when the request carries an Idempotency-Key: ties charges to the request so a retry pays once. */
  requestRef: string | null;
  /** Of the media types an answer can take, the one the request's Accept prefers (the first without one); false: none. */
  accepts(types: readonly string[]): string | false;
} & ResolvedBy[OperationInputs[K]['auth']] &
  Uploads<K>;

/** Bytes answered as they are (a recording), with their type and how long a client may keep them. */
export interface BinaryContent {
  contentType: string;
  data: Buffer;
  cacheControl?: string;
}

type SuccessStatus<K extends OperationId> = Extract<keyof Op<K>['responses'], 200 | 201 | 204>;

/**
 * The answer a documented success response allows: JSON (as a value, or already serialised), no
 * body, bytes, or an event stream (always 200).
 */
type AnswerTo<S, R> = R extends { content: infer C }
  ? C extends { 'application/json': infer B }
    ?
        | { status: S; body: B | SerializedJson<B>; headers?: Record<string, string> }
        | (Exclude<keyof C, 'application/json'> extends never ? never : { status: S; binary: BinaryContent })
    : C extends { 'text/event-stream': unknown }
      ? { eventStream: EventStream }
      : { status: S; binary: BinaryContent }
  : { status: S; body: undefined; headers?: Record<string, string> };

/** What a handler returns: one of the operation's documented success answers. */
export type HandlerResult<K extends OperationId> = {
  [S in SuccessStatus<K>]: AnswerTo<S, Op<K>['responses'][S]>;
}[SuccessStatus<K>];

export type Handler<K extends OperationId> = (input: HandlerInput<K>) => Promise<HandlerResult<K>>;

export function defineHandler<K extends OperationId>(handler: Handler<K>): Handler<K> {
  return handler;
}

/** Any operation's answer, as the router writes it. */
export type Answer = JsonAnswer | { status: number; binary: BinaryContent } | { eventStream: EventStream };
export interface JsonAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface OperationEntry {
  operationId: string;
  method: 'get' | 'put' | 'post' | 'delete' | 'patch';
  path: string;
  tag: string;
  scope: string | null;
  auth: 'api' | 'callKey' | 'chatKey' | 'admin' | 'oauthClient' | 'none';
  // Method syntax on purpose: each handler is typed against its own operation, and the table, which
  // only calls it with what the validator and the guards let through, accepts them all.
  handler(input: UntypedHandlerInput): Promise<Answer>;
}

export interface UntypedHandlerInput {
  app: AppContext;
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  body: unknown;
  requestRef: string | null;
  accepts(types: readonly string[]): string | false;
  principal?: ApiPrincipal;
  callSide?: CallSide;
  chat?: ChatAccess;
  clientAuthorization?: string | null;
  files?: Partial<Record<string, UploadedFile>>;
}
