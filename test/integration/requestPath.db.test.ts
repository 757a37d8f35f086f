// The request path after its per-request costs were cut (each operation's contract match taken once):
// what a client sees must not change.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

describe(`the request path (${backendName})`, () => {
  let t: TestServer;
  let key: string;

  beforeAll(async () => {
    t = await startTestServer();
    key = (await t.createKey(await t.createOrg(), 'test')).key;
  });
  afterAll(() => t?.stop());

  const auth = () => ({ Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' });

  it('validates every request of an operation, each against its own path parameters, not only the first', async () => {
    const sessions = await Promise.all(
      [0, 1].map(async () => {
        const res = await fetch(`${t.url}/v1/sessions`, { method: 'POST', headers: auth(), body: JSON.stringify({ agent_language: 'en' }) });
        expect(res.status).toBe(201);
        return (await res.json()).id as string;
      }),
    );
    for (const id of sessions) {
      const posted = await fetch(`${t.url}/v1/sessions/${id}/messages`, { method: 'POST', headers: auth(), body: JSON.stringify({ sender: 'agent', text: `to ${id}` }) });
      expect(posted.status).toBe(201);
      const listed = await fetch(`${t.url}/v1/sessions/${id}/messages?after=0`, { headers: auth() });
      expect((await listed.json()).messages.map((m: { text: string }) => m.text)).toEqual([`to ${id}`]);
      for (let i = 0; i < 2; i++) {
        const bad = await fetch(`${t.url}/v1/sessions/${id}/messages?limit=0`, { headers: auth() });
        expect(bad.status).toBe(422);
        expect((await bad.json()).detail).toEqual([expect.objectContaining({ loc: ['query', 'limit'] })]);
      }
      const badBody = await fetch(`${t.url}/v1/sessions/${id}/messages`, { method: 'POST', headers: auth(), body: JSON.stringify({ sender: 'nobody', text: 5 }) });
      expect(badBody.status).toBe(422);
      expect((await badBody.json()).detail.map((issue: { loc: unknown[] }) => issue.loc)).toEqual(expect.arrayContaining([['body', 'sender'], ['body', 'text']]));
    }
  });
});
