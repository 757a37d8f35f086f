// Incoming phone calls (DESIGN §13): Twilio posts a call to one of the organization's numbers to the
// number's Voice URL, signed with X-Twilio-Signature (the connector's auth token; 403 otherwise), and
// this answers TwiML. A `new_call` number offers a language menu when it has several customer
// languages, creates a call with the phone as its customer, announces it (`call.inbound`, with the
// agent's link, for the organization's routing) and connects the phone's media stream exactly as for a
// dialled phone; a `pin` number asks for the PIN of a side of an open call and connects that side. The
// media stream then enters through the Twilio transport with the leg's single-use token, as a dialled
// leg's does. Whatever cannot go on is told to the caller in the caller's language where it is known,
// then hung up: Twilio never gets an error where it expects TwiML (its caller would hear "an
// application error has occurred").
import { isLive, type Payer } from '../auth/principal.js';
import { ApiError, errors } from '../errors.js';
import { serverMade, withEvents } from '../events/log.js';
import { newId, newSecret } from '../lib/ids.js';
import { fundedPayer } from '../money/index.js';
import { connectStream, sayIn, validTwilioSignature, voiceResponse, type VoiceResponse } from '../telephony/twilio.js';
import {
  callEvent,
  createCall,
  findCallById,
  languageOf,
  presentCall,
  updateSideSettings,
  type CallDeps,
  type CallRow,
  type Side,
} from './calls.js';
import { recordLeg, twilioStreamUrl } from './dial.js';
import { countryLanguage, ownName, phrase, type Phrase } from './inboundPhrases.js';
import { isReady } from './join.js';
import { advanceLeg, hangUpLegs, twilioAccountOf, type PhoneLegRow, type TelephonyDeps } from './phoneLegs.js';
import { findPhoneNumberById, findPin, inboundStatusUrl, voiceUrl, PIN_DIGITS, type PhoneNumberRow } from './phoneNumbers.js';

export interface InboundDeps extends TelephonyDeps, Omit<CallDeps, 'config'> {
  config: CallDeps['config'];
  /** Why live calls cannot be interpreted now (no engine configured), or undefined when they can. */
  liveInterpretationMissing: () => string | undefined;
}

/** Where Twilio is in a number's conversation: the incoming call, or the answer to a menu or PIN prompt (the how-many-th). */
export type VoiceStep = { at: 'incoming' } | { at: 'language' | 'pin'; attempt: number };

/** Menus and PIN prompts are offered this many times; then the first language, or a hang-up. */
export const MAX_ATTEMPTS = 3;
/** Seconds Twilio waits for keys after a prompt. */
const GATHER_TIMEOUT_SECONDS = 6;

/** The URL of a step: what Twilio requests and signs, so it is built here only. */
export const voiceStepUrl = (publicBaseUrl: string, numberId: string, step: VoiceStep) =>
  step.at === 'incoming' ? voiceUrl(publicBaseUrl, numberId) : `${voiceUrl(publicBaseUrl, numberId)}/${step.at}/${step.attempt}`;

/** Twilio's form fields this reads. */
type VoiceParams = Record<string, string | undefined>;

const say = (response: VoiceResponse, language: string | undefined, key: Phrase) => {
  const spoken = phrase(language, key);
  sayIn(response, spoken.say, spoken.text);
  return response;
};

/** A short reason, then the hang-up. */
function goodbye(language: string | undefined, key: Phrase): VoiceResponse {
  const response = say(voiceResponse(), language, key);
  response.hangup();
  return response;
}

/**
 * The TwiML answer to Twilio's request for `step` of a call to number `numberId`. A request that is not
 * Twilio's for this number's organization is 403; everything else is TwiML.
 */
export async function answerIncomingCall(deps: InboundDeps, numberId: string, step: VoiceStep, signature: string, params: VoiceParams): Promise<string> {
  const number = await findPhoneNumberById(deps.db, numberId);
  const found = number && (await twilioAccountOf(deps, number.org_id));
  // Nothing to check the signature with: a number this server does not know (deleted, or never made).
  if (!number || !found) return goodbye(undefined, 'unknown_number').toString();
  const url = voiceStepUrl(deps.config.publicBaseUrl, number.id, step);
  if (!validTwilioSignature(found.account.authToken, signature, url, params as Record<string, string>)) throw errors.invalidTwilioSignature();
  const callerLanguage = countryLanguage(params.FromCountry);
  try {
    const response = number.answering === 'pin' ? await answerPin(deps, number, step, params, callerLanguage) : await answerNewCall(deps, number, step, params, callerLanguage);
    return response.toString();
  } catch (err) {
    deps.logger.error({ err, phone_number_id: number.id, twilio_call_sid: params.CallSid }, 'telephony: answering an incoming call failed');
    return goodbye(number.customer_languages?.[0] ?? callerLanguage, 'unavailable').toString();
  }
}

