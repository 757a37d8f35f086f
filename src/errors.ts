// The error catalogue: every error a client can see, with its status and stable message.

export interface ValidationIssue {
  loc: Array<string | number>;
  msg: string;
  type: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string | ValidationIssue[],
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof detail === 'string' ? detail : 'request validation failed');
    this.name = 'ApiError';
  }
}

/** Streams do not end on a schedule: a client refused for holding too many may look again after this. */
const STREAM_RETRY_AFTER_SECONDS = 30;

export const errors = {
  badRequest: (detail: string) => new ApiError(400, detail),
  missingCredentials: () =>
    new ApiError(401, 'missing API key: send Authorization: Bearer <key> or X-Api-Key: <key>'),
  invalidApiKey: () => new ApiError(401, 'invalid API key: unknown, revoked or expired'),
  invalidAdminToken: () => new ApiError(401, 'invalid admin token'),
  invalidCallKey: () => new ApiError(401, 'missing or invalid X-Call-Key for this call'),
  invalidChatKey: () => new ApiError(401, 'missing or invalid X-Chat-Key: this chat link is no longer valid'),
  paymentRequired: () => new ApiError(402, 'the prepaid balance has run out; add credit to continue'),
  insufficientBalance: (cost: string, available: string) =>
    new ApiError(
      402,
      `this request costs ${cost} and the prepaid balance has ${available} available (money held by requests in progress is not); add credit to continue`,
    ),
  missingScope: (scope: string) => new ApiError(403, `missing scope: ${scope}`),
  notFound: (what = 'resource') => new ApiError(404, `${what} not found`),
  routeNotFound: (method: string, path: string) => new ApiError(404, `no such endpoint: ${method} ${path}`),
  methodNotAllowed: (method: string, allowed: string[]) =>
    new ApiError(405, `method ${method} is not allowed here; allowed: ${allowed.join(', ')}`, {
      Allow: allowed.join(', '),
    }),
  conflict: (detail: string) => new ApiError(409, detail),
  payloadTooLarge: (detail: string) => new ApiError(413, detail),
  invalid: (issues: ValidationIssue[]) => new ApiError(422, issues),
  rateLimited: (limit: number, retryAfterSeconds: number) =>
    new ApiError(429, `rate limit of ${limit} requests per minute exceeded; retry after ${retryAfterSeconds} seconds`, {
      'Retry-After': String(retryAfterSeconds),
    }),
  tooManyFailedAttempts: (retryAfterSeconds: number) =>
    new ApiError(429, `too many failed attempts from your address; retry after ${retryAfterSeconds} seconds`, {
      'Retry-After': String(retryAfterSeconds),
    }),
  tooManyStreams: (holder: 'API key' | 'chat session', limit: number) =>
    new ApiError(429, `too many open event streams for this ${holder} (at most ${limit}); close one before opening another`, {
      'Retry-After': String(STREAM_RETRY_AFTER_SECONDS),
    }),
  // Answered by the HTTP server itself, before a request reaches the app.
  malformedRequest: () => new ApiError(400, 'malformed HTTP request'),
  requestTimeout: () => new ApiError(408, 'the request did not arrive in time; send it again'),
  headersTooLarge: () => new ApiError(431, 'the request headers are too large'),
  internal: (requestId: string) =>
    new ApiError(500, `internal error; quote request id ${requestId} to the operator`),
  notImplemented: (operationId: string) => new ApiError(501, `${operationId} is not implemented yet`),
  upstream: (detail: string) => new ApiError(502, detail),
  unavailable: (detail: string) => new ApiError(503, detail),
};
