// A page of messages is answered from the messages this process presented before when the database says
// the page holds exactly those (src/sessions/messagePages.ts). What a client reads must not tell the two
// apart: the same bytes as a page read from the rows, each side with its own audio paths, erased
// messages gone, and nothing of a session answered to anyone but its owner.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentAudioPath } from '../../src/sessions/messages.js';
import { KEPT_BYTES_PER_VIEW, messageKey, pageKey, PresentedMessages } from '../../src/sessions/presentedMessages.js';
import { eraseExpiredData } from '../../src/sessions/retention.js';
import { backendName } from '../support/databases.js';
import { countQueries } from '../support/queryCounter.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

describe(`pages of messages from what was presented before (${backendName})`, () => {
  let t: TestServer;
  let key: string;
  let otherKey: string;
  beforeAll(async () => {
    // As in production: answers written as the service made them, not re-serialised for the response validator.
    t = await startTestServer({ VALIDATE_RESPONSES: 'false', INSTANCE_HEARTBEAT_MS: '600000', WEBHOOK_POLL_INTERVAL_MS: '600000' });
    key = (await t.createKey(await t.createOrg(), 'test')).key;
    otherKey = (await t.createKey(await t.createOrg(), 'test')).key;
  });
  afterAll(() => t?.stop());

  const api = async (method: string, url: string, body?: unknown, apiKey = key) => {
    const res = await fetch(`${t.url}${url}`, {
      method,
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
  };
  const chat = async (url: string, chatKey: string) => (await fetch(`${t.url}/chat/public${url}`, { headers: { 'X-Chat-Key': chatKey } })).text();
  /** A session with two text messages and a voice message. */
  const sessionWithMessages = async (settings: Record<string, unknown> = {}) => {
    const session = JSON.parse((await api('POST', '/v1/sessions', { agent_language: 'en', customer_language: 'fi', ...settings })).text);
    const posted = [];
    for (const body of [
      { sender: 'agent', text: 'Where is my order?' },
      { sender: 'customer', text: 'Hei, tilaukseni on myöhässä.' },
    ]) {
      posted.push(JSON.parse((await api('POST', `/v1/sessions/${session.id}/messages`, body)).text));
    }
    const form = new FormData();
    const wav = await readFile(path.join(import.meta.dirname, '../fixtures/audio/speech-3s.wav'));
    form.append('audio', new Blob([new Uint8Array(wav)], { type: 'audio/wav' }), 'speech.wav');
    form.append('sender', 'customer');
    const voice = await fetch(`${t.url}/v1/sessions/${session.id}/voice`, { method: 'POST', headers: { Authorization: `Bearer ${key}` }, body: form });
    expect(voice.status).toBe(201);
    posted.push(await voice.json());
    return { session, chatKey: session.customer_url.split('#k=')[1] as string, posted };
  };

  it('answers a page from kept messages with the bytes of the page read from the rows', async () => {
    const { session, posted } = await sessionWithMessages();
    const fromRows = await api('GET', `/v1/sessions/${session.id}/messages`);
    expect(fromRows.status).toBe(200);
    expect(fromRows.type).toBe('application/json; charset=utf-8');
    expect(JSON.parse(fromRows.text)).toEqual({ messages: posted, cursor: posted[2].id });
    expect(fromRows.text).toBe(JSON.stringify({ messages: posted, cursor: posted[2].id }));

    const queries = countQueries(t.server.app.db);
    let again: Awaited<ReturnType<typeof api>> | undefined;
    const sent = await queries.during(async () => (again = await api('GET', `/v1/sessions/${session.id}/messages`)));
    expect(sent).toHaveLength(1); // the page's ids only
    expect(again!.text).toBe(fromRows.text);
    // HEAD: the headers of the same answer, without its body.
    const head = await fetch(`${t.url}/v1/sessions/${session.id}/messages`, { method: 'HEAD', headers: { Authorization: `Bearer ${key}` } });
    expect([head.status, head.headers.get('content-type'), await head.text()]).toEqual([200, 'application/json; charset=utf-8', '']);
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(fromRows.text)));
    // Each kept message has its own memory: none holds a shared slab alive beyond the cache's bound.
    for (const message of posted) {
      const kept = t.server.app.presentedMessages.view(agentAudioPath).messages.get(messageKey(session.id, message.id))!;
      expect(kept.toString()).toBe(JSON.stringify(message));
      expect(kept.buffer.byteLength).toBe(kept.length);
    }
    // The page is kept as answered, in memory of its own, and answered again only while its messages are the same.
    const page = t.server.app.presentedMessages.view(agentAudioPath).pages.get(pageKey(session.id, 0, 100))!;
    expect(page.bytes.toString()).toBe(fromRows.text);
    expect(page.bytes.buffer.byteLength).toBe(page.bytes.length);
    const newer = JSON.parse((await api('POST', `/v1/sessions/${session.id}/messages`, { sender: 'agent', text: 'It ships today.' })).text);
    const withNewer = await api('GET', `/v1/sessions/${session.id}/messages`);
    expect(withNewer.text).toBe(JSON.stringify({ messages: [...posted, newer], cursor: newer.id }));
    // And after a cursor, with a limit.
    const tail = await api('GET', `/v1/sessions/${session.id}/messages?after=${posted[0].id}&limit=1`);
    expect(JSON.parse(tail.text)).toEqual({ messages: [posted[1]], cursor: posted[1].id });
    const nothingNew = await api('GET', `/v1/sessions/${session.id}/messages?after=${newer.id}`);
    expect(JSON.parse(nothingNew.text)).toEqual({ messages: [], cursor: newer.id });
  });

  it("keeps each side's view apart: the customer's audio paths are the chat's", async () => {
    const { session, chatKey, posted } = await sessionWithMessages();
    await api('GET', `/v1/sessions/${session.id}/messages`); // the agent's view is kept
    const customer = JSON.parse(await chat(`/${session.id}/messages`, chatKey));
    expect(customer.messages[2].audio_url).toBe(`/chat/public/${session.id}/messages/${posted[2].id}/audio`);
    expect(customer.messages.map((m: { id: number }) => m.id)).toEqual(posted.map((m) => m.id));
    const customerAgain = JSON.parse(await chat(`/${session.id}/messages`, chatKey));
    expect(customerAgain).toEqual(customer);
    const agent = JSON.parse((await api('GET', `/v1/sessions/${session.id}/messages`)).text);
    expect(agent.messages[2].audio_url).toBe(`/v1/sessions/${session.id}/messages/${posted[2].id}/audio`);
  });

  it('never answers an erased message again, though it was kept', async () => {
    const { session, posted } = await sessionWithMessages({ retention_days: 1 });
    await api('GET', `/v1/sessions/${session.id}/messages`);
    const db = t.server.app.db;
    await db('messages').where({ id: posted[0].id }).update({ created_at: new Date(Date.now() - 2 * 86_400_000) });
    await eraseExpiredData(db);
    const page = JSON.parse((await api('GET', `/v1/sessions/${session.id}/messages`)).text);
    expect(page).toEqual({ messages: posted.slice(1), cursor: posted[2].id });

    expect((await api('DELETE', `/v1/sessions/${session.id}`)).status).toBe(204);
    expect((await api('GET', `/v1/sessions/${session.id}/messages`)).status).toBe(404);
  });

  it("answers kept messages to no one but the session's owner", async () => {
    const { session } = await sessionWithMessages();
    await api('GET', `/v1/sessions/${session.id}/messages`);
    const stranger = await api('GET', `/v1/sessions/${session.id}/messages`, undefined, otherKey);
    expect(stranger.status).toBe(404);
    expect(stranger.text).not.toContain('Where is my order?');
  });

  it('keeps at most its bound of text per side, of messages and of pages', () => {
    const { messages, pages } = new PresentedMessages().view(() => '');
    const text = Buffer.from(JSON.stringify({ text: 'x'.repeat(1024 * 1024) }));
    for (let id = 1; id <= 20; id++) messages.set(`ses_1/${id}`, text);
    expect(messages.calculatedSize).toBeLessThanOrEqual(KEPT_BYTES_PER_VIEW);
    expect(messages.get('ses_1/20')).toBe(text);
    expect(messages.get('ses_1/1')).toBeUndefined();
    for (let after = 1; after <= 20; after++) pages.set(`ses_1/${after}/1`, { ids: [after + 1], bytes: text });
    expect(pages.calculatedSize).toBeLessThanOrEqual(KEPT_BYTES_PER_VIEW);
    expect(pages.get('ses_1/1/1')).toBeUndefined();
  });
});