// ---- new_call ------------------------------------------------------------------------------------

async function answerNewCall(deps: InboundDeps, number: PhoneNumberRow, step: VoiceStep, params: VoiceParams, callerLanguage: string | undefined) {
  const languages = number.customer_languages ?? [];
  if (step.at === 'incoming') {
    if (languages.length > 1) return menu(deps, number, languages, 1);
    return startCall(deps, number, languages[0] ?? callerLanguage ?? number.agent_language, params);
  }
  const digit = params.Digits ?? '';
  const chosen = /^[1-9]$/.test(digit) ? languages[Number(digit) - 1] : undefined;
  if (chosen) return startCall(deps, number, chosen, params);
  const attempt = step.at === 'language' ? step.attempt : MAX_ATTEMPTS;
  if (attempt < MAX_ATTEMPTS && languages.length > 1) return menu(deps, number, languages, attempt + 1);
  return startCall(deps, number, languages[0] ?? callerLanguage ?? number.agent_language, params);
}

/** Each language offered in itself, with its key; no key (or a wrong one) asks again. */
function menu(deps: InboundDeps, number: PhoneNumberRow, languages: string[], attempt: number) {
  const response = voiceResponse();
  const gather = response.gather({
    input: ['dtmf'],
    numDigits: 1,
    timeout: GATHER_TIMEOUT_SECONDS,
    action: voiceStepUrl(deps.config.publicBaseUrl, number.id, { at: 'language', attempt }),
    method: 'POST',
    actionOnEmptyResult: true,
  });
  languages.forEach((language, index) => {
    const spoken = phrase(language, 'menu', { language: ownName(language), digit: String(index + 1) });
    sayIn(gather, spoken.say, spoken.text);
  });
  return response;
}

/** Money and an engine: what a live call needs before a phone is put through; the reason otherwise. */
async function cannotStart(deps: InboundDeps, payer: Payer): Promise<Phrase | undefined> {
  if (isLive(payer) && deps.liveInterpretationMissing()) return 'unavailable';
  try {
    await fundedPayer(deps.db, payer);
  } catch (err) {
    if (err instanceof ApiError && err.status === 402) return 'no_balance';
    throw err;
  }
  return undefined;
}

/**
 * A phone call Twilio put through already (its SID has a leg): the request is a replay, which Twilio's
 * signature alone cannot tell (it has no time in it). It starts nothing.
 */
const putThroughAlready = async (deps: InboundDeps, params: VoiceParams) =>
  (await deps.db('phone_legs').where({ twilio_call_sid: requiredCallSid(params) }).first('id')) !== undefined;

async function startCall(deps: InboundDeps, number: PhoneNumberRow, language: string, params: VoiceParams) {
  if (await putThroughAlready(deps, params)) return goodbye(language, 'call_ended');
  const payer: Payer = { orgId: number.org_id, mode: number.mode };
  const refusal = await cannotStart(deps, payer);
  if (refusal) return goodbye(language, refusal);
  const created = await createCall(deps, payer, {
    agent_language: number.agent_language,
    agent_name: number.agent_name,
    customer_language: language,
    metadata: number.metadata,
    video: false,
  });
  const call = (await findCallById(deps.db, created.id))!;
  const sid = requiredCallSid(params);
  const token = await putThrough(deps, call, 'customer', params);
  await withEvents(serverMade(deps), (_trx, emit) =>
    emit(
      callEvent(call, 'call.inbound', {
        ...presentCall(call),
        caller: params.From || 'anonymous',
        phone_number: number.number,
        phone_number_id: number.id,
        twilio_call_sid: sid,
        agent_url: created.agent_url,
      }),
    ),
  );
  return connect(deps, language, call, 'customer', token);
}

// ---- pin -----------------------------------------------------------------------------------------

