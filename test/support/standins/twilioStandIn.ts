// Twilio's REST API as the `twilio` package talks to it, for the calls this server makes: create a
// call (`POST /2010-04-01/Accounts/{AccountSid}/Calls.json`, form-encoded) and update one
// (`POST .../Calls/{CallSid}.json`, `Status=completed` hangs up). Basic auth must be the account SID
// and auth token, as Twilio checks it (401 with Twilio's error 20003 otherwise). A `To` listed in
// `refuse` gets Twilio's 400 with error 21211, one listed in `fail` a 500 (Twilio failing). Also signs status callbacks the way Twilio does.
import { createHmac, randomBytes } from 'node:crypto';
import { startStandInServer, type RecordedRequest, type StandInServer } from './standInServer.js';

export interface TwilioStandIn extends StandInServer {
  readonly accountSid: string;
  readonly authToken: string;
  /** Numbers Twilio refuses as invalid (21211). */
  readonly refuse: Set<string>;
  /** Numbers whose calls Twilio fails to create (500, error 20500). */
  readonly fail: Set<string>;
  /** The form of every call created, by SID (repeated fields kept). */
  readonly created: Map<string, URLSearchParams>;
  /** SIDs hung up (Status=completed), in order. */
  readonly hungUp: string[];
}

const twilioError = (status: number, code: number, message: string) => ({
  code,
  message,
  more_info: `https://www.twilio.com/docs/errors/${code}`,
  status,
});

export async function startTwilioStandIn(): Promise<TwilioStandIn> {
  const accountSid = `AC${randomBytes(16).toString('hex')}`;
  const authToken = randomBytes(16).toString('hex');
  const refuse = new Set<string>();
  const fail = new Set<string>();
  const created = new Map<string, URLSearchParams>();
  const hungUp: string[] = [];
  const base = `/2010-04-01/Accounts/${accountSid}/Calls`;

  const authorized = (request: RecordedRequest) =>
    request.headers.authorization === `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`;

  const server = await startStandInServer((request) => {
    if (!authorized(request)) return { status: 401, body: twilioError(401, 20003, 'Authenticate') };
    if (request.method === 'POST' && request.path === `${base}.json`) {
      const form = request.form!;
      const to = form.get('To') ?? '';
      if (refuse.has(to)) return { status: 400, body: twilioError(400, 21211, `The 'To' number ${to} is not a valid phone number.`) };
      if (fail.has(to)) return { status: 500, body: twilioError(500, 20500, 'An internal server error has occurred') };
      const sid = `CA${randomBytes(16).toString('hex')}`;
      created.set(sid, form);
      return {
        status: 201,
        body: { sid, account_sid: accountSid, to, from: form.get('From'), status: 'queued', direction: 'outbound-api', api_version: '2010-04-01', uri: `${base}/${sid}.json` },
      };
    }
    const update = new RegExp(`^${base}/(CA[0-9a-f]{32})\\.json$`).exec(request.path);
    if (request.method === 'POST' && update) {
      const sid = update[1];
      if (!created.has(sid)) return { status: 404, body: twilioError(404, 20404, 'The requested resource was not found') };
      if (request.form?.get('Status') === 'completed') hungUp.push(sid);
      return { status: 200, body: { sid, account_sid: accountSid, status: 'completed', uri: `${base}/${sid}.json` } };
    }
    return { status: 404, body: twilioError(404, 20404, 'The requested resource was not found') };
  }, (status) => twilioError(status, 20500, 'An internal server error has occurred'));

  const resetServer = server.reset.bind(server);
  return Object.assign(server, {
    accountSid,
    authToken,
    refuse,
    fail,
    created,
    hungUp,
    /** Also forgets created calls, hang-ups, refused and failing numbers. */
    reset() {
      resetServer();
      refuse.clear();
      fail.clear();
      created.clear();
      hungUp.length = 0;
    },
  });
}

