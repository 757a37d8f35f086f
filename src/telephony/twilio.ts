// Twilio's REST API through the `twilio` package: place a call whose TwiML connects a two-way media
// stream, and hang a call up. Failures become two kinds: Twilio refused the request (4xx: a number it
// will not call, a wrong account) or Twilio could not be reached or failed (5xx, network), retried a
// bounded number of times where a retry cannot ring a phone twice.
//
// Errors of the HTTP client carry the request, Basic auth included: nothing here logs or rethrows one;
// only status, Twilio's code and Twilio's message travel on.
import type { ClientOpts } from 'twilio/lib/base/BaseTwilio.js';
import type { CallListInstance } from 'twilio/lib/rest/api/v2010/account/call.js';
import type TwilioVoiceResponse from 'twilio/lib/twiml/VoiceResponse.js';
import type { validateRequest } from 'twilio/lib/webhooks/webhooks.js';
import { requiredOnFirstUse } from '../lib/onFirstUse.js';
import { backoffDelay } from '../upstream/backoff.js';
import { attempts, shorten } from '../upstream/failureText.js';

/**
 * The parts of Twilio's SDK used here, typed from its own modules: the package's whole typing (every Twilio
 * product, about 200,000 lines) was two fifths of what the type check read.
 */
interface TwilioSdk {
  (accountSid: string, authToken: string, options: ClientOpts): { api: { baseUrl: string }; calls: CallListInstance };
  twiml: { VoiceResponse: typeof TwilioVoiceResponse };
  validateRequest: typeof validateRequest;
}

/** Twilio's SDK (a fifth of a second to load): on the first call placed or callback checked. */
const twilio = requiredOnFirstUse<TwilioSdk>('twilio');

export interface TwilioAccount {
  accountSid: string;
  authToken: string;
}

export interface NewPhoneCall {
  to: string;
  from: string;
  /** Inline TwiML: what the call does once answered. */
  twiml: string;
  statusCallback: string;
  /** Seconds to let the phone ring before giving up (`no-answer`). */
  ringTimeoutSeconds: number;
}

/** Twilio answered 4xx: the request cannot succeed as it is (Twilio's own message and code). */
export class TwilioRefused extends Error {
  constructor(
    readonly status: number,
    readonly code: number | undefined,
    readonly twilioMessage: string,
  ) {
    super(`Twilio refused the request (HTTP ${status}${code ? `, error ${code}` : ''}): ${twilioMessage}`);
    this.name = 'TwilioRefused';
  }
}

/** Twilio could not be reached, timed out or answered 5xx (after the retries allowed). */
export class TwilioUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TwilioUnavailable';
  }
}

export interface TwilioRestOptions {
  /** TWILIO_API_BASE_URL; undefined: Twilio's own. */
  baseUrl: string | undefined;
  /** Per attempt. */
  timeoutMs?: number;
  /** Retries after the first attempt for failures a retry may fix. */
  retries?: number;
  sleep?: (ms: number) => Promise<void>;
}

/** Network failures where the request never reached Twilio: retrying cannot place a second call. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

interface Failure {
  retry: boolean;
  error: TwilioRefused | TwilioUnavailable;
}

/** What a failed attempt means. `placing`: the request creates a call, so only a request Twilio surely did not act on is retried. */
function judge(err: unknown, placing: boolean): Failure {
  const failure = err as { status?: unknown; code?: unknown; message?: unknown };
  if (typeof failure.status === 'number') {
    const message = shorten(typeof failure.message === 'string' ? failure.message : '');
    const code = typeof failure.code === 'number' ? failure.code : undefined;
    if (failure.status >= 400 && failure.status < 500 && failure.status !== 429) {
      return { retry: false, error: new TwilioRefused(failure.status, code, message) };
    }
    return { retry: true, error: new TwilioUnavailable(`Twilio answered HTTP ${failure.status}${message ? `: ${message}` : ''}`) };
  }
  const code = typeof failure.code === 'string' ? failure.code : 'network error';
  return {
    retry: !placing || NOT_SENT.has(code),
    error: new TwilioUnavailable(`Twilio could not be reached (${code})`),
  };
}

export class TwilioRest {
  private readonly timeoutMs: number;
  private readonly retries: number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly options: TwilioRestOptions) {
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.retries = options.retries ?? 2;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  private client(account: TwilioAccount) {
    const client = twilio()(account.accountSid, account.authToken, { timeout: this.timeoutMs, autoRetry: false });
    if (this.options.baseUrl) client.api.baseUrl = this.options.baseUrl;
    return client;
  }

  private async withRetries<T>(placing: boolean, attempt: () => Promise<T>): Promise<T> {
    for (let n = 0; ; n++) {
      try {
        return await attempt();
      } catch (err) {
        const { retry, error } = judge(err, placing);
        if (!retry) throw error;
        if (n >= this.retries) throw new TwilioUnavailable(`${error.message} (${attempts(n + 1)})`);
        await this.sleep(backoffDelay(n + 1, { initialDelayMs: 200, maxDelayMs: 2_000 }));
      }
    }
  }

  /** Places the call; returns Twilio's call SID. */
  async placeCall(account: TwilioAccount, call: NewPhoneCall): Promise<string> {
    const client = this.client(account);
    const created = await this.withRetries(true, () =>
      client.calls.create({
        to: call.to,
        from: call.from,
        twiml: call.twiml,
        statusCallback: call.statusCallback,
        statusCallbackMethod: 'POST',
        statusCallbackEvent: ['ringing', 'answered', 'completed'],
        timeout: call.ringTimeoutSeconds,
      }),
    );
    return created.sid;
  }

  /** Ends the call whatever its state (ringing or answered); safe to repeat. */
  async hangUp(account: TwilioAccount, callSid: string): Promise<void> {
    const client = this.client(account);
    await this.withRetries(false, () => client.calls(callSid).update({ status: 'completed' }));
  }
}

export type VoiceResponse = TwilioVoiceResponse;

type Gather = ReturnType<VoiceResponse['gather']>;
type SayLanguage = NonNullable<Parameters<VoiceResponse['say']>[0] extends infer A ? (A extends { language?: infer L } ? L : never) : never>;

/** <Say language> of a text in a language Twilio speaks (an `xx-YY` tag of its list). */
export const sayIn = (verb: VoiceResponse | Gather, language: string, text: string) => verb.say({ language: language as SayLanguage }, text);

/** An empty TwiML answer of the `twilio` package, for a call's verbs. */
export const voiceResponse = (): VoiceResponse => new (twilio().twiml.VoiceResponse)();

/**
 * Connects the answered call to a two-way media stream at `streamUrl`. Twilio drops query strings from
 * stream URLs, so the stream's single-use token travels as a <Parameter>.
 */
export function connectStream(response: VoiceResponse, streamUrl: string, token: string): VoiceResponse {
  response.connect().stream({ url: streamUrl }).parameter({ name: 'token', value: token });
  return response;
}

/** TwiML that only connects the call to its media stream (a dialled phone's). */
export const streamTwiml = (streamUrl: string, token: string): string => connectStream(voiceResponse(), streamUrl, token).toString();

/** Twilio's X-Twilio-Signature check: HMAC-SHA1 with the auth token over the URL and the sorted form. */
export const validTwilioSignature = (authToken: string, signature: string, url: string, params: Record<string, string>) =>
  signature !== '' && twilio().validateRequest(authToken, signature, url, params);