async function answerPin(deps: InboundDeps, number: PhoneNumberRow, step: VoiceStep, params: VoiceParams, callerLanguage: string | undefined) {
  const promptLanguage = number.customer_languages?.[0] ?? callerLanguage ?? number.agent_language;
  if (step.at !== 'pin') return pinPrompt(deps, number, promptLanguage, 1, voiceResponse());
  const found = await findPin(deps.db, number, params.Digits ?? '');
  if (!found) {
    if (step.attempt >= MAX_ATTEMPTS) return goodbye(promptLanguage, 'too_many_pins');
    return pinPrompt(deps, number, promptLanguage, step.attempt + 1, say(voiceResponse(), promptLanguage, 'wrong_pin'));
  }
  let call = await findCallById(deps.db, found.callId);
  const language = (call && languageOf(call, found.side)) ?? promptLanguage;
  if (!call || call.status !== 'open' || (await putThroughAlready(deps, params))) return goodbye(language, 'call_ended');
  const refusal = await cannotStart(deps, { orgId: call.org_id, mode: call.mode });
  if (refusal) return goodbye(language, refusal);
  if (!isReady(call)) {
    // The customer's language is still open: the caller is taken to speak the language they were asked in.
    if (found.side !== 'customer') return goodbye(language, 'unavailable');
    call = await updateSideSettings(deps, call, 'customer', { language: promptLanguage });
  }
  const token = await putThrough(deps, call, found.side, params);
  return connect(deps, language, call, found.side, token);
}

function pinPrompt(deps: InboundDeps, number: PhoneNumberRow, language: string, attempt: number, response: VoiceResponse) {
  const gather = response.gather({
    input: ['dtmf'],
    numDigits: PIN_DIGITS,
    finishOnKey: '#',
    timeout: GATHER_TIMEOUT_SECONDS,
    action: voiceStepUrl(deps.config.publicBaseUrl, number.id, { at: 'pin', attempt }),
    method: 'POST',
    actionOnEmptyResult: true,
  });
  const spoken = phrase(language, 'pin_prompt');
  sayIn(gather, spoken.say, spoken.text);
  return response;
}

// ---- both ----------------------------------------------------------------------------------------

const requiredCallSid = (params: VoiceParams) => {
  if (!params.CallSid) throw errors.badRequest('CallSid missing');
  return params.CallSid;
};

/**
 * Records the caller as a phone leg of the side, with the single-use token its media stream will
 * present (the Twilio transport admits it as a dialled leg's); an older phone of the side is hung up.
 */
async function putThrough(deps: InboundDeps, call: CallRow, side: Side, params: VoiceParams): Promise<string> {
  const token = newSecret('pst_');
  const replaced = await recordLeg(deps.db, {
    legId: newId('leg'),
    call,
    side,
    to: params.From || 'anonymous',
    sid: requiredCallSid(params),
    token,
    direction: 'inbound',
  });
  await hangUpLegs(deps, replaced);
  return token;
}

function connect(deps: InboundDeps, language: string, call: CallRow, side: Side, token: string) {
  const response = say(voiceResponse(), language, 'connecting');
  return connectStream(response, twilioStreamUrl(deps.config.publicBaseUrl, call.id, side), token);
}

/**
 * The number's status callback ("Call status changes" at Twilio): signed like its Voice webhook (403
 * otherwise, also for an unknown number); the caller's leg moves on as a dialled leg does
 * (`call.phone.completed` when the caller hangs up). A call never put through has no leg: nothing to do.
 */
export async function applyInboundStatus(deps: TelephonyDeps, numberId: string, signature: string, params: Record<string, string>): Promise<void> {
  const number = await findPhoneNumberById(deps.db, numberId);
  const found = number && (await twilioAccountOf(deps, number.org_id));
  if (!number || !found || !validTwilioSignature(found.account.authToken, signature, inboundStatusUrl(deps.config.publicBaseUrl, number.id), params)) {
    throw errors.invalidTwilioSignature();
  }
  const leg = params.CallSid
    ? await deps.db<PhoneLegRow>('phone_legs').where({ twilio_call_sid: params.CallSid, org_id: number.org_id, direction: 'inbound' }).first()
    : undefined;
  if (leg) await advanceLeg(deps, leg, params.CallStatus ?? '');
}