/** X-Twilio-Signature as Twilio computes it: base64 HMAC-SHA1 over the URL then each sorted name and value. */
export function twilioSignature(authToken: string, url: string, params: Record<string, string>): string {
  const data = Object.keys(params)
    .sort()
    .reduce((text, name) => text + name + params[name], url);
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

export interface IncomingCallOptions {
  /** The number's Voice URL as registered (under PUBLIC_BASE_URL): what Twilio requests and signs. */
  voiceUrl: string;
  /** Where the server really listens: the public origin of every URL is replaced by this one. */
  serverUrl: string;
  from: string;
  to: string;
  /** Twilio's `FromCountry` (ISO 3166 alpha-2); omitted when undefined. */
  fromCountry?: string;
  /** Signs with this auth token instead of the account's (a forged request). */
  authToken?: string;
}

/**
 * A call Twilio puts through to a number's Voice webhook, as Twilio drives it: the first request with
 * the call's parameters, signed; then, for each <Gather>, its action requested with the same parameters
 * plus `Digits` (also when nothing was typed: the server asks for `actionOnEmptyResult`). The call's SID
 * is one the stand-in knows, so the server may hang it up through the REST API.
 */
export class IncomingCall {
  readonly callSid = `CA${randomBytes(16).toString('hex')}`;
  /** Every answer of the server: status and TwiML text. */
  readonly answers: { status: number; twiml: string }[] = [];
  private readonly params: Record<string, string>;

  constructor(
    private readonly twilio: TwilioStandIn,
    private readonly options: IncomingCallOptions,
  ) {
    twilio.created.set(this.callSid, new URLSearchParams({ To: options.to, From: options.from, Direction: 'inbound' }));
    this.params = {
      AccountSid: twilio.accountSid,
      ApiVersion: '2010-04-01',
      CallSid: this.callSid,
      CallStatus: 'ringing',
      Called: options.to,
      Caller: options.from,
      Direction: 'inbound',
      From: options.from,
      To: options.to,
      ...(options.fromCountry ? { FromCountry: options.fromCountry, CallerCountry: options.fromCountry } : {}),
    };
  }

  /** The last TwiML answer. */
  get twiml(): string {
    return this.answers.at(-1)?.twiml ?? '';
  }

  /** Twilio's first request: the call comes in. */
  ring(): Promise<{ status: number; twiml: string }> {
    return this.request(this.options.voiceUrl, this.params);
  }

  /** The caller typed `digits` (or nothing) at the last answer's <Gather>: Twilio requests its action. */
  press(digits = ''): Promise<{ status: number; twiml: string }> {
    const action = /<Gather [^>]*action="([^"]+)"/.exec(this.twiml)?.[1];
    if (!action) throw new Error(`no <Gather> in the last answer: ${this.twiml}`);
    return this.request(action.replace(/&amp;/g, '&'), { ...this.params, CallStatus: 'in-progress', Digits: digits });
  }

  /** Twilio reports the call's status to the number's status callback URL (as registered, signed over it). */
  status(statusCallbackUrl: string, callStatus: string): Promise<{ status: number; twiml: string }> {
    return this.request(statusCallbackUrl, { ...this.params, CallStatus: callStatus, ...(callStatus === 'completed' ? { CallDuration: '42' } : {}) });
  }

  /** The <Stream> of the last answer: its URL on the server and its token parameter. */
  stream(): { url: string; token: string } {
    const url = new URL(/<Stream url="([^"]+)"/.exec(this.twiml)![1]);
    const server = new URL(this.options.serverUrl);
    return { url: `${server.protocol === 'https:' ? 'wss' : 'ws'}://${server.host}${url.pathname}`, token: /<Parameter name="token" value="([^"]+)"/.exec(this.twiml)![1] };
  }

  /** The last request sent again, byte for byte (a replay by someone who saw it). */
  replay(): Promise<{ status: number; twiml: string }> {
    if (!this.last) throw new Error('nothing sent yet');
    return this.request(this.last.url, this.last.params);
  }

  private last?: { url: string; params: Record<string, string> };

  private async request(url: string, params: Record<string, string>) {
    this.last = { url, params };
    const target = new URL(url);
    const res = await fetch(`${this.options.serverUrl}${target.pathname}${target.search}`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        'X-Twilio-Signature': twilioSignature(this.options.authToken ?? this.twilio.authToken, url, params),
        'User-Agent': 'TwilioProxy/1.1',
      },
      body: new URLSearchParams(params),
    });
    const answer = { status: res.status, twiml: await res.text() };
    this.answers.push(answer);
    return answer;
  }
}
