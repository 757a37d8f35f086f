// What the helpers share: connection settings, and errors carrying the API's error body.
import type { components } from './schema.js';

/** Every error body the API answers with: `{detail}`, a 422's list of problems, OAuth's error. */
export type ErrorBody =
  | components['schemas']['Error']
  | components['schemas']['ValidationError']
  | components['schemas']['OAuthError'];

export interface ClientOptions {
  /** Where the API is, e.g. `https://api.example.com` (the server's PUBLIC_BASE_URL). */
  baseUrl: string;
  /** An API key (`spk_live_...`, `spk_test_...`) or an app's access token (`spk_at_...`). */
  apiKey?: string;
  /** Headers sent with every request (an admin token, a tracing header). */
  headers?: Record<string, string>;
  /** A fetch of your own (a proxy agent, a test double); default: the global fetch. */
  fetch?: typeof fetch;
}

/** The resolved connection settings the helpers share. */
export interface Connection {
  baseUrl: string;
  headers: Record<string, string>;
  fetch: typeof fetch;
}

export function connectionOf(options: ClientOptions): Connection {
  return {
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: { ...(options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : {}), ...options.headers },
    // Bound late: a test (or an app) may replace the global fetch after the client is made.
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
  };
}

/** An answer outside 2xx, with the API's error body as sent (typed by the operation when it comes from `unwrap`). */
export class ApiError<Body = ErrorBody> extends Error {
  constructor(
    readonly status: number,
    readonly body: Body,
    readonly headers: Headers,
  ) {
    super(`${status}: ${describe(body)}`);
    this.name = 'ApiError';
  }
}

function describe(body: unknown): string {
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) return detail.map((item) => `${(item.loc ?? []).join('.')}: ${item.msg}`).join('; ');
  return 'request failed';
}

interface FetchResult {
  data?: unknown;
  error?: unknown;
  response: Response;
}

/**
 * The data of a successful answer, or an `ApiError` whose `body` is the operation's documented error:
 * `const call = await unwrap(api.POST('/v1/calls', { body }))`.
 */
export async function unwrap<R extends FetchResult>(
  result: R | Promise<R>,
): Promise<Exclude<R['data'], undefined>> {
  const { data, error, response } = await result;
  if (!response.ok) throw new ApiError<Exclude<R['error'], undefined>>(response.status, error as never, response.headers);
  return data as Exclude<R['data'], undefined>;
}
