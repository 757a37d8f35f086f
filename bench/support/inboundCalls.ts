// Inbound phone calls for the media benchmark, made as Twilio and a contact centre make them: a test-mode
// number of the organization; for each caller, Twilio's signed request to the number's Voice URL (the
// `twilio` package computes the signature, as Twilio's own libraries check it), whose TwiML names the
// caller's media stream and its token; the agent's side joined with the link `call.inbound` carries.
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { getExpectedTwilioSignature } from 'twilio/lib/webhooks/webhooks.js';
import type { PhoneTarget } from '../mediaLoad.js';
import type { SideJoin } from './testCalls.js';

export interface InboundCall {
  agent: SideJoin;
  phone: PhoneTarget;
}

/**
 * `count` callers of a new test-mode number of organization `orgId` (one customer language: no menu),
 * 20 at a time. `db` is the server's, where the `call.inbound` events are read (the routing an
 * organization runs on its event stream or webhooks).
 */
export async function callInbound(baseUrl: string, admin: string, orgId: string, key: string, db: Knex, count: number): Promise<InboundCall[]> {
  const api = async (path: string, token: string, method: string, body?: unknown) => {
    const res = await fetch(baseUrl + path, {
      method,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, any>;
  };
  const account = { account_sid: `AC${randomBytes(16).toString('hex')}`, auth_token: randomBytes(16).toString('hex') };
  await api(`/admin/orgs/${orgId}/telephony`, admin, 'PUT', { ...account, from_number: '+15005550006' });
  const number = await api('/v1/phone_numbers', key, 'POST', { number: '+14155550100', mode: 'new_call', agent_language: 'en', customer_languages: ['fi'] });
  const voiceUrl: string = number.voice_url;
  const wsBase = baseUrl.replace(/^http/, 'ws');

  const ring = async (index: number): Promise<InboundCall> => {
    const callSid = `CA${randomBytes(16).toString('hex')}`;
    const params = { AccountSid: account.account_sid, CallSid: callSid, CallStatus: 'ringing', Direction: 'inbound', From: `+358400${String(index).padStart(6, '0')}`, To: number.number };
    const res = await fetch(baseUrl + new URL(voiceUrl).pathname, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Twilio-Signature': getExpectedTwilioSignature(account.auth_token, voiceUrl, params) },
      body: new URLSearchParams(params),
    });
    const twiml = await res.text();
    const stream = /<Stream url="([^"]+)"><Parameter name="token" value="([^"]+)"/.exec(twiml);
    if (!res.ok || !stream) throw new Error(`the Voice webhook answered ${res.status}: ${twiml}`);
    const event = await db('events').where({ type: 'call.inbound' }).whereRaw("payload->'data'->>'twilio_call_sid' = ?", [callSid]).first();
    const data = (typeof event.payload === 'string' ? JSON.parse(event.payload) : event.payload).data;
    const agentKey = String(data.agent_url).split('#k=')[1]!;
    const agentRes = await fetch(`${baseUrl}/calls/public/${data.id}`, { headers: { 'X-Call-Key': agentKey } });
    if (!agentRes.ok) throw new Error(`joining the agent: ${agentRes.status}`);
    return { agent: (await agentRes.json()) as SideJoin, phone: { url: `${wsBase}${new URL(stream[1]!).pathname}`, token: stream[2]! } };
  };

  const calls: InboundCall[] = [];
  for (let i = 0; i < count; i += 20) calls.push(...(await Promise.all(Array.from({ length: Math.min(20, count - i) }, (_, j) => ring(i + j)))));
  return calls;
}
