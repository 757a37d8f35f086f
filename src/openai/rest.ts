// The OpenAI SDK client the REST engines (text translation, transcription) share: timeouts, the SDK's
// own retries with backoff (408/409/429/5xx, connection errors, timeouts), and one description of a
// request that failed for good, naming the upstream status and how often it was asked.

import type OpenAI from 'openai';
import type { APIConnectionError } from 'openai';
import { onFirstUse } from '../lib/onFirstUse.js';
import { attempts, errorMessage, seconds, shorten } from '../upstream/failureText.js';

/** The SDK, loaded with the first request to OpenAI (its text and transcription engines share it). */
export const openAiSdk = onFirstUse(() => import('openai'));
type Sdk = Awaited<ReturnType<typeof openAiSdk>>;

export interface OpenAiRestOptions {
  apiKey: string;
  /** The SDK's base URL, `/v1` included (as the SDK's own OPENAI_BASE_URL): `https://api.openai.com/v1`. */
  baseUrl?: string;
  /** Per attempt. */
  timeoutMs: number;
  /** Retries after the first attempt. */
  maxRetries: number;
}

/** A request failed for good; `status` is the upstream's last HTTP status when it answered at all. */
export class OpenAiRequestError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    override readonly cause: unknown,
  ) {
    super(message);
    this.name = 'OpenAiRequestError';
  }
}

export interface OpenAiRest {
  /** Runs one SDK call (the SDK retries inside it); a failure becomes an OpenAiRequestError. */
  request<T>(call: (client: OpenAI) => Promise<T>): Promise<T>;
}

export function createOpenAiRest(options: OpenAiRestOptions): OpenAiRest {
  const client = onFirstUse(async () => {
    const { default: OpenAI } = await openAiSdk();
    return new OpenAI({ apiKey: options.apiKey, baseURL: options.baseUrl, timeout: options.timeoutMs, maxRetries: options.maxRetries });
  });
  return {
    async request(call) {
      const sdk = await openAiSdk();
      // Counts the HTTP attempts of this request, so that the final error can say how often the upstream
      // was asked: a client of its own whose fetch counts (no async context, which would slow every
      // promise of the process once used).
      const counter = { count: 0 };
      const counting = (await client()).withOptions({ fetch: countingFetch(counter) });
      try {
        return await call(counting);
      } catch (error) {
        throw describeFailure(sdk, error, counter.count || 1, options.timeoutMs);
      }
    },
  };
}

function countingFetch(counter: { count: number }): typeof fetch {
  return ((input: string | URL | Request, init?: RequestInit) => {
    // The SDK probes a custom fetch once with `data:,` (FormData support) before the first upload.
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (!url.startsWith('data:')) counter.count += 1;
    return fetch(input, init);
  }) as typeof fetch;
}

function describeFailure(sdk: Sdk, error: unknown, attemptCount: number, timeoutMs: number): OpenAiRequestError {
  const { APIConnectionError, APIConnectionTimeoutError, APIError } = sdk;
  // Subclasses of APIError first: a timeout and a connection failure carry no status.
  if (error instanceof APIConnectionTimeoutError) {
    return new OpenAiRequestError(`openai did not answer within ${seconds(timeoutMs)} (${attempts(attemptCount)})`, null, error);
  }
  if (error instanceof APIConnectionError) {
    return new OpenAiRequestError(`openai could not be reached after ${attempts(attemptCount)}: ${shorten(connectionCause(error))}`, null, error);
  }
  if (error instanceof APIError && typeof error.status === 'number') {
    const detail = error.error && typeof error.error === 'object' ? (error.error as { message?: unknown }).message : undefined;
    const text = typeof detail === 'string' && detail ? detail : error.message;
    return new OpenAiRequestError(`openai answered ${error.status} after ${attempts(attemptCount)}: ${shorten(text)}`, error.status, error);
  }
  return new OpenAiRequestError(`openai request failed: ${shorten(errorMessage(error))}`, null, error);
}

function connectionCause(error: APIConnectionError): string {
  const cause = (error as { cause?: unknown }).cause;
  const inner = cause instanceof Error ? ((cause as { cause?: unknown }).cause ?? cause) : undefined;
  return inner instanceof Error ? `${error.message} (${inner.message})` : error.message;
}
