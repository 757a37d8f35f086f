import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName } from '../support/databases.js';
import { startDeepLStandIn, type DeepLStandIn } from '../support/standins/deeplStandIn.js';
import {
  DEFAULT_TRANSCRIPT,
  startOpenAiTranscriptionStandIn,
  type OpenAiTranscriptionStandIn,
} from '../support/standins/openaiTranscriptionStandIn.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

const fixture = (name: string) => readFile(path.join(import.meta.dirname, '../fixtures/audio', name));

describe(`voice messages (${backendName})`, () => {
  let t: TestServer;
  let transcription: OpenAiTranscriptionStandIn;
  let deepl: DeepLStandIn;
  let testKey: string;
  let liveKey: string;
  let liveOrg: string;

  beforeAll(async () => {
    transcription = await startOpenAiTranscriptionStandIn({ apiKey: 'sk-voice' });
    deepl = await startDeepLStandIn({ apiKey: 'deepl-voice' });
    t = await startTestServer({
      OPENAI_API_KEY: 'sk-voice',
      OPENAI_BASE_URL: transcription.baseUrl,
      TRANSLATION_ENGINE: 'deepl',
      DEEPL_API_KEY: 'deepl-voice',
      DEEPL_BASE_URL: deepl.url,
    });
    const testOrg = await t.createOrg();
    testKey = (await t.createKey(testOrg, 'test')).key;
    liveOrg = await t.createOrg({ balance: 1, voice_rate_per_minute: 0.6 });
    liveKey = (await t.createKey(liveOrg, 'live')).key;
  });
  afterAll(async () => {
    await t?.stop();
    await transcription?.close();
    await deepl?.close();
  });

  const createSession = async (key: string, body: Record<string, unknown> = {}) => {
    const res = await fetch(`${t.url}/v1/sessions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ agent_language: 'en', customer_language: 'fi', ...body }),
    });
    return res.json();
  };
  const upload = (key: string, sessionId: string, file: Buffer, name: string, type: string, sender = 'customer') => {
    const form = new FormData();
    form.append('audio', new Blob([new Uint8Array(file)], { type }), name);
    form.append('sender', sender);
    return fetch(`${t.url}/v1/sessions/${sessionId}/voice`, { method: 'POST', headers: { Authorization: `Bearer ${key}` }, body: form });
  };

  it.each([
    ['chromium-opus.webm', 'audio/webm;codecs=opus', 'audio/webm'],
    ['chromium-opus.mp4', 'audio/mp4', 'audio/mp4'],
    ['speech-3s.ogg', 'audio/ogg', 'audio/ogg'],
    ['speech-3s-vbr.mp3', 'audio/mpeg', 'audio/mpeg'],
    ['speech-3s.wav', 'audio/wav', 'audio/wav'],
    ['speech-3s.m4a', 'audio/mp4', 'audio/mp4'],
  ])('test mode: %s gets a placeholder transcript, its measured length, and plays back for both sides', async (name, type, stored) => {
    const session = await createSession(testKey);
    const chatKey = session.customer_url.split('#k=')[1];
    const file = await fixture(name);
    const res = await upload(testKey, session.id, file, name, type);
    expect(res.status).toBe(201);
    const message = await res.json();
    expect(message).toMatchObject({ kind: 'voice', sender: 'customer', text: '[voice message]', customer_text: '[voice message]' });
    expect(message.duration_seconds).toBeGreaterThan(2.8);
    expect(message.duration_seconds).toBeLessThan(3.2);
    expect(message.audio_url).toBe(`/v1/sessions/${session.id}/messages/${message.id}/audio`);

    const agentAudio = await fetch(`${t.url}${message.audio_url}`, { headers: { Authorization: `Bearer ${testKey}` } });
    expect(agentAudio.status).toBe(200);
    expect(agentAudio.headers.get('content-type')).toContain(stored);
    expect(Buffer.from(await agentAudio.arrayBuffer()).equals(file)).toBe(true);
    const customerAudio = await fetch(`${t.url}/chat/public/${session.id}/messages/${message.id}/audio`, { headers: { 'X-Chat-Key': chatKey } });
    expect(Buffer.from(await customerAudio.arrayBuffer()).equals(file)).toBe(true);
    const list = await (await fetch(`${t.url}/chat/public/${session.id}/messages`, { headers: { 'X-Chat-Key': chatKey } })).json();
    expect(list.messages[0].audio_url).toBe(`/chat/public/${session.id}/messages/${message.id}/audio`);
    expect(list.messages[0].duration_seconds).toBe(message.duration_seconds);
    const agentList = await (await fetch(`${t.url}/v1/sessions/${session.id}/messages`, { headers: { Authorization: `Bearer ${testKey}` } })).json();
    expect(agentList.messages).toEqual([message]);
    expect(await t.server.app.db('ledger_entries').where({ kind: 'voice_message' })).toHaveLength(0);
  });

  it.each([
    ['long-125s.webm', 'audio/webm', 'audio_too_long'],
    ['not-audio.mp3', 'audio/mpeg', 'audio_unsupported'],
    ['truncated.m4a', 'audio/mp4', 'audio_broken'],
    ['empty.wav', 'audio/wav', 'audio_empty'],
  ])('refuses %s with 422 and stores nothing', async (name, type, problem) => {
    const session = await createSession(testKey);
    const res = await upload(testKey, session.id, await fixture(name), name, type);
    expect(res.status).toBe(422);
    expect((await res.json()).detail[0]).toMatchObject({ loc: ['body', 'audio'], type: problem });
    expect(await t.server.app.db('messages').where({ session_id: session.id })).toHaveLength(0);
  });

  it('answers a recording as its bytes, privately cacheable, and HEAD with the same headers; a text message has none', async () => {
    const session = await createSession(testKey);
    const chatKey = session.customer_url.split('#k=')[1];
    const file = await fixture('speech-3s.wav');
    const message = await (await upload(testKey, session.id, file, 'speech-3s.wav', 'audio/wav')).json();
    const answers = [
      [`/v1/sessions/${session.id}/messages/${message.id}/audio`, { Authorization: `Bearer ${testKey}` }],
      [`/chat/public/${session.id}/messages/${message.id}/audio`, { 'X-Chat-Key': chatKey }],
    ] as const;
    for (const [audioPath, headers] of answers) {
      for (const method of ['GET', 'HEAD']) {
        const res = await fetch(`${t.url}${audioPath}`, { method, headers });
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toBe('audio/wav');
        expect(res.headers.get('cache-control')).toBe('private, max-age=3600');
        expect(res.headers.get('content-length')).toBe(String(file.length));
        const body = Buffer.from(await res.arrayBuffer());
        expect(body.equals(method === 'GET' ? file : Buffer.alloc(0))).toBe(true);
      }
    }
    const publicAnswer = await fetch(`${t.url}${answers[1][0]}`, { headers: answers[1][1] });
    expect(publicAnswer.headers.get('access-control-allow-origin')).toBe('*');

    const text = await fetch(`${t.url}/v1/sessions/${session.id}/messages`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${testKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ sender: 'agent', text: 'hello' }),
    });
    const textAudio = await fetch(`${t.url}/v1/sessions/${session.id}/messages/${(await text.json()).id}/audio`, {
      headers: { Authorization: `Bearer ${testKey}` },
    });
    expect(textAudio.status).toBe(404);
    expect(textAudio.headers.get('content-type')).toContain('application/json');
    expect((await textAudio.json()).detail).toMatch(/recording/);
  });

  it('refuses a file over 10 MB with 413, and a missing file or sender with 422', async () => {
    const session = await createSession(testKey);
    expect((await upload(testKey, session.id, Buffer.alloc(10 * 1024 * 1024 + 1), 'big.wav', 'audio/wav')).status).toBe(413);
    const form = new FormData();
    form.append('sender', 'agent');
    const missing = await fetch(`${t.url}/v1/sessions/${session.id}/voice`, { method: 'POST', headers: { Authorization: `Bearer ${testKey}` }, body: form });
    expect(missing.status).toBe(422);
    const noSender = new FormData();
    noSender.append('audio', new Blob([new Uint8Array(await fixture('speech-3s.wav'))]), 'a.wav');
    const res = await fetch(`${t.url}/v1/sessions/${session.id}/voice`, { method: 'POST', headers: { Authorization: `Bearer ${testKey}` }, body: noSender });
    expect(res.status).toBe(422);
  });

  it('live mode: transcribes through OpenAI, translates for the agents, bills the seconds', async () => {
    const session = await createSession(liveKey);
    transcription.reset();
    const file = await fixture('chromium-opus.webm');
    const res = await upload(liveKey, session.id, file, 'note.webm', 'audio/webm');
    expect(res.status).toBe(201);
    const message = await res.json();
    expect(message).toMatchObject({ kind: 'voice', text: 'Hei, tämä on ääniviesti.', language: 'fi', customer_text: 'Hei, tämä on ääniviesti.' });
    expect(message.agent_text).toBe('en-US:Hei, tämä on ääniviesti.'); // DeepL's stand-in echoes the target it was sent
    expect(transcription.requests).toHaveLength(1);
    expect(transcription.requests[0].file?.data.equals(file)).toBe(true);
    const voiceCharges = await t.server.app.db('ledger_entries').where({ org_id: liveOrg, kind: 'voice_message' });
    expect(voiceCharges).toHaveLength(1);
    expect(voiceCharges[0].quantity).toBe(3); // 3.0 s, billed per started second
    expect(voiceCharges[0].amount_micros).toBe(-30_000); // 0.6 per minute = 0.01 per second
  });

  it('live mode: a failing transcription engine is 502 and bills nothing', async () => {
    const session = await createSession(liveKey);
    transcription.failNext(5, 503);
    const before = await t.server.app.db('ledger_entries').where({ org_id: liveOrg }).count({ n: '*' }).first();
    const res = await upload(liveKey, session.id, await fixture('speech-3s.wav'), 'a.wav', 'audio/wav');
    expect(res.status).toBe(502);
    const after = await t.server.app.db('ledger_entries').where({ org_id: liveOrg }).count({ n: '*' }).first();
    expect(Number(after!.n)).toBe(Number(before!.n));
    transcription.reset();
  });

  const moneyOf = async (orgId: string) => {
    const org = await t.server.app.db('organizations').where({ id: orgId }).first();
    const ledger = await t.server.app.db('ledger_entries').where({ org_id: orgId });
    return { balance: org.balance_micros, held: org.held_micros, ledgerRows: ledger.length };
  };

  it('live mode: a session closed while its recording is transcribed gets 409 and pays nothing', async () => {
    const session = await createSession(liveKey);
    const before = await moneyOf(liveOrg);
    const held = transcription.holdNext();
    const posting = upload(liveKey, session.id, await fixture('speech-3s.wav'), 'a.wav', 'audio/wav');
    await held.arrived;
    const seconds = await moneyOf(liveOrg);
    expect(seconds.held).toBe(31_500); // 3 s and their transcript's translation (75 characters) held while the engine works
    const close = await fetch(`${t.url}/v1/sessions/${session.id}/close`, { method: 'POST', headers: { Authorization: `Bearer ${liveKey}` } });
    expect(close.status).toBe(200);
    held.release();
    const res = await posting;
    expect(res.status).toBe(409);
    expect(await moneyOf(liveOrg)).toEqual(before);
    expect(await t.server.app.db('messages').where({ session_id: session.id })).toHaveLength(0);
  });

  it('live mode: a recording the available balance cannot pay for is refused (402) before it is transcribed', async () => {
    const orgId = await t.createOrg({ balance: 0.02, voice_rate_per_minute: 0.6 }); // 3 s cost 0.03
    const { key } = await t.createKey(orgId, 'live');
    const session = await createSession(key);
    transcription.reset();
    const res = await upload(key, session.id, await fixture('speech-3s.wav'), 'a.wav', 'audio/wav');
    expect(res.status).toBe(402);
    // The seconds (0.03) and their transcript's translation (75 characters, 0.0015) are held together.
    expect((await res.json()).detail).toMatch(/costs 0\.031500 EUR and the prepaid balance has 0\.020000 EUR available/);
    expect(transcription.requests).toHaveLength(0);
    expect(await moneyOf(orgId)).toEqual({ balance: 20_000, held: 0, ledgerRows: 1 });
  });

  it('live mode: a recording holds its translation with its seconds; a cached translation frees that hold', async () => {
    // The transcript's translation is in the cache from a message of another organization.
    const rich = await createSession(liveKey);
    const warm = await fetch(`${t.url}/v1/sessions/${rich.id}/messages`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${liveKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ sender: 'customer', text: 'Hei, tämä on ääniviesti.', language: 'fi' }),
    });
    expect(warm.status).toBe(201);
    // 3 s cost 0.03; their transcript's translation is held at 75 characters (0.0015): all of the balance.
    const orgId = await t.createOrg({ balance: 0.0315, voice_rate_per_minute: 0.6 });
    const { key } = await t.createKey(orgId, 'live');
    const session = await createSession(key);
    transcription.reset();
    const res = await upload(key, session.id, await fixture('speech-3s.wav'), 'a.wav', 'audio/wav');
    expect(res.status).toBe(201);
    expect((await res.json()).agent_text).toBe('en-US:Hei, tämä on ääniviesti.');
    // The seconds are charged; the translation came from the cache, so its allowance is freed unspent.
    expect(await moneyOf(orgId)).toEqual({ balance: 1_500, held: 0, ledgerRows: 2 });
  });

  it('the customer can post a voice message from the page endpoint', async () => {
    const session = await createSession(testKey);
    const chatKey = session.customer_url.split('#k=')[1];
    const form = new FormData();
    form.append('audio', new Blob([new Uint8Array(await fixture('chromium-opus-abrupt.webm'))], { type: 'audio/webm' }), 'rec.webm');
    const res = await fetch(`${t.url}/chat/public/${session.id}/voice`, { method: 'POST', headers: { 'X-Chat-Key': chatKey }, body: form });
    expect(res.status).toBe(201);
    const message = await res.json();
    expect(message).toMatchObject({ kind: 'voice', sender: 'customer' });
    expect(message.audio_url).toBe(`/chat/public/${session.id}/messages/${message.id}/audio`);
  });

  it("the customer's voice message carries the page's language: a short recording is taken to be in it, and the session learns it", async () => {
    const orgId = await t.createOrg({ balance: 1, voice_rate_per_minute: 0.6 });
    const key = (await t.createKey(orgId, 'live')).key;
    const chatUpload = async (session: { id: string; customer_url: string }, hint?: string) => {
      const form = new FormData();
      form.append('audio', new Blob([new Uint8Array(await fixture('chromium-opus.webm'))], { type: 'audio/webm' }), 'rec.webm');
      if (hint !== undefined) form.append('language_hint', hint);
      const chatKey = session.customer_url.split('#k=')[1];
      return fetch(`${t.url}/chat/public/${session.id}/voice`, { method: 'POST', headers: { 'X-Chat-Key': chatKey }, body: form });
    };
    // gpt-4o-mini-transcribe answers the text alone, and "Hola" is too short to tell its language from.
    transcription.reset();
    transcription.setTranscript({ text: 'Hola', language: 'spanish' });
    try {
      const session = await createSession(key, { customer_language: null });
      const res = await chatUpload(session, 'es-ES');
      expect(res.status).toBe(201);
      expect(await res.json()).toMatchObject({ kind: 'voice', text: 'Hola', language: 'es-ES', agent_text: 'en-US:Hola' });
      // Only a fallback: the transcription is not told to hear Spanish.
      expect(transcription.requests.at(-1)!.fields.language).toBeUndefined();
      const learned = await fetch(`${t.url}/v1/sessions/${session.id}`, { headers: { Authorization: `Bearer ${key}` } });
      expect((await learned.json()).customer_language).toBe('es-ES');

      // Never over the session's own language.
      const known = await createSession(key, { customer_language: 'pt' });
      expect(await (await chatUpload(known, 'es')).json()).toMatchObject({ language: 'pt' });
      // A hint that is no language tag is refused before anything is transcribed.
      const before = transcription.requests.length;
      const refused = await chatUpload(known, 'Spanish please');
      expect(refused.status).toBe(422);
      expect((await refused.json()).detail[0].loc).toEqual(['body', 'language_hint']);
      expect(transcription.requests).toHaveLength(before);
    } finally {
      transcription.setTranscript(DEFAULT_TRANSCRIPT);
    }
  });
});
